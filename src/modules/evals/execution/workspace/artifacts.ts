import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { TrialArtifact } from '../trial-runner.port';
import type { Snapshot } from './snapshot';

/**
 * The files the agent added or changed, kept by content under `<dataDir>/artifacts/<sha256>`.
 * Content-addressed, so each is written once however many trials produce it; a temporary name
 * and a rename keep a half-written copy from ever carrying the final name.
 */
export async function storeArtifacts(dataDir: string, workspace: string, before: Snapshot, after: Snapshot): Promise<TrialArtifact[]> {
  const store = path.join(dataDir, 'artifacts');
  const artifacts: TrialArtifact[] = [];
  for (const [relative, entry] of after) {
    if (!entry.regular || entry.size < 1 || before.get(relative)?.sha256 === entry.sha256) continue;
    await keepContent(store, path.join(workspace, relative), entry.sha256);
    artifacts.push({ path: relative, byteSize: entry.size, sha256: entry.sha256 });
  }
  return artifacts.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function artifactPath(dataDir: string, sha256: string): string {
  return path.join(dataDir, 'artifacts', sha256);
}

async function keepContent(store: string, source: string, sha256: string): Promise<void> {
  const target = path.join(store, sha256);
  if (await stat(target).then(() => true, () => false)) return;
  await mkdir(store, { recursive: true });
  const temporary = path.join(store, `.tmp-${randomBytes(6).toString('hex')}`);
  try {
    await copyFile(source, temporary);
    await rename(temporary, target);
  } finally {
    await rm(temporary, { force: true });
  }
}
