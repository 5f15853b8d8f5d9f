import { call } from '../api.js';
import { link } from '../router.js';
import { interval, percent, rateColour, time, variantKey, variantLabel, wilson } from '../format.js';
import { Breadcrumbs, Code, Facts, html, Loaded, Title, useLoad } from '../ui.js';
import { sourceText } from './run.js';

/** The organization's suites, most recently run first. */
export function SuitesPage() {
  const load = useLoad(() => call('evals.suites.list', { limit: 100 }), []);
  return html`
    <${Title} sub="Most recently run first.">Suites</${Title}>
    <${Loaded} load=${load} what="the suites">
      ${(data) =>
        html`<table class="list" id="suites-table">
            <caption class="visually-hidden">
              Suites
            </caption>
            <thead>
              <tr>
                <th scope="col">Suite</th>
                <th scope="col">Cases</th>
                <th scope="col">Variants</th>
                <th scope="col">Passed / scored (newest runs)</th>
                <th scope="col">Pass rate</th>
                <th scope="col">Last run</th>
              </tr>
            </thead>
            <tbody>
              ${data.suites.map(
                (s) =>
                  html`<tr>
                    <th scope="row"><a href=${link.suite(s.id)}>${s.name}</a></th>
                    <td class="num">${s.cases}</td>
                    <td class="num">${s.variants}</td>
                    <td class="num">${s.tally.passed} / ${s.tally.scored}</td>
                    <td class="num">${percent(s.tally.scored ? s.tally.passed / s.tally.scored : null)}</td>
                    <td>${time(s.lastRunAt)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
          ${data.suites.length === 0 ? html`<p>No suite has run yet.</p>` : null}`}
    </${Loaded}>
  `;
}

/** A suite: its variants side by side over the newest run of each case, with Wilson 95% intervals. */
export function SuitePage({ id }) {
  const load = useLoad(async () => {
    const [suite, cases] = await Promise.all([call('evals.suites.get', { id }), allCases(id)]);
    return { suite, cases };
  }, [id]);
  return html`<${Loaded} load=${load} what="the suite">
    ${({ suite, cases }) => {
      const compared = compare(cases);
      return html`
        <${Breadcrumbs} items=${[['Suites', link.suites()], [suite.name]]} />
        <${Title} sub=${`Suite ${suite.id} · ${suite.cases} cases · ${suite.variants} variants · last run ${time(suite.lastRunAt)}`}>${suite.name}</${Title}>
        <p><a href=${link.analytics(suite.id)} id="suite-analytics">Analytics of this suite</a>: pass rate over time, flaky cases, and two batches compared.</p>
        <h2>Variants compared</h2>
        <p class="hint">Each variant's trials over the newest run of every case it ran. The interval is where the true pass rate lies with 95% confidence (Wilson): intervals that overlap do not show a winner.</p>
        ${compared.length === 0 ? html`<p>No variant of this suite has run yet.</p>` : null}
        <table class="list" id="suite-variants" hidden=${compared.length === 0}>
          <caption class="visually-hidden">Variants compared</caption>
          <thead><tr><th scope="col">Variant</th><th scope="col">Cases run</th><th scope="col">Passed / scored</th><th scope="col">Pass rate</th><th scope="col">Wilson 95% interval</th><th scope="col">Interval</th></tr></thead>
          <tbody>${compared.map(
            (row) =>
              html`<tr>
                <th scope="row">${variantLabel(row.variant)}</th>
                <td class="num">${row.cases}</td>
                <td class="num">${row.passed} / ${row.scored}</td>
                <td class="num">${percent(row.scored ? row.passed / row.scored : null)}</td>
                <td class="num">${interval(row.wilson)}</td>
                <td class="interval-cell"><${IntervalBar} row=${row} /></td>
              </tr>`,
          )}</tbody>
        </table>
        <h2>Cases</h2>
        <${CaseGrid} cases=${cases} variants=${compared.map((r) => r.variant)} />
        <h2>Set-up</h2>
        <${Facts} label="Suite set-up" items=${[
          ['Workspace', suite.setup ? sourceText(suite.setup.source) : '—'],
          ['Tags', suite.tags.join(', ') || null],
        ]} />
        ${suite.setup?.prompt ? html`<h3>Prompt</h3><${Code} label="Suite prompt">${suite.setup.prompt}</${Code}>` : null}
      `;
    }}
  </${Loaded}>`;
}

async function allCases(suite) {
  const cases = [];
  let cursor;
  for (let page = 0; page < 20; page++) {
    const answer = await call('evals.cases.list', { suite, limit: 100, ...(cursor ? { cursor } : {}) });
    cases.push(...answer.cases);
    cursor = answer.next;
    if (!cursor) break;
  }
  return cases;
}

function compare(cases) {
  const rows = new Map();
  for (const c of cases) {
    for (const v of c.variants) {
      const row = rows.get(variantKey(v.variant)) ?? { variant: v.variant, cases: 0, passed: 0, scored: 0 };
      if (v.distribution) {
        row.cases += 1;
        row.passed += v.distribution.passed;
        row.scored += v.distribution.scored;
      }
      rows.set(variantKey(v.variant), row);
    }
  }
  return [...rows.values()]
    .map((row) => ({ ...row, wilson: wilson(row.passed, row.scored) }))
    .sort((a, b) => (b.scored ? b.passed / b.scored : -1) - (a.scored ? a.passed / a.scored : -1));
}

/** The interval drawn on a 0–100% scale, the point estimate marked; the numbers are in the cell before. */
function IntervalBar({ row }) {
  if (!row.wilson) return html`<span class="hint">no score</span>`;
  const rate = row.passed / row.scored;
  return html`<div class="interval" aria-hidden="true">
    <span class="range" style=${{ left: `${row.wilson.low * 100}%`, width: `${(row.wilson.high - row.wilson.low) * 100}%` }}></span>
    <span class="point" style=${{ left: `${rate * 100}%` }}></span>
  </div>`;
}

function CaseGrid({ cases, variants }) {
  if (cases.length === 0) return html`<p id="suite-cases-empty">No case of this suite has run yet: a batch started with this suite fills this grid.</p>`;
  return html`<div class="grid-wrap">
    <table class="grid" id="suite-cases">
      <caption>
        Newest run of each case on each variant
      </caption>
      <thead>
        <tr>
          <th scope="col">Case</th>
          ${variants.map((v) => html`<th scope="col">${variantLabel(v)}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${cases.map((c) => {
          const byVariant = new Map(c.variants.map((v) => [variantKey(v.variant), v]));
          return html`<tr>
            <th scope="row"><a href=${link.case(c.id)}>${c.name}</a></th>
            ${variants.map((variant) => {
              const v = byVariant.get(variantKey(variant));
              if (!v?.lastRunId) return html`<td class="cell empty">not run</td>`;
              return html`<td class="cell" style=${{ background: rateColour(v.distribution?.passRate) }}>
                <a href=${link.run(v.lastRunId)}
                  ><span class="rate">${percent(v.distribution?.passRate)}</span>
                  <span class="detail">${v.distribution?.passed ?? 0}/${v.distribution?.scored ?? 0}</span></a
                >
              </td>`;
            })}
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}
