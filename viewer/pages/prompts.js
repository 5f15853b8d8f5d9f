import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { diffLines } from '../diff.js';
import { link } from '../router.js';
import { time } from '../format.js';
import { Breadcrumbs, Code, html, Loaded, Title, useLoad } from '../ui.js';

/** The organization's prompts, most recently changed first. */
export function PromptsPage() {
  const load = useLoad(() => call('prompts.list', {}), []);
  return html`
    <${Title} sub="Versioned text; a channel such as production points at one version.">Prompts</${Title}>
    <${Loaded} load=${load} what="the prompts">
      ${(answer) =>
        html`<table class="list" id="prompts-table">
            <caption class="visually-hidden">
              Prompts
            </caption>
            <thead>
              <tr>
                <th scope="col">Prompt</th>
                <th scope="col">Name</th>
                <th scope="col">Latest version</th>
                <th scope="col">Production</th>
                <th scope="col">Changed</th>
              </tr>
            </thead>
            <tbody>
              ${answer.data.map(
                (p) =>
                  html`<tr>
                    <th scope="row"><a href=${link.prompt(p.id)}>${p.id}</a></th>
                    <td>${p.name}</td>
                    <td class="num">v${p.latestVersion}</td>
                    <td class="num">${p.productionVersion ? `v${p.productionVersion}` : 'not promoted'}</td>
                    <td>${time(p.updatedAt)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
          ${answer.data.length === 0 ? html`<p>No prompt yet: <code>prompts.versions.create</code> makes the first.</p>` : null}`}
    </${Loaded}>
  `;
}

/** A prompt: its versions, a diff between two of them, and which version each channel served when. */
export function PromptPage({ id }) {
  const load = useLoad(async () => {
    const [versions, history] = await Promise.all([call('prompts.versions.list', { id }), call('prompts.history', { id })]);
    return { versions: versions.data, history: history.data };
  }, [id]);
  return html`<${Loaded} load=${load} what="the prompt">
    ${({ versions, history }) => html`
      <${Breadcrumbs} items=${[['Prompts', link.prompts()], [id]]} />
      <${Title} sub=${`${versions.length} version${versions.length === 1 ? '' : 's'}`}>Prompt ${id}</${Title}>
      <h2>Versions</h2>
      <table class="list" id="prompt-versions">
        <caption class="visually-hidden">Versions, oldest first</caption>
        <thead><tr><th scope="col">Version</th><th scope="col">Created</th><th scope="col">Author</th><th scope="col">Message</th><th scope="col">Channels now</th></tr></thead>
        <tbody>${versions.map(
          (v) =>
            html`<tr>
              <th scope="row">v${v.version}</th>
              <td>${time(v.createdAt)}</td>
              <td>${v.author}</td>
              <td>${v.message ?? ''}</td>
              <td>${v.channels.join(', ')}</td>
            </tr>`,
        )}</tbody>
      </table>
      <h2>Compare two versions</h2>
      <${Diff} id=${id} versions=${versions.map((v) => v.version)} />
      <h2>Channel timeline</h2>
      <${Timeline} history=${history} />
    `}
  </${Loaded}>`;
}

function Diff({ id, versions }) {
  const latest = versions.at(-1);
  const [from, setFrom] = useState(versions.length > 1 ? versions.at(-2) : latest);
  const [to, setTo] = useState(latest);
  const load = useLoad(async () => {
    const [a, b] = await Promise.all([call('prompts.get', { id, version: Number(from) }), call('prompts.get', { id, version: Number(to) })]);
    return { a, b, lines: diffLines(a.content, b.content) };
  }, [id, from, to]);
  const select = (label, value, set) =>
    html`<span>
      <label for=${`diff-${label}`}>${label}</label>
      <select id=${`diff-${label}`} value=${value} onChange=${(e) => set(Number(e.currentTarget.value))}>
        ${versions.map((v) => html`<option value=${v}>v${v}</option>`)}
      </select>
    </span>`;
  return html`
    <form class="filters" aria-label="Versions to compare" onSubmit=${(e) => e.preventDefault()}>${select('From', from, setFrom)} ${select('To', to, setTo)}</form>
    <${Loaded} load=${load} what="the two versions">
      ${({ a, b, lines }) => {
        if (lines === null)
          return html`<p>These versions are too long to compare here; they are shown one after the other.</p><${Code} label=${`v${a.version}`}>${a.content}</${Code}><${Code} label=${`v${b.version}`}>${b.content}</${Code}>`;
        const added = lines.filter((l) => l.kind === 'added').length;
        const removed = lines.filter((l) => l.kind === 'removed').length;
        return html`<p role="status">v${a.version} → v${b.version}: ${added} line${added === 1 ? '' : 's'} added, ${removed} removed.</p>
          <pre class="diff" id="prompt-diff" tabindex="0" aria-label=${`Changes from v${a.version} to v${b.version}`}>
${lines.map(
              (l) =>
                html`<div class=${`line ${l.kind}`}>
                  <span class="sign" aria-hidden="true">${l.kind === 'added' ? '+' : l.kind === 'removed' ? '-' : ' '}</span
                  ><span class="visually-hidden">${l.kind === 'same' ? '' : `${l.kind}: `}</span>${l.text}
                </div>`,
            )}</pre>`;
      }}
    </${Loaded}>
  `;
}

/** Which version each channel served from when to when, and who moved it; appends as they happened. */
function Timeline({ history }) {
  const channels = [...new Set(history.filter((e) => e.kind === 'promoted').map((e) => e.channel))].sort((a, b) =>
    a === 'production' ? -1 : b === 'production' ? 1 : a.localeCompare(b),
  );
  const [channel, setChannel] = useState(channels[0] ?? 'production');
  const moves = history.filter((e) => e.kind === 'promoted' && e.channel === channel);
  return html`
    ${
      channels.length > 1
        ? html`<form class="filters" aria-label="Channel" onSubmit=${(e) => e.preventDefault()}>
            <label for="timeline-channel">Channel</label>
            <select id="timeline-channel" value=${channel} onChange=${(e) => setChannel(e.currentTarget.value)}>
              ${channels.map((c) => html`<option value=${c}>${c}</option>`)}
            </select>
          </form>`
        : null
    }
    ${
      moves.length === 0
        ? html`<p>The channel ${channel} was never promoted: callers get the latest version.</p>`
        : html`<table class="list" id="channel-timeline">
            <caption>
              What ${channel} served
            </caption>
            <thead>
              <tr>
                <th scope="col">Version served</th>
                <th scope="col">From</th>
                <th scope="col">Until</th>
                <th scope="col">Promoted by</th>
                <th scope="col">Moved from</th>
              </tr>
            </thead>
            <tbody>
              ${moves.map(
                (m, i) =>
                  html`<tr>
                    <th scope="row">v${m.toVersion}</th>
                    <td>${time(m.at)}</td>
                    <td>${moves[i + 1] ? time(moves[i + 1].at) : 'now'}</td>
                    <td>${m.actor} <span class="hint">(${m.actorId})</span></td>
                    <td>${m.fromVersion ? `v${m.fromVersion}` : '—'}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    <h3>Every change</h3>
    <ol class="history" id="prompt-history">
      ${history.map(
        (e) =>
          html`<li>
            ${`${time(e.at)}: `}${e.kind === 'appended' ? `${e.actor} added v${e.version}${e.message ? ` (“${e.message}”)` : ''}` : `${e.actor} moved ${e.channel} ${e.fromVersion ? `from v${e.fromVersion} ` : ''}to v${e.toVersion}`}
          </li>`,
      )}
    </ol>
  `;
}
