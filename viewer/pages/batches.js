import { useEffect, useMemo, useState } from 'preact/hooks';
import { call, exported } from '../api.js';
import { link } from '../router.js';
import { between, percent, time, variantLabels } from '../format.js';
import { Counts, html, Loaded, Status, Title, useLoad } from '../ui.js';

const PAGE = 50;
const LIVE_MS = 2000;

/** The organization's batches, newest first: live while any is running, filtered here, and a way to run a case again. */
export function BatchesPage() {
  const [pages, setPages] = useState(1);
  const [suite, setSuite] = useState('');
  const load = useLoad(() => loadPages(pages, suite), [pages, suite]);
  const suites = useLoad(() => (exported ? Promise.resolve({ suites: [] }) : call('evals.suites.list', { limit: 100 })), []);
  const [status, setStatus] = useState('');
  const [source, setSource] = useState('');
  const [query, setQuery] = useState('');

  const running = load.data?.batches.some((b) => b.status === 'running') ?? false;
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(() => void load.reload(), LIVE_MS);
    return () => clearInterval(timer);
  }, [running, load.reload]);

  return html`
    <${Title} sub="Newest first. The list refreshes itself while a batch is running.">Batches</${Title}>
    ${exported ? null : html`<${RunCaseForm} />`}
    <${Loaded} load=${load} what="the batches">
      ${(data) => {
        const sources = [...new Set(data.batches.map((b) => b.trigger?.source).filter(Boolean))].sort();
        const shown = data.batches.filter(
          (b) =>
            (status === '' || b.status === status) &&
            (source === '' || b.trigger?.source === source) &&
            (query === '' ||
              [b.id, b.trigger?.url ?? '', b.suite?.name ?? '', b.suite?.id ?? ''].some((text) => text.toLowerCase().includes(query.toLowerCase()))),
        );
        const suiteOptions = suites.data?.suites ?? [];
        return html`
          <form class="filters" role="search" aria-label="Filter the batches" onSubmit=${(e) => e.preventDefault()}>
            <label for="filter-suite">Suite</label>
            <select
              id="filter-suite"
              value=${suite}
              onChange=${(e) => {
                setSuite(e.currentTarget.value);
                setPages(1);
              }}
            >
              <option value="">any</option>
              ${suiteOptions.map((s) => html`<option value=${s.id}>${s.name === s.id ? s.id : `${s.name} (${s.id})`}</option>`)}
            </select>
            <label for="filter-status">Status</label>
            <select id="filter-status" value=${status} onChange=${(e) => setStatus(e.currentTarget.value)}>
              <option value="">any</option>
              <option value="running">running</option>
              <option value="finished">finished</option>
              <option value="failed">failed</option>
            </select>
            <label for="filter-trigger">Trigger</label>
            <select id="filter-trigger" value=${source} onChange=${(e) => setSource(e.currentTarget.value)}>
              <option value="">any</option>
              ${sources.map((s) => html`<option value=${s}>${s}</option>`)}
            </select>
            <label for="filter-text">Suite, id or trigger URL contains</label>
            <input id="filter-text" type="search" value=${query} onInput=${(e) => setQuery(e.currentTarget.value)} />
          </form>
          <p role="status" class="count">${shown.length} shown of ${data.batches.length} loaded · ${data.total} in all${running ? ' · live' : ''}</p>
          <table class="list" id="batches-table">
            <caption class="visually-hidden">
              Batches
            </caption>
            <thead>
              <tr>
                <th scope="col">Suite</th>
                <th scope="col">Batch</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">Took</th>
                <th scope="col">Cases</th>
                <th scope="col">Runs</th>
                <th scope="col">Passed · failed · void</th>
                <th scope="col">Pass rate</th>
                <th scope="col">Trigger</th>
              </tr>
            </thead>
            <tbody>
              ${shown.map(
                (b) =>
                  html`<tr class=${b.scored === 0 && b.voided > 0 ? 'all-void' : undefined}>
                    <th scope="row">
                      ${b.suite ? html`<a href=${link.batch(b.id)}>${b.suite.name}</a>${b.suite.name !== b.suite.id ? html`<div class="id">${b.suite.id}</div>` : null}` : '—'}
                    </th>
                    <td><a class="id" href=${link.batch(b.id)}>${b.id}</a></td>
                    <td><${Status} status=${b.status} />${b.failure ? html`<div class="why">${b.failure}</div>` : null}</td>
                    <td>${time(b.startedAt)}</td>
                    <td>${b.finishedAt ? between(b.startedAt, b.finishedAt) : 'running'}</td>
                    <td class="num">${b.cases}</td>
                    <td class="num">${b.runs}</td>
                    <td class="num"><${Counts} passed=${b.passed} failed=${b.scored - b.passed} voided=${b.voided} /></td>
                    <td class="num">${percent(b.scored ? b.passed / b.scored : null)}</td>
                    <td>${b.trigger?.source ?? '—'}${b.trigger?.url ? html` · <a href=${b.trigger.url} rel="noreferrer noopener">link</a>` : null}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
          ${shown.length === 0 ? html`<p>No batch matches.${data.total === 0 ? ' Start one with assay eval, or run a stored case above.' : ''}</p>` : null}
          ${data.next ? html`<button type="button" onClick=${() => setPages(pages + 1)}>Load ${PAGE} more</button>` : null}
        `;
      }}
    </${Loaded}>
  `;
}

/** Reads the first `count` pages again (the live refresh keeps what "load more" showed). */
async function loadPages(count, suite) {
  const batches = [];
  let cursor;
  let answer;
  for (let i = 0; i < count; i++) {
    answer = await call('evals.batches.list', { limit: PAGE, ...(cursor ? { cursor } : {}), ...(suite ? { suite } : {}) });
    batches.push(...answer.batches);
    cursor = answer.next;
    if (!cursor) break;
  }
  return { batches, next: cursor ?? null, total: answer.total };
}

/** Triggers a batch: a stored case, run again on its variants (evals.cases.run). */
function RunCaseForm() {
  const cases = useLoad(() => call('evals.cases.list', { limit: 100 }), []);
  const [caseId, setCaseId] = useState('');
  const [trials, setTrials] = useState(1);
  const [left, setLeft] = useState(() => new Set());
  const [state, setState] = useState({ busy: false, error: null });
  const options = useMemo(() => cases.data?.cases ?? [], [cases.data]);
  if (!cases.data || options.length === 0) return null;
  const chosenCase = options.find((c) => c.id === caseId) ?? options[0];
  const variants = (chosenCase.variants ?? []).map((v) => v.variant);
  const labels = variantLabels(variants);
  const runnable = variants.filter((v) => v.sandbox !== 'local');
  const picked = runnable.filter((v) => !left.has(v.id));

  const submit = async (event) => {
    event.preventDefault();
    if (picked.length === 0) return setState({ busy: false, error: 'Pick at least one variant.' });
    setState({ busy: true, error: null });
    try {
      const started = await call('evals.cases.run', { id: chosenCase.id, trials: Number(trials), variants: picked.map((v) => v.id) }, {});
      location.hash = link.batch(started.id);
    } catch (error) {
      setState({ busy: false, error: error.message });
    }
  };
  return html`<details class="trigger">
    <summary>Run a case again</summary>
    <form onSubmit=${submit}>
      <label for="run-case">Case</label>
      <select
        id="run-case"
        value=${caseId}
        onChange=${(e) => {
          setCaseId(e.currentTarget.value);
          setLeft(new Set());
        }}
      >
        ${options.map((c) => html`<option value=${c.id}>${c.name} (${c.suite.name})</option>`)}
      </select>
      <fieldset class="variants">
        <legend>Variants</legend>
        ${variants.map(
          (v, index) =>
            html`<label class=${v.sandbox === 'local' ? 'local' : undefined}
              ><input
                type="checkbox"
                name="variant"
                value=${v.id}
                disabled=${v.sandbox === 'local'}
                checked=${v.sandbox !== 'local' && !left.has(v.id)}
                onChange=${(e) => {
                  const next = new Set(left);
                  if (e.currentTarget.checked) next.delete(v.id);
                  else next.add(v.id);
                  setLeft(next);
                }}
              />
              ${labels[index]}${v.sandbox === 'local' ? ' (runs on its own machine: assay eval --local)' : ''}</label
            >`,
        )}
      </fieldset>
      <label for="run-trials">Trials per variant</label>
      <input id="run-trials" type="number" min="1" max="10" value=${trials} onInput=${(e) => setTrials(e.currentTarget.value)} />
      <button type="submit" disabled=${state.busy}>${state.busy ? 'Starting…' : 'Start a batch'}</button>
      ${state.error ? html`<p class="failure" role="alert">${state.error}</p>` : null}
      <p class="hint">Runs the case's newest version on the variants picked (needs <code>evals:write</code>); a local variant runs only where <code>assay eval --local</code> runs.</p>
    </form>
  </details>`;
}
