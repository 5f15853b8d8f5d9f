import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { Redactor } from '../output/captured-output';
import type { TrialArtifact } from '../trial-runner.port';
import type { Snapshot } from './snapshot';

/**
 * Encrypts an artifact's content for its organization: what reaches the disk. The server's
 * seals under the organization's data key (so destroying that key shreds its artifacts); the
 * runner takes it as an interface so that it imports no key ring and runs alone.
 */
export interface ArtifactSealer {
  seal(organization: string, sha256: string, content: Buffer): Promise<Buffer>;
}

export interface ArtifactStore {
  dataDir: string;
  organization: string;
  redactor: Redactor;
  /** Null in a runner without keys (a local run): the content is then kept redacted but unencrypted. */
  sealer: ArtifactSealer | null;
}

/**
 * The files the agent added or changed. A text file (valid UTF-8 without NUL bytes) is redacted
 * as output is; other files are kept as they are. `byteSize` and `sha256` describe the content
 * kept, the redacted text: what opening the stored file gives back. It is kept by content under
 * `<dataDir>/artifacts/<organization key>/<sha256>`, sealed, written once however many trials
 * produce it; a temporary name and a rename keep a half-written copy from carrying the final name.
 */
export async function storeArtifacts(store: ArtifactStore, workspace: string, before: Snapshot, after: Snapshot): Promise<TrialArtifact[]> {
  const artifacts: TrialArtifact[] = [];
  for (const [relative, entry] of after) {
    if (!entry.regular || entry.size < 1 || before.get(relative)?.sha256 === entry.sha256) continue;
    const content = keptContent(await readFile(path.join(workspace, relative)), store.redactor);
    const sha256 = createHash('sha256').update(content).digest('hex');
    await keepContent(store, sha256, content);
    artifacts.push({ path: store.redactor.redact(relative), byteSize: content.length, sha256 });
  }
  return artifacts.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Where an artifact's content is kept: one directory per organization, named by a hash of its id. */
export function artifactPath(dataDir: string, organization: string, sha256: string): string {
  const directory = createHash('sha256').update(`assay-artifacts\0${organization}`).digest('hex').slice(0, 32);
  return path.join(dataDir, 'artifacts', directory, sha256);
}

function keptContent(bytes: Buffer, redactor: Redactor): Buffer {
  const text = textOf(bytes);
  return text === null ? bytes : Buffer.from(redactor.redact(text), 'utf8');
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function textOf(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

async function keepContent(store: ArtifactStore, sha256: string, content: Buffer): Promise<void> {
  const target = artifactPath(store.dataDir, store.organization, sha256);
  if (await stat(target).then(() => true, () => false)) return;
  const stored = store.sealer === null ? content : await store.sealer.seal(store.organization, sha256, content);
  await mkdir(path.dirname(target), { recursive: true });
  const temporary = path.join(path.dirname(target), `.tmp-${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(temporary, stored, { mode: 0o600 });
    await rename(temporary, target);
  } finally {
    await rm(temporary, { force: true });
  }
}
