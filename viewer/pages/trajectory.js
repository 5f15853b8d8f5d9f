import { useMemo, useState } from 'preact/hooks';
import { call } from '../api.js';
import { duration } from '../format.js';
import { Code, html } from '../ui.js';

/**
 * The trajectory in order: messages as a conversation, commands with their output, the agent's
 * model and tool calls, the conversation's end.
 */
export function Trajectory({ entries, trialId }) {
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
