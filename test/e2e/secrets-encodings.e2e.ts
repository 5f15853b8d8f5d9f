import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { openKeyRing } from '#infrastructure/secrets/key-ring';
import { environmentDecider } from '#modules/environment/environment.decider';
import { environmentStream } from '#modules/environment/environment.events';
import { previewOf } from '#modules/environment/variable-rules';
import { artifactPath } from '#trial-runner';
import { newId } from '#shared/ids';
import { startBody, waitForBatch } from '../support/evals';
import { ApiClient } from '../support/http-client';
import { filesUnder, INIT_KEY, InProcessServer, startInProcess, tempDir, waitUntil } from '../support/servers';

/** Characters that base64, percent-encoding and shells all treat specially. */
const ENV_SECRET = 'env/secret+value=1&more?x y';
const CONNECTOR_KEY = 'sk-conn/ect+or=key&9z~';
const SANDBOX_TOKEN = 'sbx/token+0=ab&cd%ef';
const SECRETS = [ENV_SECRET, CONNECTOR_KEY, SANDBOX_TOKEN];
const CONFIG = `
allowUnsandboxed: true
sandboxes:
  sandbox_kind_1: { driver: process }
`;

/** Each secret printed in every form a trial might use, one per line, then written into an artifact. */
const PRINT_FORMS = [
  'for S in "$ENV_SECRET" "$ASSAY_HARNESS_API_KEY" "$ASSAY_SANDBOX_TOKEN"; do',
  '  printf "%s\\n" "$S"',
  '  for P in "" x xy; do printf "%s%s" "$P" "$S" | base64 -w0; echo; printf "%s%s" "$P" "$S" | base64 -w0 | tr "+/" "-_"; echo; done',
  '  printf "%s\\n" "$S" | rev',
  '  printf %s "$S" | xxd -p; printf %s "$S" | xxd -p | tr a-f A-F',
  '  printf %s "$S" | od -An -tx1 -v | tr -d " \\n" | sed "s/../%&/g"; echo',
  '  printf %s "$S" | od -An -tx1 -v | tr -d " \\n" | sed "s/../%&/g" | tr a-f A-F; echo',
  '  node -e "process.stdout.write(encodeURIComponent(process.argv[1]) + String.fromCharCode(10))" "$S"',
  'done',
  'echo visible-marker',
].join('\n');
/** Past 16 MiB an artifact is streamed through the sealer rather than read whole. */
const BIG_BYTES = 17 * 1024 * 1024 + 5;
const RUN = `(${PRINT_FORMS}) | tee forms.txt; printf 'token=%s\\n' "$ENV_SECRET" > secret.txt; head -c ${BIG_BYTES} /dev/urandom > big.bin`;

const sha256 = (content: string | Buffer) => createHash('sha256').update(content).digest('hex');

