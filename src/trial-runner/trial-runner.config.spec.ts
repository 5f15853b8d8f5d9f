import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { EMPTY_EXECUTION_CONFIG, loadExecutionConfig, parseExecutionConfig } from './execution-config';
import { renderTemplate } from './harness/harness-driver';
import { OutputCollector, Redactor, failureLine } from './output/captured-output';
import { PROCESS, TempDirs, testRunner, trialSpec } from '../../test/support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

describe('execution config', () => {
  it('loads a JSON file and fills defaults', () => {
    const file = path.join(dirs.make(), 'assay.json');
    const harness = { version: '2.0', run: 'agent -p {{prompt}}', install: 'echo {{model}}' };
    writeFileSync(
      file,
      JSON.stringify({ harnesses: { harness_kind_4: harness }, sandboxes: { sandbox_kind_2: { driver: 'process' } }, allowUnsandboxed: true }),
    );
    expect(loadExecutionConfig(file)).toEqual({
      harnesses: { harness_kind_4: { ...harness, agent: null, continue: null, env: {}, usage: null, authFailure: null, provider: null } },
      sandboxes: { sandbox_kind_2: { driver: 'process', network: null } },
      defaultSandbox: null,
      network: false,
      hiddenPaths: [],
      limits: { processes: 1024, memoryMb: 8192, tmpMb: 1024, workspaceMb: 8192 },
      allowUnsandboxed: true,
      repositories: { allowSsh: false, allowLocal: false, allowPrivateHosts: false },
      providers: {},
      users: { byHarness: {}, defaultProvider: null, defaultModel: 'gpt-5.4-mini' },
      judges: null,
      prices: {},
      gateway: { recordBodies: false },
    });
  });

  it.each([
    [{ gateway: { recordBodies: true } }, true],
    [{ gateway: {} }, false],
  ])('reads gateway %j', (config, recordBodies) => {
    expect(parseExecutionConfig(config, 'assay.yaml').gateway).toEqual({ recordBodies });
  });

  it.each([
    [{ gateway: { recordBodies: 'yes' } }, 'gateway.recordBodies'],
    [{ gateway: { recordAll: true } }, 'gateway'],
    [{ gateway: true }, 'gateway'],
  ])('refuses gateway %j, naming %s', (config, where) => {
    expect(() => parseExecutionConfig(config, 'assay.yaml')).toThrow(`assay.yaml: ${where}`);
  });

  it('takes the limits given and keeps the defaults of the others', () => {
    expect(parseExecutionConfig({ limits: { processes: 32, tmpMb: 8 } }).limits).toEqual({ processes: 32, memoryMb: 8192, tmpMb: 8, workspaceMb: 8192 });
    // The bounds themselves are taken.
    expect(parseExecutionConfig({ limits: { processes: 1, workspaceMb: 1048576 } }).limits).toMatchObject({ processes: 1, workspaceMb: 1048576 });
  });

  it('treats no file as no configured drivers', () => {
    expect(loadExecutionConfig(null)).toEqual(EMPTY_EXECUTION_CONFIG);
  });

  it.each([
    [{ harness: {} }, /^test: harness: unknown key; expected one of harnesses, sandboxes/],
    [{ harnesses: { harness_kind_9: { version: '1', run: 'x' } } }, /harnesses\.harness_kind_9: unknown key; expected a harness kind/],
    [{ harnesses: { command: { version: '1', run: 'x' } } }, /harnesses\.command: unknown key/],
    [{ harnesses: { harness_kind_1: { version: '1' } } }, /harnesses\.harness_kind_1\.run: is required/],
    [{ harnesses: { harness_kind_1: { run: 'x' } } }, /harnesses\.harness_kind_1\.version: is required/],
    [{ harnesses: { harness_kind_1: { version: '1', run: 'x {{task}}' } } }, /harnesses\.harness_kind_1\.run: unknown placeholder \{\{task\}\}/],
    [{ harnesses: { harness_kind_1: { version: '1', run: 'x', timeout: 3 } } }, /harnesses\.harness_kind_1\.timeout: unknown key/],
    [
      { harnesses: { harness_kind_1: { version: '1', run: 'x', authFailure: '401 (' } } },
      /harnesses\.harness_kind_1\.authFailure: is not a valid regular expression/,
    ],
    [{ harnesses: { harness_kind_1: { version: '1', run: 'x', env: { 'BAD-NAME': 'v' } } } }, /harnesses\.harness_kind_1\.env\.BAD-NAME: is not a valid/],
    [
      { harnesses: { harness_kind_1: { version: '1', run: 'x', usage: { format: 'xml' } } } },
      /harnesses\.harness_kind_1\.usage\.format: must be json-lines or regex/,
    ],
    [
      { harnesses: { harness_kind_1: { version: '1', run: 'x', usage: { format: 'regex', inputTokens: '\\d+' } } } },
      /usage\.inputTokens: needs a capture group/,
    ],
    [
      { harnesses: { harness_kind_1: { version: '1', run: 'x', usage: { format: 'regex', inputTokens: '(' } } } },
      /usage\.inputTokens: is not a valid regular expression/,
    ],
    [{ harnesses: { harness_kind_1: { version: '1', run: 'x', usage: { format: 'regex' } } } }, /harnesses\.harness_kind_1\.usage: names none of/],
    [{ sandboxes: { sandbox_kind_1: { driver: 'docker' } } }, /sandboxes\.sandbox_kind_1\.driver: must be one of bubblewrap, process/],
    [{ sandboxes: { local: { driver: 'process' } } }, /sandboxes\.local: unknown key; expected a sandbox kind/],
    [{ sandboxes: { sandbox_kind_1: { driver: 'process', network: 'yes' } } }, /sandboxes\.sandbox_kind_1\.network: must be true or false/],
    [{ defaultSandbox: 'vm' }, /defaultSandbox: must be one of/],
    [{ hiddenPaths: ['relative/key'] }, /hiddenPaths\[0\]: must be an absolute path/],
    [
      { harnesses: { harness_kind_1: { version: '1', run: 'x', env: { PATH: '/opt/x' } } } },
      /harnesses\.harness_kind_1\.env\.PATH: "PATH" is a reserved environment variable name/,
    ],
    [{ harnesses: { harness_kind_1: { version: '1', run: 'x', env: { LD_PRELOAD: 'x.so' } } } }, /env\.LD_PRELOAD: "LD_PRELOAD" is a reserved/],
    [{ limits: { processes: 0 } }, /limits\.processes: must be a whole number from 1 to 1048576/],
    [{ limits: { workspaceMb: 1048577 } }, /limits\.workspaceMb: must be a whole number from 1 to 1048576/],
    [{ limits: { memoryMb: 1.5 } }, /limits\.memoryMb: must be a whole number/],
    [{ limits: { tmpMb: '8' } }, /limits\.tmpMb: must be a whole number/],
    [{ limits: { diskMb: 8 } }, /limits\.diskMb: unknown key; expected one of processes, memoryMb, tmpMb, workspaceMb/],
  ])('refuses %j, naming the bad key', (raw, message) => {
    expect(() => parseExecutionConfig(raw, 'test')).toThrow(message);
  });

  it('names the file when it is not valid YAML', () => {
    const file = path.join(dirs.make(), 'assay.yaml');
    writeFileSync(file, 'harnesses: [unclosed');
    expect(() => loadExecutionConfig(file)).toThrow(`${file}: is not valid YAML`);
  });
});

