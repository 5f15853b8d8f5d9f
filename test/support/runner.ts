import { startBody } from './evals';

/** A start body whose one variant runs on the local runner's machine (sandbox `local`). */
export function localBody(overrides: Record<string, unknown> = {}): Record<string, any> {
  return startBody({
    variants: [{ harness: 'command', model: 'none', sandbox: 'local', profile: { run: 'echo "$ASSAY_PROMPT" > prompt.txt; echo hello > out.txt' } }],
    ...overrides,
  });
}

/** A report body for a trial the runner passed with one command. */
export function passedResult(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    status: 'passed',
    exitCode: 0,
    failure: null,
    voidFields: [],
    serviceFault: false,
    timed: false,
    trajectory: [
      {
        _tag: 'command',
        command: 'echo hello > out.txt',
        exitCode: 0,
        startedAtMillis: 1_700_000_000_000,
        finishedAtMillis: 1_700_000_000_020,
        output: '',
        outputTruncated: false,
      },
    ],
    verifySteps: [{ command: 'grep -q hello out.txt', exitCode: 0 }],
    filesChanged: ['out.txt'],
    artifacts: [{ path: 'out.txt', byteSize: 6, sha256: '5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03' }],
    modelMs: 0,
    sandboxMs: 20,
    sandboxId: 'sbx_local',
    usage: null,
    harnessVersion: null,
    sandboxDriver: 'bubblewrap',
    ...overrides,
  };
}