/** Every form the trial printed, as this test computes them: none may be found anywhere. */
function forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const found = [secret, Array.from(secret).reverse().join(''), bytes.toString('hex'), bytes.toString('hex').toUpperCase(), encodeURIComponent(secret)];
  found.push(bytes.toString('hex').replace(/../g, '%$&'), bytes.toString('hex').toUpperCase().replace(/../g, '%$&'));
  for (const prefix of ['', 'x', 'xy']) {
    const encoded = Buffer.concat([Buffer.from(prefix), bytes]).toString('base64');
    // The characters that depend on the secret's bytes alone, whatever precedes or follows it.
    const inner = encoded.slice(Math.ceil((8 * prefix.length) / 6), Math.floor((8 * (prefix.length + bytes.length)) / 6));
    found.push(encoded, inner, inner.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return found;
}

describe('secrets are redacted in their common encodings, and artifacts are sealed at rest', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let configDir: string;
  let batchId: string;

  beforeAll(async () => {
    configDir = tempDir('assay-cfg-');
    fs.writeFileSync(path.join(configDir, 'assay.yaml'), CONFIG);
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_CONFIG: path.join(configDir, 'assay.yaml') });
    api = server.client;
  });

  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- server is unassigned when beforeAll failed; afterAll must still clean up
    await server?.close();
    fs.rmSync(configDir, { recursive: true, force: true });
  });

  it('keeps no encoded form of any secret in answers, the event log, the data directory or the logs', async () => {
    expect((await api.call('environment.set', { variables: [{ name: 'ENV_SECRET', value: ENV_SECRET }] })).status).toBe(200);
    const harness = await api.call('connectors.add', {
      integrationId: 'harness_kind_1',
      authMethodId: 'api-key',
      name: 'enc key',
      values: { apiKey: CONNECTOR_KEY },
    });
    const sandbox = await api.call('connectors.add', {
      integrationId: 'sandbox_kind_1',
      authMethodId: 'api-token',
      name: 'enc token',
      values: { token: SANDBOX_TOKEN },
    });
    expect([harness.status, sandbox.status]).toEqual([200, 200]);
    const verify = `test "$(printf %s "$ENV_SECRET$ASSAY_HARNESS_API_KEY$ASSAY_SANDBOX_TOKEN" | sha256sum | cut -d' ' -f1)" = ${sha256(SECRETS.join(''))}`;
    const body = startBody({
      cases: [{ id: 'prints-secrets', variables: { word: 'x' }, verify }],
      variants: [
        {
          harness: 'command',
          model: 'none',
          sandbox: 'sandbox_kind_1',
          credentials: { harnessConnectionId: harness.body.id, sandboxConnectionId: sandbox.body.id },
          profile: { run: RUN },
        },
      ],
    });
    const started = await api.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    batchId = started.body.id;
    const batch = await waitForBatch(api, batchId);
    const run = batch.runs[0];
    const trial = run.trials[0];
    expect({ status: trial.status, failure: trial.failure }).toEqual({ status: 'passed', failure: null });
    const printed = trial.trajectory.map((entry: { output: string }) => entry.output).join('\n');
    // The control: the trial did print, and each of the 13 lines of a secret's forms holds [redacted].
    expect(printed).toContain('visible-marker');
    expect(printed.split('[redacted]').length - 1).toBeGreaterThanOrEqual(3 * 13);

    const answers = [
      (await api.call('evals.batches.get', { id: batch.id })).text,
      (await api.call('evals.runs.get', { id: run.id })).text,
      (await api.call('evals.runs.list', { caseId: 'prints-secrets', page: 1, variant: started.body.runs[0].variantId })).text,
    ];
    expect(answers[2]).toContain(run.id);
    const files = new Map(filesUnder(server.dataDir).map((file) => [file, fs.readFileSync(file)]));
    expect([...files.values()].some((bytes) => bytes.includes('visible-marker'))).toBe(true);
    const logs = server.logs.lines.join('\n');
    for (const secret of SECRETS) {
      for (const form of forms(secret)) {
        for (const [index, answer] of answers.entries())
          expect({ answer: index, form, found: answer.includes(form) }).toEqual({ answer: index, form, found: false });
        for (const [file, bytes] of files) expect({ file, form, found: bytes.includes(form) }).toEqual({ file, form, found: false });
        expect({ form, inLogs: logs.includes(form) }).toEqual({ form, inLogs: false });
      }
    }
  });

  it('seals an artifact under the data key: its content is nowhere in the clear, and it opens to what byteSize and sha256 describe', async () => {
    const trial = (await waitForBatch(api, batchId)).runs[0].trials[0];
    const artifact = trial.artifacts.find((entry: { path: string }) => entry.path === 'secret.txt');
    const kept = 'token=[redacted]\n';
    expect(artifact).toEqual({ path: 'secret.txt', byteSize: Buffer.byteLength(kept), sha256: sha256(kept) });
    const stored = fs.readFileSync(artifactPath(server.dataDir, 'acme', artifact.sha256));
    expect(stored.includes('token=')).toBe(false);
    for (const file of filesUnder(server.dataDir)) expect({ file, found: fs.readFileSync(file).includes(kept) }).toEqual({ file, found: false });
    const opened = await openKeyRing(server.runtime).openFile({ kind: 'artifact', organization: 'acme', sha256: artifact.sha256 }, stored);
    expect(opened.toString('utf8')).toBe(kept);
    const big = trial.artifacts.find((entry: { path: string }) => entry.path === 'big.bin');
    expect(big.byteSize).toBe(BIG_BYTES);
    const bigStored = fs.readFileSync(artifactPath(server.dataDir, 'acme', big.sha256));
    const bigOpened = await openKeyRing(server.runtime).openFile({ kind: 'artifact', organization: 'acme', sha256: big.sha256 }, bigStored);
    expect({ byteSize: bigOpened.length, sha256: sha256(bigOpened) }).toEqual({ byteSize: BIG_BYTES, sha256: big.sha256 });
    // Bound to its organization: another one's key ring cannot open it even by asking.
    await expect(openKeyRing(server.runtime).openFile({ kind: 'artifact', organization: 'globex', sha256: artifact.sha256 }, stored)).rejects.toThrow();
  });

  it('refuses a connector secret field under 8 characters with 400 naming the field, and stores nothing', async () => {
    const before = (await api.call('connectors.list')).body;
    const answer = await api.call('connectors.add', { integrationId: 'harness_kind_2', authMethodId: 'api-key', name: 'short', values: { apiKey: 'sk-1234' } });
    expect(answer.status).toBe(400);
    expect(answer.body._tag).toBe('HttpApiDecodeError');
    expect(answer.body.issues).toEqual([expect.objectContaining({ _tag: 'Refinement', path: ['values', 'apiKey'] })]);
    expect(answer.text).not.toContain('sk-1234');
    expect((await api.call('connectors.list')).body).toEqual(before);
  });

  it('keeps working with a short secret stored before the minimum: listed, given to trials, replaced as itself', async () => {
    // Stored as an older server did, through the domain's own decider: the API now refuses it.
    const organization = 'acme';
    const sealedValue = await openKeyRing(server.runtime).seal({ kind: 'variable', organization, name: 'OLD_PIN' }, 'pin42');
    const variable = { name: 'OLD_PIN', secret: true, sealedValue, preview: previewOf('pin42', true), newVariableId: newId('env') };
    const metadata = { organization, actor: 'test:older-server', correlationId: 'legacy-pin', causationId: 'legacy-pin' };
    await executeOnStream(
      server.runtime.eventStore,
      environmentStream(organization),
      environmentDecider,
      { type: 'SetVariables', organization, variables: [variable], now: new Date() },
      metadata,
    );

    // The read model follows the log: wait for it, as a reader after an older server's write would.
    await waitUntil(async () => (await api.call('environment.list', {})).body.some((listed: { name: string }) => listed.name === 'OLD_PIN'), 10000, 50);
    const listed = await api.call('environment.list', {});
    expect(listed.body).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'OLD_PIN', secret: true, preview: '••••••••' })]));
    const body = startBody({
      cases: [{ id: 'old-pin', variables: { word: 'x' }, verify: 'test "$OLD_PIN" = pin42' }],
      variants: [{ harness: 'command', model: 'none', profile: { run: 'echo "pin=$OLD_PIN"' } }],
    });
    const batch = await waitForBatch(api, (await api.call('evals.batches.start', body)).body.id);
    const trial = batch.runs[0].trials[0];
    expect({ status: trial.status, failure: trial.failure }).toEqual({ status: 'passed', failure: null });
    expect(trial.trajectory.map((entry: { output: string }) => entry.output).join('')).toContain('pin=[redacted]');
  });
});
