import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { EVENT_LOG_FILE } from '../../src/runtime';
import { deriveChainKey } from '#infrastructure/secrets/chain-key';
import { masterKeyPath, readMasterKeyFile } from '#infrastructure/secrets/master-key';
import { sha256Hex, canonicalJson } from '#shared/hash';
import { describeWithBubblewrap } from '../support/bubblewrap';
import { startBody, waitForBatch } from '../support/evals';
import type { Answer, ApiClient } from '../support/http-client';
import { CLI, INIT_KEY, InProcessServer, keyFor, startInProcess, tempDir } from '../support/servers';

const SECRET = 'sk-audit-secret-0123456789';

/** The compiled CLI as a child process: its exit code, standard output and standard error. */
function runCli(args: string[], env: Record<string, string> = {}, stdoutFile?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const file = stdoutFile ? fs.createWriteStream(stdoutFile) : null;
    child.stdout.on('data', (chunk: Buffer) => (file ? file.write(chunk) : (stdout += chunk.toString())));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (file ? file.end(() => resolve({ code, stdout, stderr })) : resolve({ code, stdout, stderr })));
  });
}

function expectDecodeIssue(answer: Answer, property: string): void {
  expect(answer.status).toBe(400);
  expect(answer.body._tag).toBe('HttpApiDecodeError');
  expect(answer.body.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: [property] })]));
}

async function listAll(api: ApiClient, body: Record<string, unknown>): Promise<any[]> {
  const events: any[] = [];
  let cursor: string | null = null;
  do {
    const answer: Answer = await api.call('audit.events.list', { ...body, ...(cursor ? { cursor } : {}) });
    expect(answer.status).toBe(200);
    events.push(...answer.body.events);
    cursor = answer.body.next;
  } while (cursor);
  return events;
}

