import { spawnSync } from 'node:child_process';
import { AGENT_DRIVERS } from '#trial-runner';
import { installForTest, TEST_AGENTS_DIR } from '../support/agents';
import { CLI, tempDir } from '../support/servers';

/** `assay agents install`, the real CLI as a child process: what it refuses, and an install it finds made. */
describe('assay agents install', () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, 'agents', 'install', ...args], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: tempDir('assay-home-'), ASSAY_AGENTS_DIR: TEST_AGENTS_DIR, ASSAY_CONFIG: '' },
      timeout: 600_000,
    });

  it.each([
    ['an unknown agent', ['aider'], 'Unknown agent "aider"'],
    ['a version that is not exact', ['pi@latest'], 'give an exact version, e.g. pi@'],
    ['a version range', ['pi@^0.73.1'], 'give an exact version'],
    ['no agent and no ASSAY_CONFIG', [], 'Name the agents to install'],
  ])('refuses %s with exit 64, saying what to give', (_label, args, words) => {
    const result = run(...args);
    expect(result.status).toBe(64);
    expect(result.stderr).toContain(words);
  });

  it('reports an agent installed at its pinned version ready, and exits 0', async () => {
    const installed = await installForTest('pi');
    if ('failure' in installed) {
      process.stderr.write(`pi could not be installed, so this test is skipped: ${installed.failure}\n`);
      return;
    }
    const result = run(`pi@${AGENT_DRIVERS.pi.pinnedVersion}`);
    expect([result.status, result.stdout]).toEqual([0, expect.stringContaining(`ready (${AGENT_DRIVERS.pi.pinnedVersion})`)]);
  }, 600_000);
});
