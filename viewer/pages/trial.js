import { useMemo, useState } from 'preact/hooks';
import { call } from '../api.js';
import { link } from '../router.js';
import { bytes, duration, time, usd, variantLabel } from '../format.js';
import { Breadcrumbs, Code, Facts, html, Loaded, Status, Title, useLoad } from '../ui.js';
import { Costs } from './costs.js';

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
    <h2>Artifacts</h2>
    ${
      trial.artifacts?.length
        ? html`<table class="list" id="artifacts">
            <caption class="visually-hidden">
              Artifacts
            </caption>
            <thead>
              <tr>
                <th scope="col">Path</th>
                <th scope="col">Size</th>
                <th scope="col">SHA-256</th>
              </tr>
            </thead>
            <tbody>
              ${trial.artifacts.map(
                (a) =>
                  html`<tr>
                    <td><code>${a.path}</code></td>
                    <td class="num">${bytes(a.byteSize)}</td>
                    <td><code class="hash">${a.sha256}</code></td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : html`<p>No artifacts.</p>`
    }
    <h3>Files changed</h3>
    ${
      trial.filesChanged?.length
        ? html`<ul class="files">
            ${trial.filesChanged.map((f) => html`<li><code>${f}</code></li>`)}
          </ul>`
        : html`<p>None.</p>`
    }
    <h2>Costs</h2>
    <${Costs} costs=${trial.costs} label="Costs of the trial" />
  `;
}

/**
 * The trajectory in order: messages as a conversation, commands with their output, the agent's
 * model and tool calls, the conversation's end.
 */
function Trajectory({ entries, trialId }) {
  // Every call's bodies come in one answer, asked for when the first call is opened.
  const bodies = useMemo(() => once(() => call('evals.trials.modelCalls', { trialId })), [trialId]);
  if (entries.length === 0) return html`<p>Nothing recorded.</p>`;
  let modelCalls = 0;
  return html`<ol class="trajectory" id="trajectory">
    ${entries.map((entry, index) => {
      if (entry._tag === 'message') {
        const who = entry.role === 'user' ? 'User' : 'Agent';
        return html`<li class=${`message ${entry.role}`}>
          <p class="who"><strong>${who}</strong>, turn ${entry.turn}</p>
          <div class="text">${entry.text}</div>
        </li>`;
      }
      if (entry._tag === 'command') {
        const took = entry.finishedAtMillis && entry.startedAtMillis ? duration(entry.finishedAtMillis - entry.startedAtMillis) : null;
        return html`<li class="command">
          <details open=${index < 40}>
            <summary>
              <code>$ ${entry.command}</code>
              <span class=${entry.exitCode === 0 ? 'exit ok' : 'exit bad'}>exit ${entry.exitCode ?? '—'}</span
              >${took ? html` <span class="took">${took}</span>` : null}
            </summary>
            ${entry.output ? html`<${Code} label="Command output">${entry.output}</${Code}>` : html`<p class="hint">No output.</p>`}
            ${entry.outputTruncated ? html`<p class="hint">Output cut at the server's cap.</p>` : null}
          </details>
        </li>`;
      }
      if (entry._tag === 'model-call') return html`<${ModelCall} entry=${entry} ordinal=${modelCalls++} bodies=${bodies} />`;
      if (entry._tag === 'tool-call') return html`<${ToolCall} entry=${entry} />`;
      if (entry._tag === 'conversation') {
        return html`<li class="conversation-end">
          <p>The conversation ended after ${entry.turns} turn${entry.turns === 1 ? '' : 's'}: ${entry.endReason}.</p>
        </li>`;
      }
      return html`<li><${Code} label=${entry._tag}>${JSON.stringify(entry, null, 2)}</${Code}></li>`;
    })}
  </ol>`;
}

/** Calls `load` the first time it is asked, and again only after a failure. */
function once(load) {
  let answer = null;
  return () =>
    (answer ??= load().catch((error) => {
      answer = null;
      throw error;
    }));
}

/**
 * A call through the model gateway: its figures in the summary, its bodies inside. The n-th
 * model-call entry is the n-th call `evals.trials.modelCalls` answers: both follow the trial's
 * TrialModelCalled events in the order they were stored.
 */
function ModelCall({ entry, ordinal, bodies }) {
  const [shown, setShown] = useState(null);
  const opened = (event) => {
    if (!event.currentTarget.open || (shown && !shown.error)) return;
    setShown({ loading: true });
    bodies().then(
      (answer) => setShown({ call: answer?.calls?.[ordinal] ?? null }),
      (error) => setShown({ error }),
    );
  };
  const tokens = [`${entry.inputTokens ?? 0} in`, `${entry.outputTokens ?? 0} out`];
  if (entry.cacheReadTokens) tokens.push(`${entry.cacheReadTokens} cache read`);
  if (entry.cacheWriteTokens) tokens.push(`${entry.cacheWriteTokens} cache write`);
  const times = [];
  if (entry.finishedAtMillis && entry.startedAtMillis) times.push(duration(entry.finishedAtMillis - entry.startedAtMillis));
  if (entry.firstTokenMs !== null && entry.firstTokenMs !== undefined) times.push(`first token ${duration(entry.firstTokenMs)}`);
  return html`<li class="model-call">
    <details onToggle=${opened}>
      <summary>
        <strong>model call</strong> <code>${entry.provider}/${entry.model}</code>${' '}
        <span class=${entry.status < 400 ? 'exit ok' : 'exit bad'}>HTTP ${entry.status}</span> ${tokens.join(' · ')}${times.length
          ? html` · <span class="took">${times.join(' · ')}</span>`
          : null}
      </summary>
      <${ModelCallBodies} shown=${shown} />
    </details>
  </li>`;
}

function ModelCallBodies({ shown }) {
  if (!shown) return null;
  if (shown.loading) return html`<p class="hint" role="status">Loading the bodies…</p>`;
  if (shown.error) return html`<p class="hint" role="alert">Could not load the bodies: ${shown.error.message}</p>`;
  const { call: found } = shown;
  if (!found || (found.request === null && found.response === null)) {
    return html`<p class="hint">Request and response bodies not recorded (gateway.recordBodies is off).</p>`;
  }
  return html`
    <p class="who">Request</p>
    <${Code} label="Request body">${readable(found.request)}</${Code}>
    <p class="who">Response</p>
    <${Code} label="Response body">${readable(found.response)}</${Code}>
    ${found.truncated ? html`<p class="hint">Bodies cut at the server's cap.</p>` : null}
  `;
}

/** A body as it passed: indented when it is JSON, as it came otherwise (a streamed answer's events). */
function readable(body) {
  if (body === null || body === undefined) return '—';
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** A tool the agent called: its name and the start of its input in the summary, input and output inside. */
function ToolCall({ entry }) {
  const input = asText(entry.input);
  const output = asText(entry.output);
  const preview = input.replace(/\s+/g, ' ').trim();
  return html`<li class="tool-call">
    <details>
      <summary>
        <strong>tool ${entry.tool ?? '?'}</strong>${preview ? html` <code>${preview.length > 80 ? `${preview.slice(0, 80)}…` : preview}</code>` : null}
      </summary>
      <p class="who">Input</p>
      ${input ? html`<${Code} label="Tool input">${input}</${Code}>` : html`<p class="hint">No input.</p>`}
      <p class="who">Output</p>
      ${output ? html`<${Code} label="Tool output">${output}</${Code}>` : html`<p class="hint">No output.</p>`}
    </details>
  </li>`;
}

/** A tool's input or output as text: strings as they are, anything else as JSON. */
const asText = (value) => (value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value, null, 2));

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
