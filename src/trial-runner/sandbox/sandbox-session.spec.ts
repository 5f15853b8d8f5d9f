import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { OutputCollector } from '../output/captured-output';
import { BubblewrapDriver } from './sandbox-driver';
import { SandboxSession } from './sandbox-session';
import { DEFAULT_TRIAL_LIMITS } from '../trial-limits';
import { describeWithBubblewrap } from '../../../test/support/bubblewrap';
import { BUBBLEWRAP, commandsOf, harnessStep, TempDirs, testRunner, trialSpec } from '../../../test/support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

/** Sessions need a trial user of its own (the supervisor is root, the commands are not): a server run as root. */
const asRoot = process.getuid?.() === 0;
if (!asRoot) process.stderr.write('Skipping sandbox-session.spec.ts: a trial keeps one sandbox only when the server runs as root\n');
const describeAsRoot = asRoot ? describeWithBubblewrap : describe.skip;

describeAsRoot('TrialRunner: one bubblewrap sandbox per trial', () => {
  it('runs the install, the agent and verify in the same sandbox, each with its own output and exit status', async () => {
    const { runner } = testRunner(dirs);
    const install = 'echo installed > /tmp/shared.txt; echo install-out; exit 0';
    const run = 'cat /tmp/shared.txt; echo agent-out; echo agent-err >&2; exit 3';
    const verify = 'cat /tmp/shared.txt; echo verify-out; exit 0';
    const outcome = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, profile: { install, run }, verify }));
    const [installed, agent, verified] = commandsOf(outcome);
    expect(installed).toMatchObject({ command: install, exitCode: 0, output: 'install-out\n' });
    // The private /tmp lasts the trial: one machine, as an agent expects between its commands.
    expect(agent).toMatchObject({ command: run, exitCode: 3, output: 'installed\nagent-out\nagent-err\n' });
    expect(verified).toMatchObject({ command: verify, exitCode: 0, output: 'installed\nverify-out\n' });
    expect(outcome.status).toBe('passed');
  });

  it('leaves nothing of a step running when the next one starts, whatever it did to escape', async () => {
    const { runner } = testRunner(dirs);
    // A background child, a double fork, a new session, and one that ignores SIGTERM and SIGHUP, all writing later.
    const run = [
      '(sleep 1; echo late > from-background.txt) &',
      '( (sleep 1; echo late > from-double-fork.txt) & ) &',
      "setsid sh -c 'sleep 1; echo late > from-setsid.txt' &",
      'nohup sh -c \'trap "" TERM HUP; sleep 1; echo late > from-nohup.txt\' >/dev/null 2>&1 &',
      'echo started',
    ].join('\n');
    const verify = 'sleep 2; ps -eo user=,args= | grep -v -e "^root" -e "ps -eo" -e grep -e "sleep 2"; ls; test ! -e from-background.txt';
    const outcome = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run }, verify }));
    expect(harnessStep(outcome, run).output).toBe('started\n');
    const verified = harnessStep(outcome, verify);
    expect(verified.output).not.toMatch(/sleep 1|from-/);
    expect(verified.exitCode).toBe(0);
    expect(outcome.status).toBe('passed');
  });

  it('cannot signal or read the supervisor, nor end a command early by printing what an end line looks like', async () => {
    const { runner } = testRunner(dirs);
    const fakeEnd = `${'0123456789abcdef'.repeat(2)} 0 clean`;
    const run = [
      `printf '%s\\n' '${fakeEnd}'`,
      'kill -9 -1; kill -9 2 && echo killed-supervisor',
      'ls /proc/2/fd >/dev/null 2>&1 && echo read-fds',
      'cat /proc/2/environ >/dev/null 2>&1 && echo read-environ',
      'echo after-the-fake-end',
      'exit 5',
    ].join('\n');
    const outcome = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run }, verify: 'echo verified' }));
    const agent = harnessStep(outcome, run);
    expect(agent.output.startsWith(`${fakeEnd}\n`)).toBe(true);
    expect(agent.output).toContain('Operation not permitted');
    expect(agent.output).not.toMatch(/killed-supervisor|read-fds|read-environ/);
    expect(agent.output.endsWith('after-the-fake-end\n')).toBe(true);
    expect(agent.exitCode).toBe(5);
    // The supervisor outlived the agent's attempt: verify ran in the same sandbox, and passed.
    expect(harnessStep(outcome, 'echo verified').output).toBe('verified\n');
    expect(outcome.status).toBe('passed');
  });

  it('gives each step exactly its environment, literally, and its stdin', async () => {
    const { runner } = testRunner(dirs);
    const tricky = `it's "quoted" $(echo expanded) \`echo ticks\` $HOME\nsecond line\\`;
    const run = 'printenv TRICKY; env | cut -d= -f1 | sort | tr "\\n" " "; echo; cat';
    const verify = 'printenv TRICKY >/dev/null && echo has-tricky; cat; echo stdin-was-empty';
    const outcome = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, env: { TRICKY: tricky }, profile: { run }, verify, prompt: 'the prompt on stdin' }));
    const lines = harnessStep(outcome, run).output.split('\n');
    expect(lines.slice(0, 2).join('\n')).toBe(tricky);
    const names = lines[2].trim().split(' ');
    expect(names).toEqual(expect.arrayContaining(['ASSAY_MODEL', 'ASSAY_PROMPT', 'HOME', 'PATH', 'PWD', 'TMPDIR', 'TRICKY', 'USER']));
    expect(names).not.toContain('OLDPWD');
    expect(names).not.toContain('ASSAY_SESSION_COMMAND');
    expect(lines[3]).toBe('the prompt on stdin');
    expect(harnessStep(outcome, verify).output).toBe('has-tricky\nstdin-was-empty\n');
  });

  it('reports a step killed by a signal as the shell does, and the next step still runs', async () => {
    const { runner } = testRunner(dirs);
    const run = 'kill -TERM $$';
    const outcome = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run }, verify: 'echo ok' }));
    expect(harnessStep(outcome, run).exitCode).toBe(143);
    expect(harnessStep(outcome, 'echo ok').output).toBe('ok\n');
  });
});

