import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeRepositoryIn, startBody, waitForBatch } from '../support/evals';
import { CLI, INIT_KEY, InProcessServer, ROOT, startInProcess, tempDir } from '../support/servers';

/** A repository the test makes outside /tmp (the clone reads it through a read-only bind), removed at the end. */
const outside: string[] = [];
function repositoryUnder(parent: string): string {
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.mkdtempSync(path.join(parent, 'assay-repo-'));
  outside.push(dir);
  return makeRepositoryIn(dir).url;
}
afterAll(() => {
  for (const dir of outside) fs.rmSync(dir, { recursive: true, force: true });
  for (const parent of new Set(outside.map((dir) => path.dirname(dir)))) if (fs.readdirSync(parent).length === 0) fs.rmdirSync(parent);
});

function configFile(yaml: string): string {
  const file = path.join(tempDir('assay-cfg-'), 'assay.yaml');
  fs.writeFileSync(file, yaml);
  return file;
}

/** A case whose workspace is the repository's clone: it passes when the clone holds the second commit. */
const repoCase = (url: string) => ({
  id: 'reads-repo',
  variables: { word: 'x' },
  verify: 'grep -qx two version.txt',
  source: { kind: 'repo', url, ref: null },
});
const statuses = (batch: any) => batch.runs.flatMap((run: any) => run.trials.map((trial: any) => [trial.status, trial.failure]));

/**
 * Local repositories (a path, or file://) outside /tmp: the clone's sandbox binds the repository
 * read-only, so what `repositories.allowLocal` accepts at start is what the trial clones. A
 * refusal names the setting; in local mode the user's own repositories are allowed by default
 * and messages say "this machine". The clone's sandbox has a private /tmp like every other.
 */
describe('local repositories on the server', () => {
  let server: InProcessServer;
  // In the user's home (hidden from sandboxes as a whole, 0700) and in the project's tree.
  const home = repositoryUnder(path.join(os.homedir(), '.cache', 'assay-test-repos'));
  const project = repositoryUnder(path.join(ROOT, 'node_modules', '.cache', 'assay-test-repos'));

  beforeAll(async () => {
    server = await startInProcess({
      ASSAY_INIT_ORG: 'acme',
      ASSAY_INIT_API_KEY: INIT_KEY,
      ASSAY_CONFIG: configFile('allowUnsandboxed: true\nrepositories: { allowLocal: true }\n'),
    });
  });
  afterAll(() => server.close());

  const run = async (url: string) => {
    const started = await server.client.call('evals.batches.start', startBody({ cases: [repoCase(url)], trials: 1 }));
    expect(started.status).toBe(200);
    return waitForBatch(server.client, started.body.id);
  };

  it.each([
    ['a path in the home directory', () => home],
    ['a file:// URL in the home directory', () => pathToFileURL(home).href],
    ["a path in the project's tree", () => project],
  ])('clones %s in the trial sandbox', async (_name, url) => {
    expect(statuses(await run(url()))).toEqual([['passed', null]]);
  });

  it('voids, before any git command, a repository that does not exist or lies inside what trials never see, saying why', async () => {
    expect(statuses(await run('/nonexistent/assay-repo'))).toEqual([['void', 'the repository /nonexistent/assay-repo does not exist on the server']]);
    const inData = makeRepositoryIn(fs.mkdtempSync(path.join(server.dataDir, 'repo-'))).url;
    const [[status, failure]] = statuses(await run(inData));
    expect(status).toBe('void');
    expect(failure).toBe(
      `the repository ${inData} lies inside ${fs.realpathSync(server.dataDir)}, which trials never see: name a repository elsewhere on the server`,
    );
  });

  it('refuses a relative path at start with 400, naming the field', async () => {
    const answer = await server.client.call('evals.batches.start', startBody({ cases: [repoCase('../repo')] }));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ _tag: 'BadRequest', message: expect.stringContaining('cases[0].source.url is a relative path; give the repository') });
  });

  it("refuses a local repository on a server that does not allow one, naming repositories.allowLocal in the server's ASSAY_CONFIG", async () => {
    const strict = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_CONFIG: configFile('allowUnsandboxed: true\n') });
    try {
      const answer = await strict.client.call('evals.batches.start', startBody({ cases: [repoCase(home)] }));
      expect(answer.status).toBe(400);
      expect(answer.body.message).toBe(
        "cases[0].source.url names a repository on the server itself (a path or file://), which this server does not allow: set repositories.allowLocal: true in the server's ASSAY_CONFIG, or use https://.",
      );
    } finally {
      await strict.close();
    }
  });
});

