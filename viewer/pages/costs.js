import { usd } from '../format.js';
import { html } from '../ui.js';

/** A cost record: the totals kept apart by classification, then each component with its source. */
export function Costs({ costs, label = 'Costs' }) {
  if (!costs) return html`<p>No cost recorded.</p>`;
  const components = [...(costs.components ?? []), ...(costs.laterComponents ?? [])];
  return html` <table class="list">
    <caption>
      ${label}${costs.incomplete ? ' (incomplete: some components have no price)' : ''}
    </caption>
    <thead>
      <tr>
        <th scope="col">Component</th>
        <th scope="col">Classification</th>
        <th scope="col">USD</th>
        <th scope="col">Source</th>
        <th scope="col">Explanation</th>
      </tr>
    </thead>
    <tbody>
      <tr class="total">
        <th scope="row">Known actual</th>
        <td>actual</td>
        <td class="num">${usd(costs.knownActualUsd)}</td>
        <td colspan="2"></td>
      </tr>
      <tr class="total">
        <th scope="row">Allocated</th>
        <td>allocated</td>
        <td class="num">${usd(costs.allocatedUsd)}</td>
        <td colspan="2"></td>
      </tr>
      <tr class="total">
        <th scope="row">Estimated equivalent</th>
        <td>estimate</td>
        <td class="num">${usd(costs.estimatedEquivalentUsd)}</td>
        <td colspan="2"></td>
      </tr>
      ${components.map(
        (c) =>
          html`<tr>
            <th scope="row">${c.component}</th>
            <td>${c.classification}</td>
            <td class="num">${c.usd === null ? 'no price' : usd(c.usd)}</td>
            <td>${c.source}</td>
            <td>${c.explanation}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}
