import { call } from '../api.js';
import { link } from '../router.js';
import { duration, time, usd, variantLabel } from '../format.js';
import { Breadcrumbs, Code, Facts, html, Loaded, Status, Title, useLoad } from '../ui.js';
import { Costs } from './costs.js';
import { Trajectory } from './trajectory.js';
import { Artifacts, TrialDiff } from './trial-files.js';

/** A trial: the conversation turn by turn, each command with its output, how it was judged, what it left. */
export function TrialPage({ runId, trialId }) {
  const load = useLoad(() => call('evals.runs.get', { id: runId }), [runId]);
  return html`<${Loaded} load=${load} what="the trial">
    ${(run) => {
      const trial = run.trials.find((t) => t.id === trialId);
      if (!trial) return html`<${Title}>No trial ${trialId}</${Title}><p>Run <a href=${link.run(runId)}>${runId}</a> has no such trial.</p>`;
      return html`
        <${Breadcrumbs} items=${[['Batches', link.batches()], [run.batchId, link.batch(run.batchId)], [`${run.case.name} on ${variantLabel(run.variant)}`, link.run(run.id)], [`Trial ${trial.ordinal}`]]} />
        <${Title} sub=${`${trial.id} · case ${run.case.name} · ${variantLabel(run.variant)}`}>Trial ${trial.ordinal} of ${run.case.name}</${Title}>
        <${Trial} trial=${trial} />
      `;
    }}
  </${Loaded}>`;
}

function Trial({ trial }) {
  return html`
    <p role="status" class="verdict">
      <${Status} status=${trial.status} />${trial.timed ? ' · ran out of time (scored failed)' : ''}${trial.failure ? ` · ${trial.failure}` : ''}
    </p>
    ${trial.status === 'failed' && !trial.failure && !trial.timed ? html`<${WhyFailed} trial=${trial} />` : null}
    <${Facts}
      label="Trial summary"
      items=${[
        ['Commands', `${trial.commands} (${trial.failedCommands} failed)`],
        ['Agent exit code', trial.exitCode ?? '—'],
        ['Turns', trial.turns ?? null],
        ['Conversation ended', trial.endReason ?? null],
        ['Model time', duration(trial.modelMs)],
        ['Sandbox time', duration(trial.sandboxMs)],
        ['Sandbox', trial.sandboxId],
        ['Tokens', trial.usage ? `${trial.usage.inputTokens ?? 0} in · ${trial.usage.outputTokens ?? 0} out` : null],
        ['Known cost', usd(trial.costs?.knownActualUsd)],
        ['Void parts', trial.voidFields?.length ? trial.voidFields.join(', ') : null],
        ['Started', time(trial.startedAt)],
        ['Finished', time(trial.finishedAt)],
      ]}
    />
    <h2>Conversation and commands</h2>
    <${Trajectory} entries=${trial.trajectory ?? []} trialId=${trial.id} />
    <h2>Verify steps</h2>
    ${
      trial.verifySteps?.length
        ? html`<table class="list" id="verify-steps">
            <caption class="visually-hidden">
              Verify steps
            </caption>
            <thead>
              <tr>
                <th scope="col">Command</th>
                <th scope="col">Exit code</th>
                <th scope="col">Verdict</th>
              </tr>
            </thead>
            <tbody>
              ${trial.verifySteps.map(
                (s) =>
                  html`<tr>
                    <td><code>${s.command}</code></td>
                    <td class="num">${s.exitCode ?? '—'}</td>
                    <td>${s.exitCode === 0 ? '✓ passed' : s.exitCode === null ? 'did not run' : '✗ failed'}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : html`<p>No verify step ran.</p>`
    }
    <h2>Validations</h2>
    ${trial.validations?.length ? trial.validations.map((v) => html`<${Validation} v=${v} />`) : html`<p>No validator ran.</p>`}
    <h2>The agent's change</h2>
    <${TrialDiff} trialId=${trial.id} filesChanged=${trial.filesChanged ?? []} />
    <h2>Artifacts</h2>
    <${Artifacts} trialId=${trial.id} artifacts=${trial.artifacts ?? []} />
    <h2>Costs</h2>
    <${Costs} costs=${trial.costs} label="Costs of the trial" />
  `;
}

function Capture({ label, capture }) {
  if (!capture || capture.text === undefined || capture.text === null || capture.text === '') return null;
  return html`<div class="capture"><h4>${label}${capture.truncated ? ' (truncated)' : ''}</h4><${Code} label=${label}>${capture.text}</${Code}></div>`;
}

function Validation({ v }) {
  const judgments = Array.isArray(v.judgment) ? v.judgment : v.judgment ? [v.judgment] : [];
  return html`<section class="validation" aria-label=${`Validation ${v.name}`}>
    <h3>${v.index}. ${v.name} <${Status} status=${v.status} /></h3>
    <${Facts}
      label="Validation"
      items=${[
        ['Kind', v.kind],
        ['Exit code', v.exitCode],
        ['Took', duration(v.durationMs)],
        ['Message', v.message],
      ]}
    />
    <${Capture} label="Input" capture=${v.input} />
    <${Capture} label="Output" capture=${v.output} />
    <${Capture} label="Error" capture=${v.error} />
    ${judgments.map(
      (j) =>
        html`<div class="judgment">
          <h4>Judgment ${j.name ?? ''}</h4>
          <${Facts}
            label="Judgment"
            items=${[
              ['Model', j.model],
              ['Evaluator', j.evaluator],
              ['Score', j.score],
              ['Threshold', j.threshold],
              ['Choice', j.choice],
              ['Reason', j.reason],
              ['Error', j.error],
            ]}
          />
        </div>`,
    )}
    ${
      v.calls?.length
        ? html`<h4>Calls</h4>
            <ol>
              ${v.calls.map((c) => html`<li>${c.method} · ${duration(c.durationMs)}<${Capture} label="Call input" capture=${c.input} /><${Capture} label="Call output" capture=${c.output} /></li>`)}
            </ol>`
        : null
    }
    ${v.logs?.length ? html`<h4>Logs</h4><${Code} label="Validator logs">${v.logs.map((l) => `[${l.level}] ${l.value?.text ?? ''}`).join('\n')}</${Code}>` : null}
  </section>`;
}

/** Why a trial failed when no failure was recorded: the validator's message, or verify's exit code and the end of its output. */
function WhyFailed({ trial }) {
  const validation = (trial.validations ?? []).find((v) => v.status === 'failed');
  if (validation) {
    return html`<p class="why-failed" id="why-failed">The validator's ${validation.name} failed${validation.message ? `: ${validation.message}` : '.'}</p>`;
  }
  const step = (trial.verifySteps ?? []).find((s) => s.exitCode !== 0);
  if (!step) return null;
  const entry = [...(trial.trajectory ?? [])].reverse().find((e) => e._tag === 'command' && e.command === step.command && e.exitCode === step.exitCode);
  const tail = (entry?.output ?? '').trimEnd().split('\n').slice(-5).join('\n');
  return html`<div class="why-failed" id="why-failed">
    <p>Verify <code>${step.command}</code> exited ${step.exitCode}${tail ? ', ending:' : ' with no output.'}</p>
    ${tail ? html`<${Code} label="The end of verify's output">${tail}</${Code}>` : null}
  </div>`;
}