describeAsRoot('SandboxSession', () => {
  const user = { uid: 200_017, gid: 200_017 };

  function sessionDirectory(): { trialDir: string; workspace: string; control: string } {
    const trialDir = dirs.make('assay-session-');
    // As the runner makes it: the service's, the trial's user may pass through it.
    chmodSync(trialDir, 0o755);
    const workspace = path.join(trialDir, 'workspace');
    mkdirSync(workspace);
    chownSync(workspace, user.uid, user.gid);
    return { trialDir, workspace, control: path.join(trialDir, '.session') };
  }

  async function start(directory: { trialDir: string; workspace: string; control: string }): Promise<SandboxSession> {
    const options = { trialDir: directory.trialDir, workspace: directory.workspace, network: false, user, limits: DEFAULT_TRIAL_LIMITS };
    const launch = new BubblewrapDriver([]).sessionLaunch(options, directory.control);
    if (launch === null) throw new Error('no session launch as root');
    return SandboxSession.start(launch, directory.control);
  }

  const run = async (session: SandboxSession, command: string, timeoutMs = 20_000) => {
    const collector = new OutputCollector(1024 * 1024);
    const result = await session.run({ command, env: { PATH: '/usr/bin:/bin' }, stdin: null, timeoutMs, collector });
    return { ...result, output: collector.keptText() };
  };

  it('kills the whole sandbox at a timeout; the session is then spent and a new one runs the next command', async () => {
    const directory = sessionDirectory();
    const first = await start(directory);
    expect(await run(first, 'echo $$ > /tmp/marker; echo one')).toMatchObject({ exitCode: 0, output: 'one\n' });
    const timedOut = await run(first, 'echo before; sleep 30', 500);
    expect(timedOut).toMatchObject({ timedOut: true, exitCode: null, status: 137, startFailure: null, output: 'before\n' });
    expect(first.usable).toBe(false);
    await first.close();
    const second = await start(directory);
    // A new sandbox: its private /tmp is a new one too.
    expect(await run(second, 'cat /tmp/marker 2>/dev/null || echo fresh')).toMatchObject({ exitCode: 0, output: 'fresh\n' });
    await second.close();
  });

  it('keeps a large output in order up to its end, whatever the chunks', async () => {
    const directory = sessionDirectory();
    const session = await start(directory);
    const result = await run(session, 'i=0; while [ $i -lt 20000 ]; do echo "line $i"; i=$((i+1)); done; printf tail');
    const lines = result.output.split('\n');
    expect(lines).toHaveLength(20001);
    expect(lines[19999]).toBe('line 19999');
    expect(lines[20000]).toBe('tail');
    await session.close();
    expect(readdirSync(directory.control).sort()).toEqual(['step.sh']);
    expect(existsSync(directory.workspace)).toBe(true);
  });

  it('says the sandbox failed to start when bwrap cannot set it up', async () => {
    const directory = sessionDirectory();
    // The trial's directory to bind is not there (its workspace, where bwrap is started, is).
    const options = {
      trialDir: path.join(directory.trialDir, 'missing'),
      workspace: directory.workspace,
      network: false,

      user,
      limits: DEFAULT_TRIAL_LIMITS,
    };
    const launch = new BubblewrapDriver([]).sessionLaunch(options, directory.control)!;
    const session = await SandboxSession.start(launch, directory.control);
    const result = await run(session, 'echo never');
    expect(result.startFailure).toMatch(/^the sandbox failed to start: bwrap: /);
    expect(result.output).not.toContain('never');
  });
});
