import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { loadExecutionConfig } from './execution-config';
import {
  artifactContent,
  commandsOf,
  harnessStep,
  PROCESS,
  stepsStarting,
  TempDirs,
  testRunner,
  trialSpec,
  TEST_SANDBOXES,
} from '../../test/support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

describe('TrialRunner: harness, verify and verdict', () => {
  it('passes when verify exits 0, recording harness and verify in the trajectory', async () => {
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ profile: { run: 'echo hello > out.txt' }, verify: 'grep -q hello out.txt' }));
    expect(outcome).toMatchObject({ status: 'passed', failure: null, voidFields: [], serviceFault: false, timed: false, exitCode: 0 });
    expect(outcome.harnessVersion).toBe('command/1');
    expect(outcome.sandboxId).toMatch(/^sbx_[0-9a-f]+$/);
    expect(commandsOf(outcome).map((entry) => entry.command)).toEqual(['echo hello > out.txt', 'grep -q hello out.txt']);
    expect(outcome.verifySteps).toEqual([{ command: 'grep -q hello out.txt', exitCode: 0 }]);
    const step = commandsOf(outcome)[0];
    expect(step).toMatchObject({ _tag: 'command', exitCode: 0, output: '', outputTruncated: false });
    expect(step.finishedAtMillis).toBeGreaterThanOrEqual(step.startedAtMillis);
    expect(outcome.usage).toBeNull();
  });

  it('fails when verify exits non-zero, with no failure text (the trial is scored)', async () => {
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ profile: { run: 'exit 3' }, verify: 'test -f missing.txt' }));
    expect(outcome).toMatchObject({ status: 'failed', failure: null, voidFields: [], exitCode: 3 });
    expect(outcome.verifySteps).toEqual([{ command: 'test -f missing.txt', exitCode: 1 }]);
  });

  it('voids a case with neither verify nor a validator', async () => {
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ verify: null, validator: null }));
    expect(outcome).toMatchObject({
      status: 'void',
      failure: 'the case has neither a verify command nor a validator',
      voidFields: ['verify'],
      serviceFault: false,
    });
  });

  it('voids when verify cannot run at all (exit 127)', async () => {
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ verify: 'no-such-command-for-assay' }));
    expect(outcome).toMatchObject({ status: 'void', voidFields: ['verify'], serviceFault: false });
    expect(outcome.failure).toMatch(/^the verify command could not run \(exit 127, command not found\)/);
    expect(outcome.verifySteps).toEqual([{ command: 'no-such-command-for-assay', exitCode: 127 }]);
  });

  it('voids when verify runs past verifyTimeoutMs', async () => {
    const { runner } = testRunner(dirs, { verifyTimeoutMs: 500 });
    const outcome = await runner.run(trialSpec({ verify: 'sleep 20' }));
    expect(outcome).toMatchObject({ status: 'void', failure: 'verify timed out after 500 ms', voidFields: ['verify'] });
  });

  it('gives the command harness the prompt in ASSAY_PROMPT and on stdin, and the model in ASSAY_MODEL', async () => {
    const { runner, dataDir } = testRunner(dirs);
    const prompt = `Fix it's "bug" $(touch pwned) \`id\`\nsecond line`;
    const run = 'printf %s "$ASSAY_PROMPT" > env.txt; cat > stdin.txt; printf %s "$ASSAY_MODEL" > model.txt';
    const outcome = await runner.run(trialSpec({ prompt, model: 'vendor/model-7', profile: { run } }));
    expect(outcome.status).toBe('passed');
    expect(artifactContent(dataDir, outcome, 'env.txt')).toBe(prompt);
    expect(artifactContent(dataDir, outcome, 'stdin.txt')).toBe(prompt);
    expect(artifactContent(dataDir, outcome, 'model.txt')).toBe('vendor/model-7');
    expect(outcome.filesChanged).toEqual(['env.txt', 'model.txt', 'stdin.txt']);
  });

  it('runs profile.install before the harness, and writes profile.files and profile.env for the harness', async () => {
    const { runner, dataDir } = testRunner(dirs);
    const profile = {
      install: 'cat conf/settings.ini > installed.txt',
      files: { 'conf/settings.ini': 'level=3\n' },
      env: { PROFILE_FLAG: 'on' },
      run: 'cat installed.txt > seen.txt; printf "flag=%s" "$PROFILE_FLAG" >> seen.txt',
    };
    const outcome = await runner.run(trialSpec({ profile, env: { ORG_VAR: 'org' }, verify: 'test "$PROFILE_FLAG$ORG_VAR" = onorg' }));
    expect(outcome.status).toBe('passed');
    expect(commandsOf(outcome).map((entry) => entry.command)).toEqual([profile.install, profile.run, 'test "$PROFILE_FLAG$ORG_VAR" = onorg']);
    expect(artifactContent(dataDir, outcome, 'seen.txt')).toBe('level=3\nflag=on');
  });

  it('voids the trial when profile.install fails, without running the harness', async () => {
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ profile: { install: 'echo broken; exit 4', run: 'touch ran.txt' } }));
    expect(outcome).toMatchObject({ status: 'void', failure: 'install failed with exit code 4', voidFields: ['install'], serviceFault: false });
    expect(commandsOf(outcome).map((entry) => entry.command)).toEqual(['echo broken; exit 4']);
    expect(commandsOf(outcome)[0]).toMatchObject({ exitCode: 4, output: 'broken\n' });
  });

  it('caps each output at outputCapBytes, keeping its start and its end, and says it was truncated', async () => {
    const { runner } = testRunner(dirs, { outputCapBytes: 1024 });
    const run = "head -c 5000 /dev/zero | tr '\\0' a; echo; echo the end";
    const outcome = await runner.run(trialSpec({ profile: { run }, verify: 'echo short' }));
    const end = 'a'.repeat(512 - 'the end\n'.length - 1) + '\nthe end\n';
    expect(harnessStep(outcome, run)).toMatchObject({ output: `${'a'.repeat(512)}\n[… ${5009 - 1024} bytes cut …]\n${end}`, outputTruncated: true });
    expect(harnessStep(outcome, 'echo short')).toMatchObject({ output: 'short\n', outputTruncated: false });
  });

  it('redacts secrets in outputs, commands and failures, even split across writes', async () => {
    const { runner } = testRunner(dirs);
    const secret = 'sk-live-0123456789';
    const run = "printf 'key=sk-live-01234'; sleep 0.2; printf '56789 end\\n'; echo $API_KEY >&2";
    const outcome = await runner.run(trialSpec({ profile: { run }, env: { API_KEY: secret }, secrets: [secret, 'abc'], verify: `echo ${secret}` }));
    const all = JSON.stringify(outcome);
    expect(all).not.toContain(secret);
    expect(harnessStep(outcome, run).output).toBe('key=[redacted] end\n[redacted]\n');
    expect(outcome.verifySteps[0].command).toBe('echo [redacted]');
    const failed = await runner.run(trialSpec({ source: { kind: 'repo', url: `/nonexistent/${secret}`, ref: null }, secrets: [secret] }));
    expect(failed.failure).toContain('[redacted]');
    expect(JSON.stringify(failed)).not.toContain(secret);
  });

  it('runs a configured harness_kind_1 from a config file, quoting the prompt and reading usage', async () => {
    const configFile = path.join(dirs.make(), 'assay.yaml');
    writeFileSync(
      configFile,
      [
        'harnesses:',
        '  harness_kind_1:',
        '    version: "1.2.0"',
        '    run: |-',
        "      printf '%s' {{prompt}} > prompt.txt; printf '%s' {{model}} > model.txt",
        "      echo 'usage: in=1,200 out=34'; echo 'usage: in=300 out=6'",
        '    env: { DRIVER_VAR: "x" }',
        '    usage:',
        '      format: regex',
        '      aggregate: sum',
        "      inputTokens: 'in=([\\d,]+)'",
        "      outputTokens: 'out=(\\d+)'",
        'allowUnsandboxed: true',
        'sandboxes:',
        `  ${PROCESS}: { driver: process }`,
      ].join('\n'),
    );
    const { runner, dataDir } = testRunner(dirs, { config: loadExecutionConfig(configFile) });
    const prompt = `it's $(rm -rf .) "quoted"; echo injected`;
    const outcome = await runner.run(trialSpec({ harness: 'harness_kind_1', prompt, model: "m'1", profile: null, verify: 'test "$DRIVER_VAR" = x' }));
    expect(outcome).toMatchObject({ status: 'passed', harnessVersion: '1.2.0' });
    expect(artifactContent(dataDir, outcome, 'prompt.txt')).toBe(prompt);
    expect(artifactContent(dataDir, outcome, 'model.txt')).toBe("m'1");
    expect(outcome.usage).toEqual({ inputTokens: 1500, outputTokens: 40, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 1540, costUsd: null });
  });

  it('reads usage from JSON lines, keeping the last report', async () => {
    const usage = { format: 'json-lines', inputTokens: 'usage.input', outputTokens: 'usage.output', cacheReadTokens: 'usage.cached' };
    const run = `echo '{"usage":{"input":5,"output":1}}'; echo 'noise'; echo '{"type":"result","usage":{"input":70,"output":8,"cached":2}}'`;
    const rawConfig = { harnesses: { harness_kind_3: { version: '3', run, usage } }, sandboxes: TEST_SANDBOXES };
    const { runner } = testRunner(dirs, { rawConfig });
    const outcome = await runner.run(trialSpec({ harness: 'harness_kind_3', profile: null }));
    expect(outcome.usage).toEqual({ inputTokens: 70, outputTokens: 8, cacheReadTokens: 2, cacheWriteTokens: 0, totalTokens: 80, costUsd: null });
  });

  it('passes a prompt too large for the environment on stdin only, and voids a template it makes too large to exec', async () => {
    const prompt = 'p'.repeat(200_000);
    const rawConfig = { harnesses: { harness_kind_5: { version: '5', run: 'agent {{prompt}}' } } };
    const { runner } = testRunner(dirs, { rawConfig });
    const run = 'test -z "$ASSAY_PROMPT" && test "$(wc -c)" -eq 200000';
    expect(await runner.run(trialSpec({ prompt, profile: { run }, verify: null }))).toMatchObject({ exitCode: 0 });
    const outcome = await runner.run(trialSpec({ prompt, harness: 'harness_kind_5', profile: null }));
    expect(outcome).toMatchObject({ status: 'void', voidFields: ['harness'], serviceFault: false });
    expect(outcome.failure).toContain('too large (E2BIG)');
  });

  it('voids a harness kind with no driver configured, with the exact failure', async () => {
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ harness: 'harness_kind_2', profile: null }));
    expect(outcome).toMatchObject({
      status: 'void',
      failure: 'harness_kind_2 has no driver configured on this server',
      voidFields: ['harness'],
      serviceFault: false,
      trajectory: [],
      sandboxId: null,
      harnessVersion: null,
    });
  });

  it('voids a sandbox kind with no driver configured, with the exact failure', async () => {
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ sandbox: 'sandbox_kind_5' }));
    expect(outcome).toMatchObject({
      status: 'void',
      failure: 'sandbox_kind_5 has no driver configured on this server',
      voidFields: ['sandbox'],
      serviceFault: false,
    });
  });

  it('records only commands run in the sandbox in the trajectory', async () => {
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ source: { kind: 'files', files: { 'a.txt': 'a' } }, profile: { run: 'true', files: { 'b.txt': 'b' } } }));
    expect(commandsOf(outcome).map((entry) => entry.command)).toEqual(['true', 'true']);
    expect(stepsStarting(outcome, 'git')).toEqual([]);
  });
});
