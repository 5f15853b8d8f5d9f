import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { Redactor } from '../output/captured-output';
import type { TrialArtifact } from '../contract';
import { readRegularFileSync, SYNC_FILE_BYTES } from './file-calls';
import type { Snapshot } from './snapshot';

/**
 * Encrypts an artifact's content for its organization, as it is written: what reaches the disk.
 * The server's seals under the organization's data key (so destroying that key shreds its
 * artifacts); the runner takes it as an interface so that it imports no key ring and runs alone.
 */
export interface ArtifactSealer {
  begin(organization: string, sha256: string): Promise<ArtifactSealing>;
}

/** The bytes to write first, then each chunk's, then the end's. */
export interface ArtifactSealing {
  header: Buffer;
  update(chunk: Buffer): Buffer;
  final(): Buffer;
}

/** Larger files are streamed as they are, never read whole into memory, so never redacted. */
const REDACTED_UP_TO_BYTES = 16 * 1024 * 1024;

const unsealed: ArtifactSealing = { header: Buffer.alloc(0), update: (chunk) => chunk, final: () => Buffer.alloc(0) };

export interface ArtifactStore {
  dataDir: string;
  organization: string;
  redactor: Redactor;
  /** Null in a runner without keys (a local run): the content is then kept redacted but unencrypted. */
  sealer: ArtifactSealer | null;
}

/**
 * The files the agent added or changed. A text file (valid UTF-8 without NUL bytes, up to 16 MiB)
 * is redacted as output is; other files are kept as they are. `byteSize` and `sha256` describe
 * the content kept: what opening the stored file gives back. It is kept by content under
 * `<dataDir>/artifacts/<organization key>/<sha256>`, sealed, written once however many trials
 * produce it; a temporary name and a rename keep a half-written copy from carrying the final name.
 */
export async function storeArtifacts(store: ArtifactStore, workspace: string, before: Snapshot, after: Snapshot): Promise<TrialArtifact[]> {
  const artifacts: TrialArtifact[] = [];
  for (const [relative, entry] of after) {
    if (!entry.regular || entry.size < 1 || before.get(relative)?.sha256 === entry.sha256) continue;
    const source = path.join(workspace, relative);
    const bytes = entry.size <= SYNC_FILE_BYTES ? readRegularFileSync(source) : entry.size <= REDACTED_UP_TO_BYTES ? await readFile(source) : null;
    const text = bytes === null ? null : textOf(bytes);
    const content = text === null ? bytes : Buffer.from(store.redactor.redact(text), 'utf8');
    const sha256 = content === null ? entry.sha256 : createHash('sha256').update(content).digest('hex');
    await keepContent(store, sha256, content ?? source);
    artifacts.push({ path: store.redactor.redact(relative), byteSize: content?.length ?? entry.size, sha256 });
  }
  return artifacts.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Where an artifact's content is kept: one directory per organization, named by a hash of its id. */
export function artifactPath(dataDir: string, organization: string, sha256: string): string {
  const directory = createHash('sha256').update(`assay-artifacts\0${organization}`).digest('hex').slice(0, 32);
  return path.join(dataDir, 'artifacts', directory, sha256);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The bytes as text when they are valid UTF-8 without NUL bytes; null for a binary file. */
export function textOf(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** Writes the content (read, or a larger file streamed from its path) through the sealer. */
async function keepContent(store: ArtifactStore, sha256: string, content: Buffer | string): Promise<void> {
  const target = artifactPath(store.dataDir, store.organization, sha256);
  if (
    await stat(target).then(
      () => true,
      () => false,
    )
  )
    return;
  const sealing = store.sealer === null ? unsealed : await store.sealer.begin(store.organization, sha256);
  await mkdir(path.dirname(target), { recursive: true });
  const temporary = path.join(path.dirname(target), `.tmp-${randomBytes(6).toString('hex')}`);
  const output = await open(temporary, 'wx', 0o600);
  try {
    await output.write(sealing.header);
    if (typeof content !== 'string') await output.write(sealing.update(content));
    else for await (const chunk of createReadStream(content)) await output.write(sealing.update(chunk as Buffer));
    await output.write(sealing.final());
    await output.close();
    await rename(temporary, target);
  } finally {
    await output.close().catch(() => undefined);
    await rm(temporary, { force: true });
  }
}