describe('local repositories in local mode (`assay eval`, the built CLI as a child process)', () => {
  let server: InProcessServer;
  const home = repositoryUnder(path.join(os.homedir(), '.cache', 'assay-test-repos'));
  let dir: string;

  beforeAll(async () => {
    // The server allows no local repository: a local batch clones on the user's machine, under its rules.
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_CONFIG: configFile('allowUnsandboxed: true\n') });
    dir = tempDir('assay-local-repo-');
  });
  afterAll(() => server.close());

  const suite = (name: string, url: string, variants = ['local']) => {
    const file = path.join(dir, `${name}.yaml`);
    const lines = [
      `name: ${name}`,
      `suite: { id: ${name}, prompt: "Read the repository" }`,
      'cases:',
      `  - { id: reads-repo, verify: "grep -qx two version.txt", source: { kind: repo, url: "${url}", ref: null } }`,
      'variants:',
      ...variants.map(
        (sandbox, index) => `  - { harness: command, model: none, ${sandbox === 'local' ? 'sandbox: local, ' : ''}profile: { name: v${index}, run: "true" } }`,
      ),
      'trials: 1',
      '',
    ];
    fs.writeFileSync(file, lines.join('\n'));
    return file;
  };
  /** The user's ASSAY_CONFIG allows plain processes (hosts without bubblewrap) and says nothing of repositories unless told. */
  const cli = (file: string, userConfig = 'allowUnsandboxed: true\n') =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const env = {
        PATH: process.env.PATH ?? '',
        ASSAY_URL: server.url,
        ASSAY_API_KEY: INIT_KEY,
        ASSAY_CONFIG: configFile(userConfig),
        TMPDIR: tempDir('assay-cli-tmp-'),
      };
      execFile(process.execPath, [CLI, 'eval', file, '--no-progress'], { env, cwd: dir }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const batchOf = async (stdout: string) => (await server.client.call('evals.batches.get', { id: /batch (bat_[a-z0-9]+)/.exec(stdout)![1] })).body;

  it("clones the user's own repository by default, wherever it is on this machine", async () => {
    const result = await cli(suite('own-repo', home));
    expect(result.code).toBe(0);
    expect(statuses(await batchOf(result.stdout))).toEqual([['passed', null]]);
  });

  it('says "this machine" when its ASSAY_CONFIG refuses local repositories, or the repository is not there', async () => {
    const refused = await cli(suite('refused-repo', home), 'allowUnsandboxed: true\nrepositories: { allowLocal: false }\n');
    expect(statuses(await batchOf(refused.stdout))).toEqual([
      [
        'void',
        "the repository url names a repository on this machine (a path or file://), which this machine's ASSAY_CONFIG does not allow: set repositories.allowLocal: true in it, or use https://",
      ],
    ]);
    const missing = await cli(suite('missing-repo', '/nonexistent/assay-repo'));
    expect(statuses(await batchOf(missing.stdout))).toEqual([['void', 'the repository /nonexistent/assay-repo does not exist on this machine']]);
  });

  it('leaves to the server what the server clones: a runner batch with a variant that runs there is refused at start (runner.batches.start over HTTP)', async () => {
    const variants = [
      { harness: 'command', model: 'none', sandbox: 'local', profile: { run: 'true' } },
      { harness: 'command', model: 'none', profile: { run: 'true' } },
    ];
    const body = { ...startBody({ cases: [repoCase(home)], variants }), checksIn: true };
    const mixed = await server.client.call('runner.batches.start', body);
    expect(mixed.status).toBe(400);
    expect(mixed.body.message).toContain(
      'names a repository on the server itself (a path or file://), which this server does not allow: set repositories.allowLocal: true',
    );
    const localOnly = await server.client.call('runner.batches.start', { ...body, variants: [variants[0]] });
    expect(localOnly.status).toBe(200);
    expect((await server.client.call('runner.batches.finish', { id: localOnly.body.id, cancelled: true })).status).toBe(200);
  });
});
