/**
 * An agent CLI run bare, for the agents benchmark: the command line its driver builds, in a
 * bubblewrap sandbox with the flags and binds of an Assay trial without a network, and none of
 * Assay's machinery (no server, no gateway, no trial user, no snapshots). The CLI reaches the fake
 * provider as a trial reaches the gateway: Assay's forwarder serves a unix socket on the
 * sandbox's own loopback, and on the host a byte relay (no HTTP parsing, no metering) joins that
 * socket to the fake's port.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { AgentDriver, ProviderProtocol } from '#trial-runner';
import { tempDir } from './sqlite-log';

/** The compiled forwarder beside the compiled service (copied by scripts/copy-assets.mjs). */
const FORWARDER = path.resolve(__dirname, '../../src/trial-runner/gateway/forwarder.py');
/** Where a trial sees its agent, the gateway's socket and the forwarder (sandbox-driver.ts). */
const AGENT_MOUNT = '/run/assay/agent';
const SOCKET_MOUNT = '/run/assay/gateway.sock';
const FORWARDER_MOUNT = '/run/assay/forwarder.py';
/** The trial's default limits (trial-limits.ts): /tmp and /dev/shm of 1 GiB, 8 GiB of data and of file size. */
const TMP_BYTES = 1024 * 1024 * 1024;
const LIMIT_BYTES = 8192 * 1024 * 1024;
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];
const HIDDEN = ['/root', '/home', '/run', '/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/ssl/private', '/etc/sudoers', '/etc/sudoers.d'];
const TIMEOUT_MS = 240_000;
/**
 * As root, the CLI runs as a user of its own, as a trial does (setpriv, no capabilities, no new
 * privileges; an id outside Assay's trial range), which some CLIs need: Codex's own sandbox maps
 * its user into a namespace, which root without capabilities may not do.
 */
const USER: number | null = process.getuid?.() === 0 ? 199_999 : null;
const ACCOUNT = 'assay-trial';
const PROCESSES = 1024;

export interface BareAgentRun {
  driver: AgentDriver;
  /** The agent's install folder on the host (bound read-only). */
  installDir: string;
  model: string;
  protocol: ProviderProtocol;
  message: string;
  verify: string;
}

/** The host's side of the sandbox's way out: a unix socket whose connections are piped to the fake's port. */
export class SocketRelay {
  private constructor(
    private readonly server: net.Server,
    readonly socket: string,
    private readonly home: ReturnType<typeof tempDir>,
  ) {}

  static async start(port: number): Promise<SocketRelay> {
    const home = tempDir('agents-relay');
    const socket = home.file('gateway.sock');
    const server = net.createServer((client) => {
      const upstream = net.connect(port, '127.0.0.1');
      client.pipe(upstream).on('error', () => client.destroy());
      upstream.pipe(client).on('error', () => upstream.destroy());
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    // The sandbox's user connects to it, as to the gateway's socket.
    fs.chmodSync(socket, 0o666);
    return new SocketRelay(server, socket, home);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.home.remove();
  }
}

/**
 * One run: a fresh trial directory (workspace, home, tmp; named as Assay names its own, which the
 * fake reads the workspace from), the driver's home files, then the CLI and the verify in one
 * sandbox. Answers its wall time from the directory's creation to the sandbox's exit (the removal
 * of the directory after is not counted); throws when the verify fails.
 */
export async function runBareAgent(run: BareAgentRun, relay: SocketRelay, port: number): Promise<number> {
  const root = tempDir('agents-bare');
  try {
    const started = performance.now();
    const trial = makeTrialDirectory(root.dir);
    const gatewayUrl = `http://127.0.0.1:${port}`;
    const setup = {
      bin: path.join(AGENT_MOUNT, 'node_modules', '.bin', run.driver.bin),
      home: trial.home,
      workspace: trial.workspace,
      model: run.model,
      gatewayUrl,
      gatewayToken: 'bench-gateway-token',
      protocol: run.protocol,
    };
    writeHomeFiles(trial.home, run.driver.homeFiles(setup));
    const filled = (value: string) =>
      value.replace(/\{\{\s*gateway\.(url|token)\s*\}\}/g, (_match, name: string) => (name === 'url' ? gatewayUrl : setup.gatewayToken));
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: trial.home, TMPDIR: trial.tmp, LANG: process.env.LANG ?? 'C.UTF-8' };
    if (USER !== null) Object.assign(env, { USER: ACCOUNT, LOGNAME: ACCOUNT });
    for (const [name, value] of Object.entries(run.driver.env(setup))) env[name] = filled(value);
    const command = run.driver.command(setup, { number: 1, message: run.message, sessionId: null }, '');
    const script = [
      `python3 ${FORWARDER_MOUNT} ${port} ${SOCKET_MOUNT} || exit 125`,
      command,
      'agent=$?',
      `${run.verify} || { echo "verify failed (the agent exited $agent)" >&2; exit 1; }`,
    ].join('\n');
    const { status, output } = await bubblewrap(sandboxArgs(trial, run.installDir, relay.socket), script, env);
    const wallMs = performance.now() - started;
    if (status !== 0) throw new Error(`the bare ${run.driver.name} run failed (exit ${status}): ${output.slice(-1500)}`);
    return wallMs;
  } finally {
    root.remove();
  }
}

interface TrialDirectory {
  root: string;
  workspace: string;
  home: string;
  tmp: string;
  /** The passwd and group shown in the sandbox, with the user added; null when the bench is not root. */
  accounts: [string, string] | null;
}

/** A trial directory as Assay makes one (trial-directory.ts): named sbx_<hex>, which the fake reads the workspace from; the user's own. */
function makeTrialDirectory(parent: string): TrialDirectory {
  const root = path.join(parent, `sbx_${randomBytes(8).toString('hex')}`);
  fs.mkdirSync(root, { mode: 0o755 });
  const [workspace, home, tmp, control] = ['workspace', 'home', 'tmp', '.control'].map((name) => path.join(root, name));
  for (const dir of [workspace, home, tmp]) fs.mkdirSync(dir);
  if (USER === null) return { root, workspace, home, tmp, accounts: null };
  fs.mkdirSync(control, { mode: 0o755 });
  const host = (file: string) => fs.readFileSync(file, 'utf8').replace(/([^\n])$/, '$1\n');
  const accounts: [string, string] = [path.join(control, 'passwd'), path.join(control, 'group')];
  fs.writeFileSync(accounts[0], `${host('/etc/passwd')}${ACCOUNT}:x:${USER}:${USER}:Assay trial:${home}:/bin/sh\n`, { mode: 0o644 });
  fs.writeFileSync(accounts[1], `${host('/etc/group')}${ACCOUNT}:x:${USER}:\n`, { mode: 0o644 });
  for (const dir of [workspace, home, tmp]) fs.lchownSync(dir, USER, USER);
  return { root, workspace, home, tmp, accounts };
}

/** The driver's settings files under HOME, the user's (the agent writes beside them). */
function writeHomeFiles(home: string, files: Record<string, string>): void {
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(home, relative);
    let dir = home;
    for (const part of path
      .dirname(relative)
      .split(path.sep)
      .filter((entry) => entry !== '.')) {
      dir = path.join(dir, part);
      if (!fs.existsSync(dir)) fs.mkdirSync(dir, { mode: 0o700 });
      if (USER !== null) fs.lchownSync(dir, USER, USER);
    }
    fs.writeFileSync(file, content, { mode: 0o600 });
    if (USER !== null) fs.lchownSync(file, USER, USER);
  }
}

