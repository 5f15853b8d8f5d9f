import { OutputCollector } from '../output/captured-output';
import { findHostTool } from './host-tools';
import { SpawnHelper } from './process-launcher';
import { processDriver } from './sandbox-driver';
import { runCommand } from './sandboxed-command';
import { DEFAULT_TRIAL_LIMITS } from '../trial-limits';
import { tempDir } from '../../../test/support/temp-dirs';
import { processesWith } from '../../../test/support/processes';

const kinds = findHostTool('python3') === null ? (['node'] as const) : (['python', 'node'] as const);

/**
 * The process driver's command through a spawn helper, which names its pid only once it spawned:
 * a stop that comes before must still kill the command and everything it started.
 */
describe.each(kinds)('a process-driver command through the %s spawn helper', (kind) => {
  const workspace = tempDir('assay-abort-');
  const options = { trialDir: workspace, workspace, network: false, user: null, limits: DEFAULT_TRIAL_LIMITS };

  it.each([
    ['aborted before its pid is known', 0],
    ['aborted while it runs', 500],
  ])('%s, ends at once, its children killed with it', async (_name, afterMs) => {
    const marker = `31.${kind.length}${afterMs}4159`;
    const launch = processDriver.launch(`sleep ${marker} & sleep ${marker}`, options);
    const stop = new AbortController();
    const started = Date.now();
    const result = runCommand({
      launch,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdin: null,
      timeoutMs: 60_000,
      signal: stop.signal,
      collector: new OutputCollector(1024, 0),
      launcher: new SpawnHelper(kind),
    });
    if (afterMs === 0) stop.abort();
    else setTimeout(() => stop.abort(), afterMs);
    expect(await result).toMatchObject({ aborted: true, timedOut: false, exitCode: null, status: 137 });
    expect(Date.now() - started).toBeLessThan(afterMs + 5000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(processesWith(marker)).toEqual([]);
  });

  it('times out before its pid is known as well', async () => {
    const marker = `32.${kind.length}4159`;
    const launch = processDriver.launch(`sleep ${marker}`, options);
    const result = await runCommand({
      launch,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdin: null,
      timeoutMs: 1,
      collector: new OutputCollector(1024, 0),
      launcher: new SpawnHelper(kind),
    });
    expect(result).toMatchObject({ timedOut: true, exitCode: null });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(processesWith(marker)).toEqual([]);
  });
});
