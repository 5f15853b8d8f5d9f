import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { call } from '../api.js';
import { link } from '../router.js';
import { interval, percent, time, variantLabel, wilson } from '../format.js';
import { Breadcrumbs, html, Loaded, Status, Title, useLoad } from '../ui.js';

const MAX_RUN_PAGES = 10;
const PALETTE = ['#1f5fbf', '#b8420f', '#2b7a3d', '#7b3fa0', '#a0731f', '#0f7b7b', '#b0306a', '#555555'];

/** A case: pass rate per variant over its versions (a chart, and the same numbers as a table). */
export function CasePage({ id }) {
  const load = useLoad(async () => {
    const detail = await call('evals.cases.get', { id });
    const runs = [];
    for (let page = 1; page <= MAX_RUN_PAGES; page++) {
      const answer = await call('evals.runs.list', { caseId: id, page });
      runs.push(...answer.runs);
      if (runs.length >= answer.total || answer.runs.length === 0) break;
    }
    return { detail, runs };
  }, [id]);

  return html`<${Loaded} load=${load} what="the case">
    ${({ detail, runs }) => {
      const history = byVersion(detail, runs);
      return html`
        <${Breadcrumbs} items=${[['Suites', link.suites()], [detail.suite.name, link.suite(detail.suite.id)], [detail.name]]} />
        <${Title} sub=${html`Case ${detail.id} of suite <a href=${link.suite(detail.suite.id)}>${detail.suite.name}</a>${detail.tags.length ? ` · tags: ${detail.tags.join(', ')}` : ''}`}>${detail.name}</${Title}>
        <h2>Variants, newest run of each</h2>
        <${Variants} variants=${detail.variants} />
        <h2>Pass rate over versions</h2>
        <${Chart} history=${history} />
        <${HistoryTable} history=${history} />
        <h2>Versions</h2>
        <table class="list" id="versions">
          <caption class="visually-hidden">Versions of the case, newest first</caption>
          <thead><tr><th scope="col">Version</th><th scope="col">Created</th><th scope="col">Author</th><th scope="col">What changed</th></tr></thead>
          <tbody>${detail.versions.map(
            (v, i) =>
              html`<tr>
                <th scope="row">v${detail.versions.length - i} <code class="hash">${v.definitionHash.slice(0, 12)}</code></th>
                <td>${time(v.createdAt)}</td>
                <td>${v.author}</td>
                <td>${v.changes.length ? v.changes.join(', ') : 'first version'}</td>
              </tr>`,
          )}</tbody>
        </table>
        <p class="hint">${runs.length} run${runs.length === 1 ? '' : 's'} read.</p>
      `;
    }}
  </${Loaded}>`;
}

function Variants({ variants }) {
  return html`<table class="list" id="case-variants">
    <caption class="visually-hidden">
      Variants of the case
    </caption>
    <thead>
      <tr>
        <th scope="col">Variant</th>
        <th scope="col">Runs</th>
        <th scope="col">Newest run</th>
        <th scope="col">Status</th>
        <th scope="col">Pass rate</th>
        <th scope="col">Last run</th>
      </tr>
    </thead>
    <tbody>
      ${variants.map(
        (v) =>
          html`<tr>
            <th scope="row">${variantLabel(v.variant)}</th>
            <td class="num">${v.runs}</td>
            <td>${v.lastRunId ? html`<a href=${link.run(v.lastRunId)}>${v.lastRunId}</a>` : '—'}</td>
            <td>${v.status ? html`<${Status} status=${v.status} />` : '—'}</td>
            <td class="num">${v.distribution ? `${percent(v.distribution.passRate)} (${v.distribution.passed}/${v.distribution.scored})` : '—'}</td>
            <td>${time(v.lastRunAt)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** Versions oldest first; for each variant, its trials passed and scored on each version. */
function byVersion(detail, runs) {
  const versions = [...detail.versions].reverse();
  const variants = new Map(detail.variants.map((v) => [v.variant.id, v.variant]));
  for (const run of runs) if (!variants.has(run.variant.id)) variants.set(run.variant.id, run.variant);
  const tally = new Map();
  for (const run of runs) {
    const key = `${run.variant.id}\u0000${run.definitionHash}`;
    const t = tally.get(key) ?? { passed: 0, scored: 0, runs: 0 };
    t.passed += run.distribution.passed;
    t.scored += run.distribution.scored;
    t.runs += 1;
    tally.set(key, t);
  }
  const series = [...variants.values()].map((variant) => ({
    variant,
    points: versions.map((v) => tally.get(`${variant.id}\u0000${v.definitionHash}`) ?? null),
  }));
  return { versions, series };
}

function Chart({ history }) {
  const box = useRef(null);
  useEffect(() => {
    if (!box.current) return undefined;
    const x = history.versions.map((_, i) => i + 1);
    const ys = history.series.map((s) => s.points.map((p) => (p && p.scored ? (p.passed / p.scored) * 100 : null)));
    const width = Math.max(320, Math.min(900, box.current.clientWidth || 640));
    const plot = new uPlot(
      {
        width,
        height: 260,
        scales: { x: { time: false }, y: { range: [0, 100] } },
        axes: [
          { label: 'case version', values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? `v${t}` : '')) },
          { label: 'pass rate (%)', values: (_u, ticks) => ticks.map((t) => `${t}%`) },
        ],
        series: [
          { label: 'version', value: (_u, v) => (v === null ? '—' : `v${v}`) },
          ...history.series.map((s, i) => ({
            label: variantLabel(s.variant),
            stroke: PALETTE[i % PALETTE.length],
            width: 2,
            dash: i % 2 ? [6, 4] : undefined,
            points: { show: true, size: 8 },
            spanGaps: true,
            value: (_u, v) => (v === null ? '—' : `${Math.round(v)}%`),
          })),
        ],
      },
      [x, ...ys],
      box.current,
    );
    return () => plot.destroy();
  }, [history]);
  const summary = history.series
    .map((s) => `${variantLabel(s.variant)}: ${s.points.map((p, i) => `v${i + 1} ${p && p.scored ? percent(p.passed / p.scored) : 'no score'}`).join(', ')}`)
    .join('; ');
  return html`<figure class="chart">
    <div ref=${box} id="case-chart" role="img" aria-label=${`Pass rate per variant over ${history.versions.length} versions. ${summary}`}></div>
    <figcaption>Pass rate of each variant on each case version; the table below gives the same numbers.</figcaption>
  </figure>`;
}

function HistoryTable({ history }) {
  return html`<table class="list" id="case-history">
    <caption>
      Pass rate per variant and version (passed / scored trials, Wilson 95% interval)
    </caption>
    <thead>
      <tr>
        <th scope="col">Variant</th>
        ${history.versions.map((v, i) => html`<th scope="col">v${i + 1} <code class="hash">${v.definitionHash.slice(0, 8)}</code></th>`)}
      </tr>
    </thead>
    <tbody>
      ${history.series.map(
        (s) =>
          html`<tr>
            <th scope="row">${variantLabel(s.variant)}</th>
            ${s.points.map(
              (p) =>
                html`<td class="num">
                  ${p && p.scored ? html`${percent(p.passed / p.scored)} (${p.passed}/${p.scored})<br /><span class="hint">${interval(wilson(p.passed, p.scored))}</span>` : p ? 'no score' : 'not run'}
                </td>`,
            )}
          </tr>`,
      )}
    </tbody>
  </table>`;
}