/** The flags BubblewrapDriver gives a trial without a network (sandbox-driver.ts), in the same order. */
function sandboxArgs(trial: TrialDirectory, installDir: string, socket: string): string[] {
  const args: string[] = [];
  for (const entry of SYSTEM_PATHS) {
    const found = fs.lstatSync(entry, { throwIfNoEntry: false });
    if (found === undefined) continue;
    if (found.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(entry), entry);
    else args.push('--ro-bind', entry, entry);
  }
  const tmpfs = (target: string) => ['--perms', '1777', '--size', String(TMP_BYTES), '--tmpfs', target];
  args.push('--dev', '/dev', ...tmpfs('/dev/shm'), '--proc', '/proc', ...tmpfs('/tmp'));
  for (const entry of HIDDEN) {
    const found = fs.statSync(entry, { throwIfNoEntry: false });
    if (found === undefined) continue;
    args.push(...(found.isDirectory() ? ['--tmpfs', fs.realpathSync(entry)] : ['--ro-bind', '/dev/null', fs.realpathSync(entry)]));
  }
  const prefix = path.dirname(path.dirname(process.execPath));
  if (!SYSTEM_PATHS.some((system) => prefix === system || prefix.startsWith(`${system}/`))) args.push('--ro-bind', prefix, prefix);
  args.push('--perms', '0755', '--dir', '/run/assay', '--bind', socket, SOCKET_MOUNT, '--ro-bind', FORWARDER, FORWARDER_MOUNT);
  args.push('--ro-bind', installDir, AGENT_MOUNT);
  args.push('--perms', '0755', '--dir', path.dirname(trial.root), '--bind', trial.root, trial.root);
  if (trial.accounts !== null) args.push('--ro-bind', trial.accounts[0], '/etc/passwd', '--ro-bind', trial.accounts[1], '/etc/group');
  args.push('--unshare-net', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--new-session');
  if (USER === null) args.push('--cap-drop', 'ALL');
  args.push('--chdir', trial.workspace);
  return args;
}

/** The sandbox, then prlimit with the trial's limits, then (as root) setpriv to the user, then the shell. */
function bubblewrap(args: string[], script: string, env: Record<string, string>): Promise<{ status: number | null; output: string }> {
  const limits = ['prlimit', `--data=${LIMIT_BYTES}:${LIMIT_BYTES}`, `--fsize=${LIMIT_BYTES}:${LIMIT_BYTES}`];
  const drop: string[] = [];
  if (USER !== null) {
    limits.push(`--nproc=${PROCESSES}:${PROCESSES}`);
    drop.push('setpriv', `--reuid=${USER}`, `--regid=${USER}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--');
  }
  return new Promise((resolve, reject) => {
    const child = spawn('bwrap', [...args, '--', ...limits, '--', ...drop, '/bin/sh', '-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
  });
}
