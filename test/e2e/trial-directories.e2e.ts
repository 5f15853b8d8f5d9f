import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { startBody } from '../support/evals';
import { ChildServer, childServersPerTest, INIT_KEY, waitUntil } from '../support/servers';
import { TempDirs } from '../support/trial-fixtures';

const dirs = new TempDirs();
const startServerChild = childServersPerTest();
afterAll(() => dirs.removeAll());

/** Each server instance's directory under `<tmp>/assay-trials`, with its trial directories. */
function instances(tmp: string): Map<string, string[]> {
  const parent = path.join(tmp, 'assay-trials');
  const found = new Map<string, string[]>();
  if (!existsSync(parent)) return found;
  for (const name of readdirSync(parent)) {
    found.set(
      name,
      readdirSync(path.join(parent, name)).filter((entry) => entry.startsWith('sbx_')),
    );
  }
  return found;
}

async function server(dataDir: string, tmp: string): Promise<ChildServer> {
  return startServerChild({ ASSAY_DATA_DIR: dataDir, TMPDIR: tmp, ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
}

/** Starts a batch of two slow trials and answers the instance directory once both have their directories. */
async function slowTrials(child: ChildServer, tmp: string, known: Set<string>): Promise<string> {
  const body = startBody({ variants: [{ harness: 'command', model: 'm', profile: { run: 'sleep 120' } }], trials: 2 });
  expect((await child.client.call('evals.batches.start', body)).status).toBe(200);
  let mine = '';
  await waitUntil(async () => {
    for (const [name, trials] of instances(tmp)) if (!known.has(name) && trials.length === 2) mine = name;
    return mine !== '';
  }, 30000);
  return mine;
}

describe('trial directories of a killed server', () => {
  it('are removed by the next start, and a live instance keeps its own', async () => {
    const tmp = dirs.make('assay-tmp-');
    const dataDir = dirs.make('assay-data-');
    const killed = await server(dataDir, tmp);
    const killedInstance = await slowTrials(killed, tmp, new Set());
    const live = await server(dirs.make('assay-data-'), tmp);
    const liveInstance = await slowTrials(live, tmp, new Set([killedInstance]));
    await killed.stop('SIGKILL');
    expect(instances(tmp).get(killedInstance)).toHaveLength(2);

    const restarted = await server(dataDir, tmp);
    expect(instances(tmp).has(killedInstance)).toBe(false);
    expect(instances(tmp).get(liveInstance)).toHaveLength(2);
    expect(restarted.output()).toContain('removed the trial directories of stopped server instances');

    // Stopped cleanly, each instance removes its own directory, and the last one the parent.
    expect(await live.stop('SIGTERM')).toBe(0);
    expect(await restarted.stop('SIGTERM')).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
