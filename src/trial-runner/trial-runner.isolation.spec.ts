import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import * as path from 'node:path';
import { parseExecutionConfig } from './execution-config';
import { detectDefaultSandbox } from './sandbox/default-sandbox';
import { processDriver, SandboxDriver } from './sandbox/sandbox-driver';
import { BubblewrapDriver } from './sandbox/sandbox-driver';
import { systemLookup } from './clone-guard';
import { createTrialRunner, SandboxTrialRunner } from './trial-runner';
import { describeWithBubblewrap, itWithBubblewrap } from '../../test/support/bubblewrap';
import { BUBBLEWRAP, harnessStep, PROCESS, TempDirs, testRunner, trialSpec } from '../../test/support/trial-fixtures';
import { systemClock } from '#shared/clock';

const dirs = new TempDirs();
let server: Server;
let port: number;
let connections = 0;

beforeAll(async () => {
  server = createServer((socket) => {
    connections += 1;
    socket.end('hello from the host\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  dirs.removeAll();
  await new Promise((resolve) => server.close(resolve));
});

const MASTER_KEY = 'master-key-material-0f9e8d7c6b5a';
const connectScript = (target: number) =>
  `node -e "require('net').connect(${target}, '127.0.0.1').on('data', d => process.stdout.write('net:' + d)).on('error', e => console.log('net-error:' + e.code))"`;

describeWithBubblewrap('TrialRunner: bubblewrap isolation', () => {
  it('picks bubblewrap as the default driver on this host, and says why', async () => {
    const choice = await detectDefaultSandbox();
    expect(choice.driver).toBe('bubblewrap');
    expect(choice.reason).toContain('bubblewrap');
  });

  it('hides the data directory and its key file and cuts the network under bubblewrap, unlike a plain process', async () => {
    const { runner, dataDir } = testRunner(dirs);
    writeFileSync(path.join(dataDir, 'master.key'), MASTER_KEY);
    const run = `cat ${dataDir}/master.key; echo; ls -A ${dataDir}; ${connectScript(port)}`;
    const before = connections;
    const sandboxed = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run } }));
    const sandboxedOutput = harnessStep(sandboxed, run).output;
    expect(sandboxedOutput).not.toContain(MASTER_KEY);
    expect(sandboxedOutput).toMatch(/master\.key: No such file or directory/);
    expect(sandboxedOutput).toContain('net-error:');
    expect(sandboxedOutput).not.toContain('hello from the host');
    expect(connections).toBe(before);

    const plain = await runner.run(trialSpec({ sandbox: PROCESS, profile: { run } }));
    const plainOutput = harnessStep(plain, run).output;
    expect(plainOutput).toContain(MASTER_KEY);
    expect(plainOutput).toContain('net:hello from the host');
    expect(connections).toBe(before + 1);
  });

  it('reaches the network under bubblewrap only when the sandbox kind allows it', async () => {
    const rawConfig = { sandboxes: { sandbox_kind_3: { driver: 'bubblewrap', network: true } } };
    const { runner } = testRunner(dirs, { rawConfig });
    const run = connectScript(port);
    const outcome = await runner.run(trialSpec({ sandbox: 'sandbox_kind_3', profile: { run } }));
    expect(harnessStep(outcome, run).output).toContain('net:hello from the host');
  });

  it('hides /root, /home, /run, the configured hiddenPaths and the service environment; the system is read-only', async () => {
    const keys = dirs.make('assay-keys-');
    writeFileSync(path.join(keys, 'signing.key'), MASTER_KEY);
    process.env.ASSAY_TEST_SERVICE_SECRET = MASTER_KEY;
    const { runner } = testRunner(dirs, { hiddenPaths: [path.join(keys, 'signing.key')] });
    const run = `cat ${keys}/signing.key; echo "home=$(ls -A /home | wc -l) root=$(ls -A /root | wc -l) run=$(ls -A /run | wc -l)"; env; touch /usr/assay-probe && echo wrote-system; cat /proc/1/environ`;
    const outcome = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run } }));
    delete process.env.ASSAY_TEST_SERVICE_SECRET;
    const output = harnessStep(outcome, run).output;
    expect(output).not.toContain(MASTER_KEY);
    expect(output).not.toContain('wrote-system');
    expect(output).toContain('home=0 root=0 run=0');
    expect(output).not.toContain('ASSAY_TEST_SERVICE_SECRET');
  });
});

