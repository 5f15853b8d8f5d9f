import { useState } from 'preact/hooks';
import { call } from '../api.js';
import { bytes } from '../format.js';
import { Code, html, Loaded, useLoad } from '../ui.js';

/**
 * The agent's change: the files it added, modified or deleted, each file's part of the unified
 * diff collapsed under its name with line numbers, binary files with their sizes.
 */
export function TrialDiff({ trialId, filesChanged }) {
  const load = useLoad(() => call('evals.trials.diff', { trialId }), [trialId]);
  return html`<${Loaded} load=${load} what="the diff">
    ${(diff) => {
      if (!diff.recorded) {
        return filesChanged.length
          ? html`<p>No diff was kept for this trial (it ran in local mode, or before diffs were kept). Files changed:</p>
              <ul class="files">
                ${filesChanged.map((f) => html`<li><code>${f}</code></li>`)}
              </ul>`
          : html`<p>The agent changed no file.</p>`;
      }
      const parts = patchByFile(diff.patch);
      return html`<div id="diff">
        <p>${diff.files.length} file${diff.files.length === 1 ? '' : 's'} changed${diff.truncated ? ' (the diff is cut at 1 MiB)' : ''}.</p>
        ${diff.files.map((file) => html`<${DiffFile} file=${file} part=${parts.get(file.path)} />`)}
      </div>`;
    }}
  </${Loaded}>`;
}

const CHANGE = { added: 'added', modified: 'modified', deleted: 'deleted' };

function DiffFile({ file, part }) {
  const sizes = [file.bytesBefore, file.bytesAfter].map((size) => (size === null ? '—' : bytes(size))).join(' → ');
  return html`<details class="diff-file">
    <summary><code>${file.path}</code> <span class=${`change ${file.change}`}>${CHANGE[file.change] ?? file.change}</span> <span class="took">${sizes}</span></summary>
    ${
      file.binary
        ? html`<p class="hint">A binary file: not shown.</p>`
        : !file.diffed || !part
          ? html`<p class="hint">Not diffed (a large file, or its content before the agent's turn was not kept).</p>`
          : html`<${DiffLines} part=${part} />`
    }
  </details>`;
}

/** A file's hunks with the old and the new line numbers beside each line. */
function DiffLines({ part }) {
  const rows = [];
  let oldLine = 0;
  let newLine = 0;
  for (const line of part) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      rows.push(html`<tr class="hunk"><td></td><td></td><td><code>${line}</code></td></tr>`);
    } else if (line.startsWith('+')) {
      rows.push(html`<tr class="add"><td></td><td class="num">${newLine++}</td><td><code>${line}</code></td></tr>`);
    } else if (line.startsWith('-')) {
      rows.push(html`<tr class="del"><td class="num">${oldLine++}</td><td></td><td><code>${line}</code></td></tr>`);
    } else if (line.startsWith(' ')) {
      rows.push(html`<tr><td class="num">${oldLine++}</td><td class="num">${newLine++}</td><td><code>${line}</code></td></tr>`);
    } else if (line.startsWith('\\')) {
      rows.push(html`<tr class="hunk"><td></td><td></td><td><code>${line}</code></td></tr>`);
    }
  }
  return html`<table class="diff">
    <caption class="visually-hidden">Diff</caption>
    <thead class="visually-hidden"><tr><th scope="col">Old line</th><th scope="col">New line</th><th scope="col">Line</th></tr></thead>
    <tbody>${rows}</tbody>
  </table>`;
}

/** The patch's lines by file (the path after `b/`, or after `a/` for a deleted file), from each file's first hunk on. */
function patchByFile(patch) {
  const byPath = new Map();
  let current = null;
  let inHunks = false;
  for (const line of patch.split('\n')) {
    const header = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
    if (header) {
      current = [];
      inHunks = false;
      byPath.set(header[2], current);
      if (header[1] !== header[2]) byPath.set(header[1], current);
      continue;
    }
    if (current === null) continue;
    if (line.startsWith('@@')) inHunks = true;
    if (inHunks) current.push(line);
  }
  return byPath;
}

/** The artifacts, each openable: a text one shows its content, a binary one its size. */
export function Artifacts({ trialId, artifacts }) {
  if (!artifacts.length) return html`<p>No artifacts.</p>`;
  return html`<table class="list" id="artifacts">
    <caption class="visually-hidden">Artifacts</caption>
    <thead>
      <tr>
        <th scope="col">Path</th>
        <th scope="col">Size</th>
        <th scope="col">SHA-256</th>
      </tr>
    </thead>
    <tbody>
      ${artifacts.map((a) => html`<${ArtifactRow} trialId=${trialId} artifact=${a} />`)}
    </tbody>
  </table>`;
}

function ArtifactRow({ trialId, artifact }) {
  const [opened, setOpened] = useState(null);
  const open = () => {
    if (opened) return setOpened(null);
    setOpened({ loading: true });
    call('evals.trials.artifact', { trialId, path: artifact.path }).then(
      (answer) => setOpened({ answer }),
      (error) => setOpened({ error }),
    );
  };
  return html`<tr>
      <td><button type="button" class="link" aria-expanded=${opened ? 'true' : 'false'} onClick=${open}><code>${artifact.path}</code></button></td>
      <td class="num">${bytes(artifact.byteSize)}</td>
      <td><code class="hash">${artifact.sha256}</code></td>
    </tr>
    ${opened ? html`<tr class="artifact-content"><td colspan="3"><${ArtifactContent} opened=${opened} /></td></tr>` : null}`;
}

function ArtifactContent({ opened }) {
  if (opened.loading) return html`<p class="hint" role="status">Opening…</p>`;
  if (opened.error) return html`<p class="hint" role="alert">Could not open it: ${opened.error.message}</p>`;
  const { answer } = opened;
  if (answer.encoding !== 'utf8') return html`<p class="hint">A binary file of ${bytes(answer.byteSize)}: not shown.</p>`;
  return html`<${Code} label=${`Content of ${answer.path}`}>${answer.content}</${Code}>`;
}
