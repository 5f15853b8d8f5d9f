import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { call } from '../api.js';
import { link } from '../router.js';
import { interval, percent, time, usd } from '../format.js';
import { Breadcrumbs, html, Loaded, Title, useLoad } from '../ui.js';

const PALETTE = ['#1f5fbf', '#b8420f', '#2b7a3d', '#7b3fa0', '#a0731f', '#0f7b7b', '#b0306a', '#555555'];
const BUCKET_SECONDS = { day: 86400, week: 7 * 86400 };
const BUCKET_SPAN = { day: 'the last 30 days, by UTC day', week: 'the last 26 weeks, by ISO week' };
const BATCHES_OFFERED = 50;

/**
 * A suite's analytics, from the server's aggregates: pass rate per variant definition over time
 * (a chart and the same numbers as tables), its flaky cases, and two of its batches compared.
 */
export function AnalyticsPage({ suiteId }) {
  const suites = useLoad(() => call('evals.suites.list', { limit: 100 }), []);
  const [bucket, setBucket] = useState('day');
  return html`<${Loaded} load=${suites} what="the suites">
    ${(data) => {
      // Without a suite in the address, the most recently run one.
      const current = suiteId ?? data.suites[0]?.id ?? null;
      const suite = data.suites.find((s) => s.id === current);
      return html`
        ${suite ? html`<${Breadcrumbs} items=${[['Suites', link.suites()], [suite.name, link.suite(suite.id)], ['Analytics']]} />` : null}
        <${Title} sub="Pass rates over time, flaky cases and two batches compared, per variant definition (harness, model and profile content).">
          Analytics${suite ? `: ${suite.name}` : ''}
        </${Title}>
        ${
          data.suites.length === 0
            ? html`<p>No suite has run yet: analytics appear once trials have verdicts.</p>`
            : html`
                <form class="filters" aria-label="What to show" onSubmit=${(e) => e.preventDefault()}>
                  <label for="analytics-suite">Suite</label>
                  <select id="analytics-suite" value=${current} onChange=${(e) => (location.hash = link.analytics(e.currentTarget.value))}>
                    ${suiteId && !suite ? html`<option value=${suiteId}>${suiteId}</option>` : null}
                    ${data.suites.map((s) => html`<option value=${s.id}>${s.name}</option>`)}
                  </select>
                  <label for="analytics-bucket">Pass rate by</label>
                  <select id="analytics-bucket" value=${bucket} onChange=${(e) => setBucket(e.currentTarget.value)}>
                    <option value="day">day</option>
                    <option value="week">week</option>
                  </select>
                </form>
                <${PassRates} suiteId=${current} bucket=${bucket} />
                <${Flaky} suiteId=${current} />
                <${Comparison} suiteId=${current} />
              `
        }
      `;
    }}
  </${Loaded}>`;
}

function PassRates({ suiteId, bucket }) {
  const load = useLoad(() => call('analytics.passRates', { suiteId, bucket }), [suiteId, bucket]);
  return html`<section aria-labelledby="pass-rates-heading">
    <h2 id="pass-rates-heading">Pass rate over time</h2>
    <p class="hint">
      Over ${BUCKET_SPAN[bucket]}; a trial counts in the ${bucket} its batch started. The interval is where the true pass rate lies with 95%
      confidence (Wilson): intervals that overlap do not show a winner.
    </p>
    <${Loaded} load=${load} what="the pass rates">
      ${(answer) =>
        answer.variants.length === 0
          ? html`<p>No trial of this suite has a verdict in this period.</p>`
          : html`<${Totals} answer=${answer} />
              <${PassRateChart} answer=${answer} />
              <${BucketTable} answer=${answer} />`}
    </${Loaded}>
  </section>`;
}

const passedOfScored = (n) => `${n.passed} / ${n.scored}`;
/** What a passed trial cost: the actual (billed and allocated) and, apart, the estimate at list prices. */
function perPass(costs) {
  if (!costs) return '—';
  const actual = usd(costs.knownActualUsd + costs.allocatedUsd);
  const estimate = costs.estimatedEquivalentUsd ? ` (est. ${usd(costs.estimatedEquivalentUsd)})` : '';
  // Some component had no price: the sum is a lower bound.
  return `${actual}${estimate}${costs.incomplete ? ', incomplete' : ''}`;
}

