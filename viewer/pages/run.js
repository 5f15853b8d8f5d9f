import { useEffect } from 'preact/hooks';
import { call } from '../api.js';
import { link } from '../router.js';
import { duration, interval, percent, time, usd, variantLabel, wilson } from '../format.js';
import { Breadcrumbs, Code, Facts, html, Loaded, Status, Title, useLoad } from '../ui.js';
import { Costs } from './costs.js';

const LIVE_MS = 1500;

/** A run: its trials, their distribution, what they cost and the set-up they ran with. */
export function RunPage({ id }) {
  const load = useLoad(() => call('evals.runs.get', { id }), [id]);
  const running = load.data?.status === 'running';
  useEffect(() => {
    if (!running) return undefined;
    const timer = setInterval(() => void load.reload(), LIVE_MS);
    return () => clearInterval(timer);
  }, [running, load.reload]);

  return html`<${Loaded} load=${load} what="the run">
    ${(run) => html`
      <${Breadcrumbs} items=${[['Batches', link.batches()], [run.batchId, link.batch(run.batchId)], [`${run.case.name} on ${variantLabel(run.variant)}`]]} />
      <${Title} sub=${html`Run ${run.id} of case <a href=${link.case(run.case.id)}>${run.case.name}</a> in suite <a href=${link.suite(run.suite.id)}>${run.suite.name}</a>`}>
        ${run.case.name} on ${variantLabel(run.variant)}
      </${Title}>
      <p role="status"><${Status} status=${run.status} />${run.failure ? ` · ${run.failure}` : ''}</p>
      <h2>Distribution</h2>
      <${Distribution} d=${run.distribution} />
      <h2>Trials</h2>
      <${Trials} run=${run} />
      <h2>Costs</h2>
      <${Costs} costs=${run.costs} label="Costs of the run" />
      <h2>Set-up</h2>
      <${Setup} run=${run} />
    `}
  </${Loaded}>`;
}

function Distribution({ d }) {
  const w = wilson(d.passed, d.scored);
  const share = (n) => (d.trials ? `${(n / d.trials) * 100}%` : '0');
  return html` <div class="bar" role="img" aria-label=${`${d.passed} passed, ${d.failed} failed, ${d.voided} void of ${d.trials} trials`}>
      <span class="bar-passed" style=${{ width: share(d.passed) }}></span><span class="bar-failed" style=${{ width: share(d.failed) }}></span
      ><span class="bar-void" style=${{ width: share(d.voided) }}></span>
    </div>
    <${Facts}
      label="Distribution"
      items=${[
        ['Pass rate', d.passRate === null ? 'no trial scored (not a score of 0)' : `${percent(d.passRate)} (${d.passed} of ${d.scored} scored)`],
        ['Wilson 95% interval', interval(w)],
        ['Passed / failed / void', `${d.passed} / ${d.failed} / ${d.voided} of ${d.trials}`],
        ['Commands per scored trial', d.commandMin === null ? '—' : `min ${d.commandMin} · median ${d.commandMedian} · max ${d.commandMax}`],
        ['Deterministic', d.deterministic ? 'yes: every scored trial had the same verdict' : 'no'],
      ]}
    />`;
}