describeWithBubblewrap('the audit over a real history', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let other: ApiClient;
  let start: string;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    start = new Date().toISOString();
    expect((await api.call('prompts.versions.create', { id: 'support/triage', content: 'Triage {{word}}' })).status).toBe(200);
    expect((await api.call('prompts.promote', { id: 'support/triage', channel: 'production', version: 1 })).status).toBe(200);
    const connector = await api.call('connectors.add', {
      integrationId: 'openai-compatible',
      authMethodId: 'api-key',
      name: 'gateway',
      values: { apiKey: SECRET, baseUrl: 'https://llm.example/v1' },
    });
    expect(connector.status).toBe(200);
    const started = await api.call('evals.batches.start', startBody());
    expect(started.status).toBe(200);
    expect((await waitForBatch(api, started.body.id)).status).toBe('finished');
    other = await keyFor(server, 'globex', ['prompts:write', 'prompts:read', 'audit:read']);
    expect((await other.call('prompts.versions.create', { id: 'globex/only', content: 'globex text only' })).status).toBe(200);
  }, 120_000);

  afterAll(() => server.close());

  it('lists the organization events oldest first, with who, when and why, and never a secret', async () => {
    const events = await listAll(api, { limit: 7 });
    expect(events.length).toBeGreaterThan(10);
    const positions = events.map((event) => event.position);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(new Set(positions).size).toBe(positions.length);
    const promoted = events.find((event) => event.type === 'PromptChannelPromoted');
    expect(promoted).toMatchObject({
      stream: 'prompt-acme.support/triage',
      category: 'prompt',
      revision: 1,
      data: expect.objectContaining({ channel: 'production', toVersion: 1 }),
      chain: { prevHash: expect.stringMatching(/^ck_[0-9a-f]{16}\.[0-9a-f]{64}$/), hash: expect.stringMatching(/^ck_[0-9a-f]{16}\.[0-9a-f]{64}$/) },
    });
    expect(typeof promoted.actor).toBe('string');
    expect(typeof promoted.correlationId).toBe('string');
    expect(typeof promoted.causationId).toBe('string');
    expect(events.map((event) => event.category)).toEqual(expect.arrayContaining(['batch', 'trial', 'prompt', 'connector']));
    expect(JSON.stringify(events)).not.toContain(SECRET);
    expect(JSON.stringify(events)).not.toContain('globex');
  });

  it('pages by cursor without repeating or skipping an event', async () => {
    const whole = await listAll(api, { limit: 1000 });
    const paged = await listAll(api, { limit: 3 });
    expect(paged.map((event) => event.position)).toEqual(whole.map((event) => event.position));
    const first = await api.call('audit.events.list', { limit: 1000 });
    expect(first.body.next).toBeNull();
  });

  it('filters by stream, category, type, actor and time', async () => {
    const byCategory = await listAll(api, { category: 'prompt' });
    expect(byCategory.length).toBe(2);
    expect(byCategory.every((event) => event.stream.startsWith('prompt-'))).toBe(true);
    const byType = await listAll(api, { type: 'BatchStarted' });
    expect(byType).toHaveLength(1);
    const byStream = await listAll(api, { stream: byType[0].stream });
    expect(byStream.map((event) => event.type)).toEqual(expect.arrayContaining(['BatchStarted', 'BatchFinished']));
    expect(byStream.every((event) => event.stream === byType[0].stream)).toBe(true);
    const byActor = await listAll(api, { actor: byType[0].actor });
    expect(byActor.length).toBeGreaterThan(0);
    expect(byActor.every((event) => event.actor === byType[0].actor)).toBe(true);
    const promoted = byCategory[1];
    expect(await listAll(api, { category: 'prompt', from: promoted.time })).toEqual([promoted]);
    expect(await listAll(api, { category: 'prompt', to: byCategory[0].time, from: start })).toEqual([byCategory[0]]);
    expect(await listAll(api, { category: 'nothing' })).toEqual([]);
  });

  it('shows nothing of another organization, in list, export and verify', async () => {
    const theirs = await listAll(other, {});
    expect(theirs.length).toBeGreaterThan(0);
    expect(JSON.stringify(theirs)).not.toContain('acme');
    const acmeStream = (await listAll(api, { category: 'prompt' }))[0].stream;
    expect(await listAll(other, { stream: acmeStream })).toEqual([]);
    const exported = await other.call('audit.events.export', {});
    expect(exported.text).not.toContain('acme');
    const verified = await other.call('audit.verify', {});
    expect(verified.body).toMatchObject({ ok: true, checked: theirs.length });
  });

  it('exports NDJSON ending with the count and the chain hash of the lines', async () => {
    const answer = await api.call('audit.events.export', { categories: ['prompt', 'connector'] });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = answer.text.trimEnd().split('\n');
    const trailer = JSON.parse(lines[lines.length - 1]).trailer;
    const events = lines.slice(0, -1).map((line) => JSON.parse(line));
    expect(events.map((event) => event.category)).toEqual(['prompt', 'prompt', 'connector']);
    let hash = '0'.repeat(64);
    for (const event of events) hash = sha256Hex(hash + canonicalJson(event));
    expect(trailer).toMatchObject({ count: 3, chainHash: hash, organization: 'acme', categories: ['prompt', 'connector'] });
    expect(answer.text).not.toContain(SECRET);
  });

  it('verifies the chain of the whole organization', async () => {
    const all = await listAll(api, {});
    const answer = await api.call('audit.verify', {});
    expect(answer.body).toEqual({ ok: true, checked: all.length, unchained: 0, firstBreak: null });
  });

  it('refuses bad bodies on both sides of each bound, in the spec error shape', async () => {
    expect((await api.call('audit.events.list', { limit: 1 })).status).toBe(200);
    expect((await api.call('audit.events.list', { limit: 1000 })).status).toBe(200);
    expectDecodeIssue(await api.call('audit.events.list', { limit: 0 }), 'limit');
    expectDecodeIssue(await api.call('audit.events.list', { limit: 1001 }), 'limit');
    expectDecodeIssue(await api.call('audit.events.list', { limit: 2.5 }), 'limit');
    expectDecodeIssue(await api.call('audit.events.list', { from: '2025-01-01T00:00:00' }), 'from');
    expectDecodeIssue(await api.call('audit.events.list', { category: 'a'.repeat(65) }), 'category');
    expect((await api.call('audit.events.list', { category: 'a'.repeat(64) })).status).toBe(200);
    expectDecodeIssue(await api.call('audit.events.list', { stream: '' }), 'stream');
    expectDecodeIssue(await api.call('audit.events.list', { typo: 1 }), 'typo');
    const badCursor = await api.call('audit.events.list', { cursor: 'not-a-cursor' });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body._tag).toBe('BadRequest');
    const reversed = await api.call('audit.events.list', { from: '2025-01-02T00:00:00Z', to: '2025-01-01T00:00:00Z' });
    expect(reversed.status).toBe(400);
    expect(reversed.body._tag).toBe('BadRequest');
    expect((await api.call('audit.events.export', { categories: Array.from({ length: 50 }, (_, i) => `c${i}`) })).status).toBe(200);
    expectDecodeIssue(await api.call('audit.events.export', { categories: Array.from({ length: 51 }, (_, i) => `c${i}`) }), 'categories');
    expect((await api.call('audit.events.export', { categories: ['has-dash'] })).status).toBe(400);
    expectDecodeIssue(await api.call('audit.verify', { organization: 'globex' }), 'organization');
  });

  it('needs audit:read', async () => {
    const writer = await keyFor(server, 'acme', ['prompts:write', 'prompts:read']);
    for (const operation of ['audit.events.list', 'audit.events.export', 'audit.verify']) {
      expect((await writer.call(operation, {})).status).toBe(403);
    }
  });

  it('exports with the real CLI, and `assay audit verify` passes on the file and fails on an edited line', async () => {
    const dir = tempDir('assay-audit-cli-');
    try {
      const file = path.join(dir, 'audit.ndjson');
      const exported = await runCli(['audit', 'export', '--since', start, '--url', server.url], { ASSAY_API_KEY: INIT_KEY }, file);
      expect(exported).toMatchObject({ code: 0 });
      const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
      expect(lines.length).toBeGreaterThan(10);
      expect(lines.slice(0, -1).map((line) => JSON.parse(line).time >= start)).not.toContain(false);
      const intact = await runCli(['audit', 'verify', file]);
      expect(intact.code).toBe(0);
      expect(intact.stdout).toContain(`${lines.length - 1} events`);

      const edited = [...lines];
      const target = edited.findIndex((line) => line.includes('"PromptChannelPromoted"'));
      edited[target] = edited[target].replace('"toVersion":1', '"toVersion":2');
      expect(edited[target]).not.toBe(lines[target]);
      fs.writeFileSync(file, edited.join('\n') + '\n');
      const tampered = await runCli(['audit', 'verify', file]);
      expect(tampered.code).toBe(1);
      expect(tampered.stdout).toContain(`line ${target + 1}`);

      fs.writeFileSync(
        file,
        lines
          .slice(0, -3)
          .concat(lines.at(-1) ?? '')
          .join('\n') + '\n',
      );
      const shortened = await runCli(['audit', 'verify', file]);
      expect(shortened.code).toBe(1);
      expect(shortened.stdout).toContain(`line ${lines.length - 2}`);

      fs.writeFileSync(file, lines.slice(0, -1).join('\n') + '\n');
      expect((await runCli(['audit', 'verify', file])).stdout).toContain('incomplete');

      expect((await runCli(['audit', 'verify', path.join(dir, 'missing.ndjson')])).code).toBe(2);
      expect((await runCli(['audit', 'verify'])).code).toBe(2);
      expect((await runCli(['audit', 'export', '--url', server.url], { ASSAY_API_KEY: INIT_KEY })).code).toBe(2);
      expect((await runCli(['audit', 'export', '--since', 'last week', '--url', server.url], { ASSAY_API_KEY: INIT_KEY })).code).toBe(2);
      const refused = await runCli(['audit', 'export', '--since', start, '--url', server.url], { ASSAY_API_KEY: 'assay_wrong' });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('401');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a row edited in the SQLite log at that event', async () => {
    const promoted = (await listAll(api, { type: 'PromptChannelPromoted' }))[0];
    const log = new Database(path.join(server.dataDir, EVENT_LOG_FILE));
    try {
      const row = log.prepare('SELECT data FROM events WHERE position = ?').get(promoted.position) as { data: string };
      const edited = row.data.replace('"toVersion":1', '"toVersion":7');
      expect(edited).not.toBe(row.data);
      log.prepare('UPDATE events SET data = ? WHERE position = ?').run(edited, promoted.position);
    } finally {
      log.close();
    }
    expect(fs.existsSync(path.join(server.dataDir, EVENT_LOG_FILE))).toBe(true);
    const answer = await api.call('audit.verify', {});
    expect(answer.body).toMatchObject({
      ok: false,
      firstBreak: {
        position: promoted.position,
        stream: promoted.stream,
        revision: promoted.revision,
        reason: expect.stringContaining('does not match its hash'),
      },
    });
    expect(answer.body.checked).toBeLessThan((await listAll(api, {})).length);
    expect((await other.call('audit.verify', {})).body.ok).toBe(true);
  });

  it('keeps the chain key out of the log file, and reports the newest rows deleted from it with SQL', async () => {
    const masterKey = readMasterKeyFile(masterKeyPath(server.dataDir)) as Buffer;
    const logFiles = [EVENT_LOG_FILE, `${EVENT_LOG_FILE}-wal`].map((name) => path.join(server.dataDir, name)).filter((file) => fs.existsSync(file));
    const atRest = Buffer.concat(logFiles.map((file) => fs.readFileSync(file)));
    for (const key of [deriveChainKey(masterKey).key, masterKey]) {
      for (const spelling of [key, key.toString('hex'), key.toString('base64'), key.toString('base64url')]) expect(atRest.includes(spelling)).toBe(false);
    }

    expect((await other.call('prompts.versions.create', { id: 'globex/only', content: 'globex text, again' })).status).toBe(200);
    const before = await listAll(other, {});
    const log = new Database(path.join(server.dataDir, EVENT_LOG_FILE));
    try {
      log.prepare("DELETE FROM events WHERE position = (SELECT max(position) FROM events WHERE organization = 'globex')").run();
    } finally {
      log.close();
    }
    const kept = before[before.length - 2];
    expect((await other.call('audit.verify', {})).body).toEqual({
      ok: false,
      checked: before.length - 1,
      unchained: 0,
      firstBreak: { position: kept.position, stream: kept.stream, revision: kept.revision, reason: expect.stringContaining('newest events are missing') },
    });
  });
});
