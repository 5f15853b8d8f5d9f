import type { HostLookup } from './clone-guard';
import { stepsStarting, TempDirs, testRunner, trialSpec } from '../../test/support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

/** The operator allows nothing beyond https to public hosts; this resolver answers for the test's names only. */
const STRICT = { allowUnsandboxed: true, repositories: {} };
const names: Record<string, string[]> = { 'git.inside.test': ['203.0.113.5', '10.0.0.7'], 'git.mapped.test': ['::ffff:169.254.169.254'] };
const lookupHost: HostLookup = async (host) => {
  if (host in names) return names[host];
  throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' });
};

/**
 * At clone time the trial checks the source again (the batch may have been started under
 * other settings) and resolves its host: no clone runs when any address is not public.
 */
describe('the clone refuses repositories the operator does not allow', () => {
  const repoTrial = async (url: string) => {
    const { runner } = testRunner(dirs, { rawConfig: STRICT, lookupHost });
    return runner.run(trialSpec({ source: { kind: 'repo', url, ref: null } }));
  };

  it.each([
    ['https://127.0.0.1:1/x.git', /^the repository url names 127\.0\.0\.1, a loopback, link-local or private address/],
    ['file:///tmp/repo', /^the repository url names a repository on the server itself/],
    ['ext::sh', /^the repository url names a git remote helper/],
    ['git@git.inside.test:org/x.git', /^the repository url uses ssh/],
    ['https://git.inside.test/org/x.git', /^the repository host git\.inside\.test resolves to 10\.0\.0\.7, a loopback, link-local or private address/],
    ['https://git.mapped.test/org/x.git', /resolves to ::ffff:169\.254\.169\.254/],
    ['https://git.absent.test/org/x.git', /^cannot resolve the repository host git\.absent\.test \(ENOTFOUND\)/],
  ])('voids a trial of %s before any git command', async (url, failure) => {
    const outcome = await repoTrial(url);
    expect(outcome.status).toBe('void');
    expect(outcome.voidFields).toEqual(['source']);
    expect(outcome.serviceFault).toBe(false);
    expect(outcome.failure).toMatch(failure);
    expect(stepsStarting(outcome, 'git')).toEqual([]);
  });
});