function Trials({ run }) {
  return html`<table class="list" id="trials-table">
    <caption class="visually-hidden">
      Trials of the run
    </caption>
    <thead>
      <tr>
        <th scope="col">Trial</th>
        <th scope="col">Status</th>
        <th scope="col">Commands (failed)</th>
        <th scope="col">Exit code</th>
        <th scope="col">Model time</th>
        <th scope="col">Sandbox time</th>
        <th scope="col">Tokens</th>
        <th scope="col">Known cost</th>
        <th scope="col">Why failed</th>
        <th scope="col">Why void</th>
      </tr>
    </thead>
    <tbody>
      ${run.trials.map(
        (t) =>
          html`<tr>
            <th scope="row"><a href=${link.trial(run.id, t.id)}>Trial ${t.ordinal}</a></th>
            <td><${Status} status=${t.status} />${t.timed ? ' (timed out)' : ''}</td>
            <td class="num">${t.commands} (${t.failedCommands})</td>
            <td class="num">${t.exitCode ?? '—'}</td>
            <td class="num">${duration(t.modelMs)}</td>
            <td class="num">${duration(t.sandboxMs)}</td>
            <td class="num">${t.usage?.totalTokens ?? '—'}</td>
            <td class="num">${usd(t.costs?.knownActualUsd)}</td>
            <td>${t.status === 'failed' ? (t.failure ?? (t.timed ? 'ran out of time' : 'verify or the validator failed: see the trial')) : ''}</td>
            <td>${t.status === 'void' ? `${t.failure ?? ''}${t.voidFields?.length ? ` (${t.voidFields.join(', ')})` : ''}` : ''}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function Setup({ run }) {
  const s = run.setup ?? {};
  return html`
    <${Facts}
      label="Run set-up"
      items=${[
        ['Variant', variantLabel(run.variant)],
        ['Simulated user model', run.variant.userModel],
        ['Sandbox driver', run.sandbox],
        ['Harness version', run.harnessVersion],
        ['Profile version', run.profileVersion],
        ['Case version', run.definitionHash],
        ['Started', time(run.startedAt)],
        ['Finished', time(run.finishedAt)],
        ['Local', run.local ? 'yes' : null],
        ['Workspace', s.source ? sourceText(s.source) : null],
      ]}
    />
    <h3>Prompt</h3>
    <${Code} label="Rendered prompt">${s.prompt ?? '—'}</${Code}>
    ${s.verify ? html`<h3>Verify command</h3><${Code} label="Verify command">${s.verify}</${Code}>` : null}
    ${s.prepare ? html`<h3>Prepare</h3><${Code} label="Prepare">${typeof s.prepare === 'string' ? s.prepare : JSON.stringify(s.prepare, null, 2)}</${Code}>` : null}
    ${(s.validatorFiles ?? []).map((f) => html`<h3>Validator <code>${f.path}</code></h3><${Code} label=${`Validator ${f.path}`}>${f.content}</${Code}>`)}
    ${
      s.validator
        ? html`<details class="bundle">
            <summary>The validator as it ran${s.validatorFiles?.length ? ' (its bundle)' : ''}</summary>
            <${Code} label="Validator">${typeof s.validator === 'string' ? s.validator : JSON.stringify(s.validator, null, 2)}</${Code}>
          </details>`
        : null
    }
    ${run.variant.profile ? html`<h3>Profile</h3><${Code} label="Profile">${asWritten(run.variant.profile)}</${Code}>` : null}
  `;
}

export function sourceText(source) {
  if (!source) return '—';
  if (source.kind === 'repo') return `git ${source.url}${source.ref ? ` at ${source.ref}` : ''}`;
  if (source.kind === 'files') return `${Object.keys(source.files ?? {}).length} files`;
  return source.kind;
}

/**
 * A profile as its author wrote it, in YAML's form: multi-line commands and files as blocks of
 * their own lines (not one JSON line of \n escapes), keys in the order given.
 */
export function asWritten(value, indent = '') {
  const lines = [];
  for (const [key, item] of Object.entries(value)) {
    const name = /^[\w.-]+$/.test(key) ? key : JSON.stringify(key);
    if (typeof item === 'string' && item.includes('\n')) {
      lines.push(`${indent}${name}: |`, ...item.replace(/\n$/, '').split('\n').map((line) => `${indent}  ${line}`));
    } else if (item !== null && typeof item === 'object' && !Array.isArray(item) && Object.keys(item).length > 0) {
      lines.push(`${indent}${name}:`, asWritten(item, `${indent}  `));
    } else {
      lines.push(`${indent}${name}: ${typeof item === 'string' && /^[\w ./:@=-]*$/.test(item) && item.trim() === item && item !== '' ? item : JSON.stringify(item)}`);
    }
  }
  return lines.join('\n');
}