describe('TrialRunner: timeouts and faults', () => {
  it('kills the whole process group at timeoutMs and scores the trial failed, timed, without verify (process driver)', async () => {
    const outside = dirs.make('assay-pid-');
    const { runner } = testRunner(dirs);
    const run = `sleep 300 & echo $! > ${outside}/sleep.pid; wait`;
    const outcome = await runner.run(trialSpec({ sandbox: PROCESS, timeoutMs: 1000, profile: { run } }));
    const failure = 'the agent ran out of time: it was still running after 1000 ms';
    expect(outcome).toMatchObject({ status: 'failed', failure, timed: true, voidFields: [], serviceFault: false, exitCode: null });
    expect(outcome.verifySteps).toEqual([]);
    expect(harnessStep(outcome, run).exitCode).toBe(137);
    const pid = Number(readFileSync(path.join(outside, 'sleep.pid'), 'utf8'));
    expect(pid).toBeGreaterThan(0);
    expect(await stillRunning(pid)).toBe(false);
  });

  itWithBubblewrap('kills everything the harness started inside bubblewrap at timeoutMs', async () => {
    const { runner } = testRunner(dirs);
    const marker = `${Math.floor(Math.random() * 9e5) + 1e5}.5`;
    const run = `(sleep ${marker} &) ; sleep ${marker}`;
    const running = runner.run(trialSpec({ sandbox: BUBBLEWRAP, timeoutMs: 1500, profile: { run } }));
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(processesRunning(`sleep\0${marker}`)).toBe(2);
    const outcome = await running;
    expect(outcome).toMatchObject({ status: 'failed', failure: 'the agent ran out of time: it was still running after 1500 ms', timed: true });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(processesRunning(`sleep\0${marker}`)).toBe(0);
  });

  it('leaves no background process of a step behind once the step exits (process driver)', async () => {
    const outside = dirs.make('assay-pid-');
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ sandbox: PROCESS, profile: { run: `sleep 300 & echo $! > ${outside}/bg.pid` } }));
    expect(outcome.status).toBe('passed');
    const pid = Number(readFileSync(path.join(outside, 'bg.pid'), 'utf8'));
    expect(await stillRunning(pid)).toBe(false);
  });

  itWithBubblewrap('voids with serviceFault when the sandbox itself cannot start', async () => {
    const dataDir = dirs.make('assay-data-');
    const broken: SandboxDriver = {
      name: 'bubblewrap',
      launch: (command, options) => {
        const launch = new BubblewrapDriver([]).launch(command, options);
        return { ...launch, args: ['--not-a-bwrap-option', ...launch.args] };
      },
    };
    const runner = runnerWithDriver(dataDir, broken);
    const outcome = await runner.run(trialSpec());
    expect(outcome).toMatchObject({ status: 'void', serviceFault: true, voidFields: ['sandbox'], trajectory: [] });
    expect(outcome.failure).toMatch(/^the sandbox failed to start: bwrap: Unknown option --not-a-bwrap-option/);

    const missing = runnerWithDriver(dataDir, { name: 'process', launch: (c, o) => ({ ...processDriver.launch(c, o), file: '/nonexistent/sh' }) });
    expect(await missing.run(trialSpec())).toMatchObject({ status: 'void', serviceFault: true, failure: 'cannot start /nonexistent/sh: ENOENT' });
  });

  it('voids with serviceFault when the service stops the trial (abort)', async () => {
    const { runner } = testRunner(dirs);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    // Without the abort, `sleep 30` would end normally and the trial would be judged, not voided.
    const outcome = await runner.run(trialSpec({ profile: { run: 'sleep 30' } }), controller.signal);
    expect(outcome).toMatchObject({ status: 'void', serviceFault: true, voidFields: ['service'] });
  });

  it('refuses a trials directory inside the data directory', () => {
    const dataDir = dirs.make('assay-data-');
    expect(() => createTrialRunner({ dataDir, trialsRoot: path.join(dataDir, 'trials') })).toThrow(/outside the data directory/);
  });
});

function runnerWithDriver(dataDir: string, driver: SandboxDriver): Pick<SandboxTrialRunner, 'run'> {
  const trialsRoot = dirs.make('assay-trials-');
  mkdirSync(trialsRoot, { recursive: true });
  const settings = {
    dataDir,
    trialsRoot,
    hiddenPaths: [dataDir, trialsRoot],
    config: parseExecutionConfig({ sandboxes: { sandbox_kind_1: { driver: driver.name } }, allowUnsandboxed: true }),
    outputCapBytes: 65536,
    verifyTimeoutMs: 10_000,
    validatorTimeoutMs: 10_000,
    installTimeoutMs: 10_000,
    cloneTimeoutMs: 10_000,
    lookupHost: systemLookup,
    logger: null,
    clock: systemClock,
  };
  const runner = new SandboxTrialRunner(settings, { bubblewrap: driver, process: driver });
  return { run: (spec, signal) => runner.run({ ...spec, sandbox: 'sandbox_kind_1' }, signal) };
}

/** Whether a process is alive (not gone, not a zombie), allowing a moment for SIGKILL to land. */
async function stillRunning(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    let state: string;
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0];
    } catch {
      return false;
    }
    if (state === 'Z') return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** How many host processes have exactly this command line (NUL-separated arguments). */
function processesRunning(commandLine: string): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0$/, '') === commandLine) count += 1;
    } catch {
      // The process ended while we looked.
    }
  }
  return count;
}
