import { startBody, waitForBatch } from '../support/evals';
import { ChildServer, INIT_KEY, startChild, tempDir } from '../support/servers';

const SECRET = 'sk-diff-secret-value-5e4d3c';

/** An agent that edits two files, adds one, adds a binary file, fills an ignored folder, deletes one, and writes a secret into a file. */
const AGENT = [
  "printf 'one\\nTWO\\nthree\\n' > notes.txt",
  "printf 'def f():\\n    return 2\\n' > src/app.py",
  "printf 'new file\\n' > src/added.md",
  "printf '\\000\\001\\002' > image.bin",
  'mkdir -p __pycache__ && printf "\\000cache" > __pycache__/app.pyc',
  'rm gone.txt',
  'echo "key=$TOKEN" > config.env',
].join(' && ');

describe('evals.trials.diff and evals.trials.artifact', () => {
  let server: ChildServer;
  let trialId: string;

  beforeAll(async () => {
    server = await startChild({ ASSAY_DATA_DIR: tempDir(), ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    const body = startBody({
      cases: [
        {
          id: 'edit-things',
          variables: { word: 'hello' },
          // Verify changes the workspace while the patch is made: the diff is the agent's change, not verify's.
          verify: "sleep 0.2; printf 'by verify\\n' > notes.txt; echo made > verify-made.txt",
          source: {
            kind: 'files',
            files: {
              'notes.txt': 'one\ntwo\nthree\n',
              'src/app.py': 'def f():\n    return 1\n',
              'gone.txt': 'bye\n',
              '.gitignore': '__pycache__/\n',
            },
          },
        },
      ],
      variants: [{ harness: 'command', model: 'none', profile: { run: AGENT } }],
    });
    // The organization's secret variable: redacted wherever the trial's output or files hold it.
    await server.client.call('environment.set', { variables: [{ name: 'TOKEN', value: SECRET, secret: true }] });
    const started = await server.client.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    const trial = (await waitForBatch(server.client, started.body.id)).runs[0].trials[0];
    expect(trial.status).toBe('passed');
    trialId = trial.id;
  });

  afterAll(async () => {
    await server.stop();
  });

  it('lists what the agent changed and diffs the text files; binary files by size; ignored paths left out; secrets redacted', async () => {
    const answer = await server.client.call('evals.trials.diff', { trialId });
    expect(answer.status).toBe(200);
    const { files, patch, truncated, recorded } = answer.body;
    expect([recorded, truncated]).toEqual([true, false]);
    expect(files.map((file: any) => [file.path, file.change, file.binary, file.diffed])).toEqual([
      ['config.env', 'added', false, true],
      ['gone.txt', 'deleted', false, true],
      ['image.bin', 'added', true, false],
      ['notes.txt', 'modified', false, true],
      ['src/added.md', 'added', false, true],
      ['src/app.py', 'modified', false, true],
    ]);
    expect(files.find((file: any) => file.path === 'image.bin')).toMatchObject({ bytesBefore: null, bytesAfter: 3 });
    expect(patch).toContain('diff --git a/notes.txt b/notes.txt');
    expect(patch).toContain('-two\n+TWO\n');
    expect(patch).toContain('-    return 1\n+    return 2\n');
    expect(patch).toContain('+new file\n');
    expect(patch).toContain('-bye\n');
    expect(patch).toContain('+key=[redacted]');
    expect(patch).not.toContain(SECRET);
    expect(patch).not.toContain('__pycache__');
    expect(patch).not.toContain('by verify');
    expect(patch).not.toContain('verify-made.txt');
  });

  it('opens a text artifact as the trial kept it, and a binary one in base64', async () => {
    const text = await server.client.call('evals.trials.artifact', { trialId, path: 'src/app.py' });
    expect(text.status).toBe(200);
    expect(text.body).toMatchObject({ path: 'src/app.py', encoding: 'utf8', content: 'def f():\n    return 2\n', byteSize: 22 });
    const binary = await server.client.call('evals.trials.artifact', { trialId, path: 'image.bin' });
    expect(binary.body).toMatchObject({ encoding: 'base64', content: Buffer.from([0, 1, 2]).toString('base64') });
    const redacted = await server.client.call('evals.trials.artifact', { trialId, path: 'config.env' });
    expect(redacted.body.content).toBe('key=[redacted]\n');
  });

  it.each([
    ['diff, an empty trialId', 'evals.trials.diff', 400, { trialId: '' }],
    ['diff, a trialId of 201 characters', 'evals.trials.diff', 400, { trialId: 'x'.repeat(201) }],
    ['diff, a trialId of 200 characters', 'evals.trials.diff', 404, { trialId: 'x'.repeat(200) }],
    ['diff, no trialId', 'evals.trials.diff', 400, {}],
    ['diff, an unknown property', 'evals.trials.diff', 400, { trialId: 'trl_x', extra: 1 }],
    ['artifact, an empty path', 'evals.trials.artifact', 400, { trialId: 'trl_x', path: '' }],
    ['artifact, a path of 4097 characters', 'evals.trials.artifact', 400, { trialId: 'trl_x', path: 'p'.repeat(4097) }],
    ['artifact, a path of 4096 characters', 'evals.trials.artifact', 404, { trialId: 'trl_x', path: 'p'.repeat(4096) }],
    ['artifact, no path', 'evals.trials.artifact', 400, { trialId: 'trl_x' }],
  ])('%s: %s answers %i', async (_label, operation, status, body) => {
    const answer = await server.client.call(operation, body);
    expect(answer.status).toBe(status);
    expect(typeof answer.body._tag).toBe('string');
  });

  it('answers 404 for an artifact the trial does not have', async () => {
    const missing = await server.client.call('evals.trials.artifact', { trialId, path: 'nope.txt' });
    expect([missing.status, missing.body._tag]).toEqual([404, 'NotFound']);
    expect(missing.body.message).toContain('has no artifact "nope.txt"');
  });
});
