/**
 * How the service talks to the supervisor of a sandbox session (one bubblewrap per trial, see
 * sandbox-session.ts). The supervisor is a shell that runs as root inside the sandbox and never
 * reads anything of the trial as code: for each line `<nonce> <stdin>` on its stdin it runs the
 * step file the service wrote (the command and its environment) as the trial's own user, kills
 * whatever of the trial is left, and prints `<nonce> <status> <clean|stale>` on its stdout.
 *
 * The command's output goes to the same stdout, before that line: the nonce is random per command
 * and only the service and the supervisor (root: the trial's user cannot read its memory, its
 * descriptors or its stdin) know it, so no output of the trial can end its command early or
 * forge its status. Every process of the trial is dead before the line is written, so nothing of
 * the command's output can follow it.
 */

/** The files of the session's control directory: the step (its variables and command) and its stdin. */
export const STEP_FILE = 'step.sh';
export const STEP_INPUT = 'step.in';

/**
 * The supervisor: `sh -c SUPERVISOR assay-session <uid> <gid> <workspace> <setpriv> <control>`,
 * the control directory being root's, in the trial's directory (root's too). Each step
 * runs in the workspace, with the step's stdin (a file) or /dev/null, and stderr joined to stdout.
 * The step shell (the trial's user) drops OLDPWD (the supervisor's `cd`), reads the step's
 * variables and execs `/bin/sh -c <command>` with exactly those. After the step, `kill -9 -1` as
 * root ends every other process of the sandbox (not its init, not the supervisor): a background
 * process of one step never outlives it. If some are still there after ~2 s (stuck in the
 * kernel), the line says `stale` and the supervisor exits: the sandbox, and them with it, goes.
 */
export const SUPERVISOR = `
uid=$1 gid=$2 ws=$3 setpriv=$4 control=$5
while IFS= read -r line; do
  nonce=\${line%% *}
  input=\${line#* }
  case $nonce in ''|*[!0-9a-f]*) exit 64;; esac
  if cd "$ws" 2>/dev/null; then
    if [ "$input" = 1 ]; then in=$control/${STEP_INPUT}; else in=/dev/null; fi
    "$setpriv" --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- \\
      /bin/sh -c 'unset OLDPWD; . "$1" && exec /bin/sh -c "$ASSAY_SESSION_COMMAND"' assay-step "$control/${STEP_FILE}" <"$in" 2>&1
    status=$?
  else
    status=chdir
  fi
  left=clean
  tries=0
  while kill -9 -1 2>/dev/null; do
    tries=$((tries + 1))
    if [ $tries -gt 1000 ]; then
      if [ $tries -gt 1200 ]; then left=stale; break; fi
      /bin/sleep 0.01
    fi
  done
  printf '%s %s %s\\n' "$nonce" "$status" "$left"
  [ $left = clean ] || exit 65
done
`;

/** The shell variable the step file sets (never exported) to the command; no trial can set an ASSAY_ name. */
const COMMAND_VARIABLE = 'ASSAY_SESSION_COMMAND';

/** Names a POSIX shell (dash, or bash as /bin/sh) treats as its own: a step with one runs in a sandbox of its own. */
const SHELL_OWN_NAMES = new Set([
  'UID',
  'EUID',
  'PPID',
  'OPTIND',
  'OPTARG',
  'PWD',
  'OLDPWD',
  'IFS',
  'PS1',
  'PS2',
  'PS4',
  'ENV',
  'GROUPS',
  'SHELLOPTS',
  'BASHOPTS',
]);
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** exec's limit on one argument or variable (MAX_ARG_STRLEN), and well under its limit on all of them. */
const MAX_STRING_BYTES = 128 * 1024 - 1;
const MAX_TOTAL_BYTES = 1024 * 1024;

/**
 * Whether a command and its environment can go through a session's step file unchanged. What
 * cannot (a name the shell would refuse or treat as its own, a NUL, a size exec refuses: E2BIG)
 * runs in a sandbox of its own, where it meets exactly what it met before sessions existed.
 */
export function fitsSession(command: string, env: Record<string, string>): boolean {
  if (command.includes('\0') || Buffer.byteLength(command) > MAX_STRING_BYTES) return false;
  let total = Buffer.byteLength(command);
  for (const [name, value] of Object.entries(env)) {
    if (!SHELL_NAME.test(name) || SHELL_OWN_NAMES.has(name) || name === COMMAND_VARIABLE || value.includes('\0')) return false;
    const bytes = Buffer.byteLength(name) + 1 + Buffer.byteLength(value);
    if (bytes > MAX_STRING_BYTES) return false;
    total += bytes;
  }
  return total <= MAX_TOTAL_BYTES;
}

/** The step file: the variables exported, the command in a variable that is not. */
export function stepFile(command: string, env: Record<string, string>): string {
  const lines = Object.entries(env).map(([name, value]) => `export ${name}=${singleQuoted(value)}\n`);
  return `${lines.join('')}${COMMAND_VARIABLE}=${singleQuoted(command)}\n`;
}

function singleQuoted(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** How the supervisor said a step ended. */
export interface StepEnd {
  /** The exit status as the shell reports it; null when the workspace could not be entered. */
  status: number | null;
  /** Processes of the step outlived `kill -9 -1` (stuck in the kernel): the session must go. */
  stale: boolean;
}

/**
 * Splits the session's stdout for one command: what comes before its end line is the command's
 * output, handed on as it arrives (less the last bytes, which could be the start of the line).
 */
export class StepOutput {
  private readonly nonce: Buffer;
  private held: Buffer = Buffer.alloc(0);
  private endLine: string | null = null;

  constructor(
    nonce: string,
    private readonly output: (chunk: Buffer) => void,
    private readonly ended: (end: StepEnd) => void,
  ) {
    this.nonce = Buffer.from(nonce, 'latin1');
  }

  push(chunk: Buffer): void {
    if (this.endLine !== null) {
      this.readEnd(chunk.toString('latin1'));
      return;
    }
    const data = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    const at = data.indexOf(this.nonce);
    if (at >= 0) {
      this.held = Buffer.alloc(0);
      if (at > 0) this.output(data.subarray(0, at));
      this.endLine = '';
      this.readEnd(data.subarray(at + this.nonce.length).toString('latin1'));
      return;
    }
    const keep = Math.min(data.length, this.nonce.length - 1);
    if (data.length > keep) this.output(data.subarray(0, data.length - keep));
    this.held = Buffer.from(data.subarray(data.length - keep));
  }

  /** Hands on what is held back: the command ended without an end line (its sandbox was killed). */
  flush(): void {
    if (this.endLine !== null || this.held.length === 0) return;
    this.output(this.held);
    this.held = Buffer.alloc(0);
  }

  private readEnd(text: string): void {
    const line = (this.endLine ?? '') + text;
    const newline = line.indexOf('\n');
    if (newline < 0) {
      this.endLine = line;
      return;
    }
    const [status, left] = line.slice(0, newline).trim().split(' ');
    this.ended({ status: /^\d+$/.test(status) ? Number(status) : null, stale: left !== 'clean' });
  }
}