describe('templates and captured output', () => {
  it('shell-quotes {{prompt}} and {{model}}', () => {
    expect(renderTemplate('agent -m {{model}} -p {{ prompt }}', { prompt: "it's $(x)", model: 'm' })).toBe(`agent -m 'm' -p 'it'\\''s $(x)'`);
  });

  it('redacts a secret split across chunks and never leaks part of one at the cap', () => {
    const redactor = new Redactor(['topsecretvalue', 'abc', '']);
    const collector = new OutputCollector(64, 0, redactor.longestSecretBytes);
    collector.push(Buffer.from('x'.repeat(60) + 'topsec'));
    collector.push(Buffer.from('retvalue and more text after it'));
    const { output, truncated } = collector.finish(redactor);
    expect(truncated).toBe(true);
    expect(output).toBe('x'.repeat(32) + '\n[… 33 bytes cut …]\n' + 'redacted] and more text after it');
    expect(output).not.toContain('topsec');
  });

  it('drops the part of a secret cut off where output stops being kept', () => {
    const redactor = new Redactor(['0123456789abcdef']);
    // Margins for the plain secret alone (16 bytes), so that the collector lets go of the middle here.
    const collector = new OutputCollector(20, 0, 16);
    // The start is kept up to byte 74 (half the cap and two margins of 16 + 16): inside the secret.
    const output = Buffer.from('[redacted-ish] ' + '.'.repeat(52) + '0123456789abcdef' + '.'.repeat(100) + ' tail');
    // In small chunks, so that the collector lets go of the middle.
    for (let at = 0; at < output.length; at += 7) collector.push(output.subarray(at, at + 7));
    expect(collector.finish(redactor).output).toBe('[redacted-\n[… 168 bytes cut …]\n..... tail');
  });

  it('cuts on character boundaries', () => {
    const collector = new OutputCollector(5);
    collector.push(Buffer.from('ééé'));
    expect(collector.finish(new Redactor([]))).toEqual({ output: 'é\n[… 2 bytes cut …]\né', truncated: true });
  });

  it('makes failures one line of at most 240 characters', () => {
    const line = failureLine(`first\nsecond ${'y'.repeat(400)}`, new Redactor([]));
    expect(line).not.toContain('\n');
    expect(line).toHaveLength(240);
    expect(line.startsWith('first second')).toBe(true);
  });
});

describe("the runner and the operator's consent to unsandboxed trials", () => {
  it('voids a trial that would run as a plain process when the config does not allow it (a batch from other settings)', async () => {
    // Built as an object: parsing refuses this config at start, but a runner must not trust that.
    const config = { ...EMPTY_EXECUTION_CONFIG, sandboxes: { [PROCESS]: { driver: 'process' as const, network: null } } };
    const { runner } = testRunner(dirs, { config });
    const outcome = await runner.run(trialSpec({ sandbox: PROCESS }));
    expect(outcome).toMatchObject({ status: 'void', voidFields: ['sandbox'], serviceFault: false, trajectory: [] });
    expect(outcome.failure).toBe(
      'sandbox_kind_2 runs trials as plain processes (no isolation), which this server does not allow: set allowUnsandboxed: true in ASSAY_CONFIG',
    );
  });
});
