import * as path from 'node:path';
import type { AssayApi } from './api-client';

/** What a local batch needs of the run: the runner library's `LocalBatchOptions` (src/cli/local/local-runner.ts). */
export interface LocalStart {
  api: AssayApi;
  body: unknown;
  headers: Record<string, string>;
  concurrency: number;
  env: Record<string, string>;
  signal: AbortSignal;
  log: (line: string) => void;
}

export interface LocalBatch {
  batchId: string;
  runs: Array<{ caseId: string; id: string; variantId: string }>;
  done: Promise<{ cancelled: boolean }>;
}

type StartLocalBatch = (options: LocalStart) => Promise<LocalBatch>;

/**
 * The one file of the eval command that knows the local runner: it starts the batch through the
 * runner endpoints and runs its trials on this machine, in the server's own trial runner. The
 * runner library arrives with its own work (issue 16, runner side); until then it is loaded by
 * path so the remote mode builds and runs without it.
 */
export async function startLocalBatch(options: LocalStart): Promise<LocalBatch> {
  let runner: { startLocalBatch?: StartLocalBatch };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- until the runner library is merged (see above); then a static import
    runner = require(path.join(__dirname, '..', 'local', 'local-runner')) as { startLocalBatch?: StartLocalBatch };
  } catch {
    throw new Error('This build of assay has no local runner yet; run the suite on a server (remove sandbox: local and --local).');
  }
  if (!runner.startLocalBatch) throw new Error('The local runner of this build does not export startLocalBatch.');
  return runner.startLocalBatch(options);
}

/** The user's variables the file lists by name, read from this process's environment; the missing ones by name. */
export function localEnvironment(names: string[], env: NodeJS.ProcessEnv): { values: Record<string, string>; missing: string[] } {
  const values: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of names) {
    const value = env[name];
    if (value === undefined) missing.push(name);
    else values[name] = value;
  }
  return { values, missing };
}