function Totals({ answer }) {
  return html`<table class="list" id="analytics-totals">
    <caption>
      Each variant over the whole period (${time(answer.from)} to ${time(answer.to)})
    </caption>
    <thead>
      <tr>
        <th scope="col">Variant</th>
        <th scope="col">Trials</th>
        <th scope="col">Passed / scored</th>
        <th scope="col">Pass rate</th>
        <th scope="col">Wilson 95% interval</th>
        <th scope="col">Void</th>
        <th scope="col">Cost per passed trial</th>
        <th scope="col">Median commands</th>
      </tr>
    </thead>
    <tbody>
      ${answer.variants.map(
        (line) =>
          html`<tr>
            <th scope="row">${line.label}</th>
            <td class="num">${line.total.trials}</td>
            <td class="num">${passedOfScored(line.total)}</td>
            <td class="num">${percent(line.total.passRate)}</td>
            <td class="num">${interval(line.total.interval)}</td>
            <td class="num">${line.total.voided}</td>
            <td class="num">${perPass(line.total.costPerPassedTrial)}</td>
            <td class="num">${line.total.commandMedian ?? '—'}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** Every bucket start any line has, oldest first, and each line's numbers at them (null where it has none). */
function alignBuckets(answer) {
  const starts = [...new Set(answer.variants.flatMap((line) => line.buckets.map((b) => b.start)))].sort();
  const lines = answer.variants.map((line) => {
    const at = new Map(line.buckets.map((b) => [b.start, b]));
    return { label: line.label, points: starts.map((start) => at.get(start) ?? null) };
  });
  return { starts, lines };
}

/** Tick labels for bucket starts (epoch seconds): a date, a week's Monday, or an hour; every nth when they would crowd. */
export function bucketTicks(ticks, bucket, width) {
  const name = (t) => {
    const iso = new Date(t * 1000).toISOString();
    if (bucket === 'hour') return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
    return bucket === 'week' ? `wk ${iso.slice(0, 10)}` : iso.slice(0, 10);
  };
  const every = Math.max(1, Math.ceil((ticks.length * 90) / Math.max(width, 1)));
  return ticks.map((t, index) => (index % every === 0 ? name(t) : ''));
}

/** Each line's pass rate per bucket, with its Wilson interval drawn as a whisker; the table after it has the same numbers. */
function PassRateChart({ answer }) {
  const box = useRef(null);
  useEffect(() => {
    if (!box.current) return undefined;
    const { starts, lines } = alignBuckets(answer);
    const xs = starts.map((start) => Date.parse(start) / 1000);
    const half = BUCKET_SECONDS[answer.bucket] / 2;
    const width = Math.max(320, Math.min(900, box.current.clientWidth || 640));
    const whiskers = (u) => {
      const ctx = u.ctx;
      const cap = 4 * uPlot.pxRatio;
      ctx.save();
      ctx.lineWidth = 1.5 * uPlot.pxRatio;
      lines.forEach((line, i) => {
        if (!u.series[i + 1].show) return;
        ctx.strokeStyle = PALETTE[i % PALETTE.length];
        line.points.forEach((p, j) => {
          if (!p?.interval) return;
          const x = u.valToPos(xs[j], 'x', true);
          const low = u.valToPos(p.interval.low * 100, 'y', true);
          const high = u.valToPos(p.interval.high * 100, 'y', true);
          ctx.beginPath();
          ctx.moveTo(x, low);
          ctx.lineTo(x, high);
          ctx.moveTo(x - cap, low);
          ctx.lineTo(x + cap, low);
          ctx.moveTo(x - cap, high);
          ctx.lineTo(x + cap, high);
          ctx.stroke();
        });
      });
      ctx.restore();
    };
    const plot = new uPlot(
      {
        width,
        height: 280,
        // Half a bucket either side: a single bucket still has room, and no whisker sits on the edge.
        scales: { x: { time: true, range: () => [xs[0] - half, xs[xs.length - 1] + half] }, y: { range: [0, 100] } },
        axes: [
          // Ticks at the buckets themselves, named as buckets are (a day's chart is not hours of one day), thinned to fit.
          { label: `${answer.bucket} (UTC)`, splits: () => xs, values: (_u, ticks) => bucketTicks(ticks, answer.bucket, width) },
          { label: 'pass rate (%)', values: (_u, ticks) => ticks.map((t) => `${t}%`) },
        ],
        series: [
          { label: answer.bucket, value: (_u, v) => (v === null ? '—' : new Date(v * 1000).toISOString().slice(0, 10)) },
          ...lines.map((line, i) => ({
            label: line.label,
            stroke: PALETTE[i % PALETTE.length],
            width: 2,
            dash: i % 2 ? [6, 4] : undefined,
            points: { show: true, size: 8 },
            spanGaps: true,
            value: (_u, v) => (v === null ? '—' : `${Math.round(v)}%`),
          })),
        ],
        hooks: { draw: [whiskers] },
      },
      [xs, ...lines.map((line) => line.points.map((p) => (p && p.passRate !== null ? p.passRate * 100 : null)))],
      box.current,
    );
    return () => plot.destroy();
  }, [answer]);
  const summary = answer.variants.map((line) => `${line.label}: ${percent(line.total.passRate)} over the period (${interval(line.total.interval)})`).join('; ');
  return html`<figure class="chart">
    <div
      ref=${box}
      id="analytics-chart"
      role="img"
      aria-label=${`Pass rate per variant by ${answer.bucket}, with Wilson 95% intervals as whiskers. ${summary}`}
    ></div>
    <figcaption>Pass rate of each variant per ${answer.bucket}; the whiskers are the Wilson 95% intervals. The table below gives the same numbers.</figcaption>
  </figure>`;
}

function BucketTable({ answer }) {
  return html`<table class="list" id="analytics-buckets">
    <caption>
      Pass rate per variant and ${answer.bucket} (${answer.bucket}s without trials are left out)
    </caption>
    <thead>
      <tr>
        <th scope="col">Variant</th>
        <th scope="col">${answer.bucket === 'week' ? 'Week from' : 'Day'}</th>
        <th scope="col">Passed / scored</th>
        <th scope="col">Pass rate</th>
        <th scope="col">Wilson 95% interval</th>
        <th scope="col">Void</th>
      </tr>
    </thead>
    <tbody>
      ${answer.variants.flatMap((line) =>
        line.buckets.map(
          (b) =>
            html`<tr>
              <th scope="row">${line.label}</th>
              <td>${b.start.slice(0, 10)}</td>
              <td class="num">${passedOfScored(b)}</td>
              <td class="num">${percent(b.passRate)}</td>
              <td class="num">${interval(b.interval)}</td>
              <td class="num">${b.voided}</td>
            </tr>`,
        ),
      )}
    </tbody>
  </table>`;
}

function Flaky({ suiteId }) {
  const load = useLoad(() => call('analytics.flaky', { suiteId, limit: 50 }), [suiteId]);
  return html`<section aria-labelledby="flaky-heading">
    <h2 id="flaky-heading">Flaky cases</h2>
    <p class="hint">
      A case is flaky on a variant when trials of the same run disagree: they had the same definition at the same time, so the disagreement is not a
      change in the agent. Flakiness is the share of pairs of a run's trials whose verdicts differ; runs of one trial say nothing of it.
    </p>
    <${Loaded} load=${load} what="the flaky cases">
      ${(answer) =>
        answer.cases.length === 0
          ? html`<p id="analytics-no-flaky">No flaky case: the trials of every run agreed.</p>`
          : html`<table class="list" id="analytics-flaky">
              <caption>
                ${answer.total} flaky case${answer.total === 1 ? '' : 's'} on a variant, the most mixed
                first${answer.total > answer.cases.length ? ` (the first ${answer.cases.length} shown)` : ''}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Case</th>
                  <th scope="col">Variant</th>
                  <th scope="col">Flakiness</th>
                  <th scope="col">Runs with mixed verdicts</th>
                  <th scope="col">Passed / scored</th>
                  <th scope="col">Pass rate</th>
                </tr>
              </thead>
              <tbody>
                ${answer.cases.map(
                  (c) =>
                    html`<tr>
                      <th scope="row"><a href=${link.case(c.caseId)}>${c.caseName}</a></th>
                      <td>${c.label}</td>
                      <td class="num">${percent(c.flakiness)} of trial pairs disagree</td>
                      <td class="num">${c.mixedRuns} of ${c.runs}</td>
                      <td class="num">${passedOfScored(c)}</td>
                      <td class="num">${percent(c.passRate)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`}
    </${Loaded}>
  </section>`;
}

const batchOption = (b) =>
  `${time(b.startedAt)} · ${b.id} · ${b.scored === 0 ? 'nothing scored' : `${b.passed}/${b.scored} passed`}${b.status === 'running' ? ' · running' : ''}`;

/** Two of the suite's recent batches compared: by default the newest against the one before it, of those that scored a trial. */
function Comparison({ suiteId }) {
  const batches = useLoad(() => call('evals.batches.list', { suite: suiteId, limit: BATCHES_OFFERED }), [suiteId]);
  return html`<section aria-labelledby="compare-heading">
    <h2 id="compare-heading">Two batches compared</h2>
    <p class="hint">
      Each variant of each batch over the cases both scored, with a test over those cases (each weighted by its trials): does one side pass more often
      than the first (the baseline), beyond chance? The difference in pass rate comes with a 95% interval from resampling the cases.
    </p>
    <${Loaded} load=${batches} what="the suite's batches">
      ${(answer) => (answer.batches.length === 0 ? html`<p>The suite has no batch.</p>` : html`<${ComparisonForm} batches=${answer.batches} key=${suiteId} />`)}
    </${Loaded}>
  </section>`;
}

function ComparisonForm({ batches }) {
  // A batch whose trials were all void measured nothing: the defaults pass over it.
  const scored = batches.filter((b) => b.scored > 0);
  const [baseline, setBaseline] = useState((scored[1] ?? scored[0] ?? batches[1] ?? batches[0]).id);
  const [other, setOther] = useState((scored[0] ?? batches[0]).id);
  const [compared, setCompared] = useState([baseline, other]);
  const ids = [...new Set(compared)];
  const load = useLoad(() => call('analytics.compare', { batchIds: ids }), [ids.join(',')]);
  return html`
    <form
      class="filters"
      aria-label="Batches to compare"
      onSubmit=${(e) => {
        e.preventDefault();
        setCompared([baseline, other]);
      }}
    >
      <label for="compare-baseline">Baseline batch</label>
      <select id="compare-baseline" value=${baseline} onChange=${(e) => setBaseline(e.currentTarget.value)}>
        ${batches.map((b) => html`<option value=${b.id}>${batchOption(b)}</option>`)}
      </select>
      <label for="compare-other">Compared with</label>
      <select id="compare-other" value=${other} onChange=${(e) => setOther(e.currentTarget.value)}>
        ${batches.map((b) => html`<option value=${b.id}>${batchOption(b)}</option>`)}
      </select>
      <button type="submit">Compare</button>
    </form>
    ${ids.length === 1 ? html`<p class="hint">One batch: its variants are compared with each other.</p>` : null}
    ${
      load.error?.status === 400
        ? html`<p class="notice" role="alert" id="compare-refused">Nothing to compare: ${load.error.message}</p>`
        : html`<${Loaded} load=${load} what="the comparison">${(comparison) => html`<${ComparisonResult} comparison=${comparison} />`}</${Loaded}>`
    }
  `;
}

function ComparisonResult({ comparison }) {
  const { sides, tests } = comparison;
  const maxK = Math.max(0, ...sides.map((s) => s.atK.length));
  return html`
    <p id="compare-cases">
      ${comparison.comparedCases} case${comparison.comparedCases === 1 ? '' : 's'} compared
      ${comparison.unpairedCases.length ? ` · left out (not scored on every side): ${comparison.unpairedCases.join(', ')}` : ''}
    </p>
    <h3>Verdict</h3>
    <ul class="verdicts" id="compare-tests">
      ${tests.map(
        (t) =>
          html`<li class=${t.significant ? 'verdict significant' : 'verdict'}>
            <p>${headlined(t)}</p>
            ${t.pValue === null ? null : html`<p class="hint">${testLine(t)}</p>`}
          </li>`,
      )}
    </ul>
    <table class="list" id="compare-sides">
      <caption>
        Each side over the compared cases (the first is the baseline)
      </caption>
      <thead>
        <tr>
          <th scope="col">Side</th>
          <th scope="col">Batch</th>
          <th scope="col">Passed / scored</th>
          <th scope="col">Pass rate</th>
          <th scope="col">Wilson 95% interval</th>
          <th scope="col">Void</th>
          <th scope="col">Cost per passed trial</th>
        </tr>
      </thead>
      <tbody>
        ${sides.map(
          (s) =>
            html`<tr>
              <th scope="row">${s.label}</th>
              <td>${s.batchId ? html`<a href=${link.batch(s.batchId)}>${s.batchId}</a>` : '—'}</td>
              <td class="num">${passedOfScored(s)}</td>
              <td class="num">${percent(s.passRate)}</td>
              <td class="num">${interval(s.interval)}</td>
              <td class="num">${s.voided}</td>
              <td class="num">${perPass(s.costPerPassedTrial)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${
      maxK > 0
        ? html`<table class="list" id="compare-atk">
            <caption>
              pass@k (at least one of k trials passes) and pass^k (all k pass), averaged over the compared cases
            </caption>
            <thead>
              <tr>
                <th scope="col" rowspan="2">k</th>
                ${sides.map((s) => html`<th scope="colgroup" colspan="2">${s.label}</th>`)}
              </tr>
              <tr>
                ${sides.map(() => html`<th scope="col">pass@k</th><th scope="col">pass^k</th>`)}
              </tr>
            </thead>
            <tbody>
              ${Array.from(
                { length: maxK },
                (_, index) =>
                  html`<tr>
                    <th scope="row">${index + 1}</th>
                    ${sides.map((s) => {
                      const at = s.atK[index];
                      return html`<td class="num">${at ? percent(at.passAtK) : '—'}</td>
                        <td class="num">${at ? percent(at.passHatK) : '—'}</td>`;
                    })}
                  </tr>`,
              )}
            </tbody>
          </table>`
        : null
    }
    <h3>Cases that differ</h3>
    ${
      comparison.differingCases.length === 0
        ? html`<p>Every compared case has the same pass rate on every side.</p>`
        : html`<table class="list" id="compare-differing">
            <caption>
              Cases whose pass rates differ, the widest gap first: passed / scored on each side
            </caption>
            <thead>
              <tr>
                <th scope="col">Case</th>
                ${sides.map((s) => html`<th scope="col">${s.label}</th>`)}
              </tr>
            </thead>
            <tbody>
              ${comparison.differingCases.map(
                (c) =>
                  html`<tr>
                    <th scope="row"><a href=${link.case(c.caseId)}>${c.caseName}</a></th>
                    ${c.sides.map((s) => html`<td class="num">${s.passed} / ${s.scored} (${percent(s.passRate)})</td>`)}
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  `;
}

const pValue = (p) => (p < 0.0001 ? p.toExponential(1) : p.toFixed(4));

const HEADLINES = {
  difference: 'Significant difference',
  'no-significant-difference': 'No significant difference',
  'no-difference': 'No difference',
  'too-few-cases': 'Not enough cases to tell',
  'nothing-to-compare': 'Nothing to compare',
};

/** The verdict with its headline in bold: its own first words when it starts with them. */
function headlined(t) {
  const headline = HEADLINES[t.conclusion];
  if (!t.verdict.startsWith(headline)) return html`<strong>${headline}</strong>: ${t.verdict}`;
  return html`<strong>${headline}</strong>${t.verdict.slice(headline.length)}`;
}

/** The test's own line (the verdict holds the difference): p by which test, over how many cases, and how the interval was drawn. */
function testLine(t) {
  const cases = `${t.differingCases} of ${t.comparedCases} case${t.comparedCases === 1 ? '' : 's'} differ`;
  const smallest = t.conclusion === 'too-few-cases' ? ` (the smallest possible here: ${pValue(t.smallestPossiblePValue)})` : '';
  const interval = t.difference?.interval ? `; the 95% interval by ${t.difference.method}` : '';
  return `${t.other} against ${t.baseline}: p = ${pValue(t.pValue)}${smallest} by ${t.method}; ${cases}${interval}.`;
}
