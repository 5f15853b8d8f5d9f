import { useEffect, useMemo, useState } from 'preact/hooks';
import { call } from '../api.js';
import { watchBatch } from '../live.js';
import { link } from '../router.js';
import { between, percent, rateColour, time, trialCounts, usd, variantKey, variantLabels } from '../format.js';
import { Breadcrumbs, Facts, html, Loaded, Status, Title, useLoad } from '../ui.js';

/** A batch: its runs as a grid of cases × variants coloured by pass rate, live while it runs. */
export function BatchPage({ id }) {
  const load = useLoad(() => call('evals.batches.get', { id }), [id]);
  const running = load.data?.status === 'running';
  const [mode, setMode] = useState(null);

  useEffect(() => {
    if (!running) return undefined;
    const watcher = watchBatch(id, () => void load.reload());
    const shown = setInterval(() => setMode(watcher.mode()), 500);
    return () => {
      clearInterval(shown);
      watcher.stop();
      setMode(null);
    };
  }, [id, running, load.reload]);

  return html`
    <${Breadcrumbs} items=${[['Batches', link.batches()], [id]]} />
    ${(() => {
      // The suite a batch ran, as its runs record it; the id is secondary.
      const suite = load.data?.runs?.[0]?.suite ?? null;
      return suite
        ? html`<${Title} sub=${`batch ${id} · suite ${suite.id}`}>${suite.name}</${Title}>`
        : html`<${Title}>Batch ${id}</${Title}>`;
    })()}
    <${Loaded} load=${load} what="the batch">${(batch) => html`<${Batch} batch=${batch} live=${running ? mode : null} />`}</${Loaded}>
  `;
}

function Batch({ batch, live }) {
  const counts = useMemo(() => trialCounts(batch.runs), [batch]);
  const scored = counts.passed + counts.failed;
  return html`
    <p class="live" role="status" aria-live="polite" id="batch-status">
      <${Status} status=${batch.status} />
      ${
        batch.status === 'running'
          ? ` · ${counts.passed + counts.failed + counts.void} of ${counts.trials} trials done${live ? ` · updating live (${live === 'stream' ? 'event stream' : live === 'polling' ? 'polling every second' : 'connecting'})` : ''}`
          : ` · ${counts.trials} trials`
      }
    </p>
    ${batch.failure ? html`<p class="failure" role="alert">The batch failed: ${batch.failure}</p>` : null}
    <${Facts}
      label="Batch summary"
      items=${[
        ['Started', time(batch.startedAt)],
        ['Finished', batch.finishedAt ? `${time(batch.finishedAt)} (${between(batch.startedAt, batch.finishedAt)})` : 'not yet'],
        ['Passed', `${counts.passed} of ${scored} scored (${percent(scored ? counts.passed / scored : null)})`],
        ['Failed', counts.failed],
        ['Void', counts.void],
        ['Queued / running', `${counts.queued} / ${counts.running}`],
        ['Known cost', usd(batch.costs?.knownActualUsd)],
        ['Estimated equivalent', usd(batch.costs?.estimatedEquivalentUsd)],
        [
          'Trigger',
          batch.trigger
            ? html`${batch.trigger.source}${batch.trigger.url ? html` · <a href=${batch.trigger.url} rel="noreferrer noopener">${batch.trigger.url}</a>` : null}`
            : null,
        ],
        ['Local', batch.local ? 'yes: run by assay eval --local' : null],
      ]}
    />
    <h2>Runs</h2>
    <${Grid} runs=${batch.runs} />
  `;
}

/** Cases down, variants across; each cell a link to its run, its pass rate as text and as colour. */
function Grid({ runs }) {
  const { cases, variants, cells } = useMemo(() => {
    const cases = new Map();
    const variants = new Map();
    const cells = new Map();
    for (const run of runs) {
      cases.set(run.case.id, run.case);
      variants.set(variantKey(run.variant), run.variant);
      cells.set(`${run.case.id}\u0000${variantKey(run.variant)}`, run);
    }
    const labels = variantLabels([...variants.values()]);
    return { cases: [...cases.values()], variants: [...variants.entries()].map(([key, v], index) => [key, v, labels[index]]), cells };
  }, [runs]);

  return html`<div class="grid-wrap">
    <table class="grid" id="batch-grid">
      <caption>
        Pass rate of each case on each variant (passed / scored trials). Colour goes from red (0%) to green (100%); grey: nothing scored yet; hatched grey: every trial void.
      </caption>
      <thead>
        <tr>
          <th scope="col">Case</th>
          ${variants.map(([, , label]) => html`<th scope="col">${label}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${cases.map(
          (c) =>
            html`<tr>
              <th scope="row"><a href=${link.case(c.id)}>${c.name}</a></th>
              ${variants.map(([key]) => html`<${Cell} run=${cells.get(`${c.id}\u0000${key}`)} />`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function Cell({ run }) {
  if (!run) return html`<td class="cell empty">not run</td>`;
  const d = run.distribution;
  const pending = run.trials.filter((t) => t.status === 'queued' || t.status === 'running').length;
  // Nothing scored but trials voided: the void colour, never a rate's.
  const allVoid = d.scored === 0 && d.voided > 0;
  return html`<td class=${allVoid ? 'cell void' : 'cell'} style=${allVoid ? undefined : { background: rateColour(d.passRate) }}>
    <a href=${link.run(run.id)}>
      <span class="rate">${allVoid ? 'void' : percent(d.passRate)}</span>
      <span class="detail">${d.passed}/${d.scored} passed${d.voided ? ` · ${d.voided} void` : ''}${pending ? ` · ${pending} to go` : ''}</span>
      ${run.status !== 'finished' ? html`<${Status} status=${run.status} />` : null}
    </a>
  </td>`;
}
