import { setMaxListeners } from 'node:events';
import { Command, CommanderError, Option } from 'commander';
import { AssayApi, ServerUnreachable } from './api-client';
import { casesOfOtherSuites, movedCaseLine } from './case-owners';
import { EXIT, FAIL_ON, FailOn, worstExit } from './exit-codes';
import { beatInterval, localEnvironment } from './local-mode';
import { PreparedSuite, prepareSuite } from './prepare-suite';
import { writeReports, SuiteReport } from './reports';
import { Output, RunChoices, runSuite } from './run-suite';
import { StartRefused } from './start-batch';
import { storedRetryRun, suiteRun } from './suite-run';
import { InvalidSuiteFile } from './suite-file';

export interface EvalFlags {
  url: string;
  key?: string;
  trials?: number;
  local?: boolean;
  concurrency: number;
  filter?: string;
  tag: string[];
  junit?: string;
  json?: string;
  failOn: FailOn;
  progress: boolean;
  waitTimeout: number;
  retryVoid?: string;
  move: boolean;
}

/** A command line `assay eval` cannot take: exit 2, the message and where to read the options. */
class EvalUsage extends Error {}

function integer(name: string, min: number, max: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!/^\d+$/.test(value) || number < min || number > max) throw new EvalUsage(`${name} takes a whole number from ${min} to ${max}, not "${value}".`);
    return number;
  };
}

function baseUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new EvalUsage(`--url (or ASSAY_URL) must be an http(s) URL, not "${value}".`);
  }
  return value.replace(/\/+$/, '');
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };
const LONGEST_WAIT_MS = 24 * 3_600_000;

/** `90s`, `30m`, `2h` (a bare number is seconds), from 0 to 24 hours, in milliseconds. */
function waitDuration(value: string): number {
  const match = /^(\d+)([smh]?)$/.exec(value);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] || 's'] : NaN;
  if (!(ms <= LONGEST_WAIT_MS)) throw new EvalUsage(`--wait-timeout takes a duration such as 90s, 30m or 2h, at most 24h, not "${value}".`);
  return ms;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerEvalCommand(program: Command): void {
  program
    .command('eval')
    .description('Run suite files (YAML or JSON bodies of evals.batches.start), follow them, and exit by the result.')
    .argument('[FILE...]', 'suite files, run one after another; a suite over a batch (100 trials) runs as several')
    .addOption(new Option('--url <url>', 'the Assay server').env('ASSAY_URL').default('http://127.0.0.1:8080').argParser(baseUrl))
    .addOption(new Option('--key <key>', 'an API key with evals:write and evals:read').env('ASSAY_API_KEY'))
    .addOption(new Option('--trials <n>', "trials per case and variant, instead of the file's").argParser(integer('--trials', 1, 10)))
    .option('--local', 'run every variant on this machine (variants with sandbox: local always do)')
    .addOption(new Option('--concurrency <n>', 'trials run at once in local mode').default(4).argParser(integer('--concurrency', 1, 64)))
    .option('--filter <pattern>', 'keep the cases whose id matches (* any characters, ? one)')
    .option('--tag <tag>', 'keep the cases that carry this tag (repeat it: any of them)', collect, [])
    .option('--junit <file>', 'write JUnit XML: a testsuite per variant, a testcase per run')
    .option('--json <file>', 'write the batch as evals.batches.get answers it (several batches of a suite: {batches: [...]})')
    .addOption(new Option('--fail-on <when>', 'exit 1 on failed trials, also on void ones (strict), or never').choices(FAIL_ON).default('failures'))
    .option('--no-progress', 'plain log lines instead of progress bars')
    .addOption(
      new Option('--wait-timeout <duration>', 'how long a batch waits for a slot (3 run at once per organization)')
        .default(30 * 60_000, '30m')
        .argParser(waitDuration),
    )
    .option(
      '--retry-void <batch>',
      "run again the void trials of this batch and merge the result with its other trials: from FILE's definitions, or without FILE from the cases as the server stores them",
    )
    .option('--no-move', 'refuse to start when a case belongs to another suite (instead of moving it to this one)')
    .configureOutput({ outputError: () => undefined })
    .exitOverride((error: CommanderError) => {
      if (error.exitCode === 0) process.exit(0);
      throw new EvalUsage(error.message.replace(/^error: /, ''));
    })
    .action(async (files: string[], flags: EvalFlags) => {
      if (flags.retryVoid !== undefined && files.length > 1) {
        throw new EvalUsage('--retry-void takes one suite file, the one the batch ran, or none (the cases as the server stores them run again).');
      }
      if (flags.retryVoid !== undefined && files.length === 0) process.exit(await retryStored(flags.retryVoid, flags));
      if (files.length === 0) throw new EvalUsage('give one or more suite files (FILE...): YAML or JSON bodies of evals.batches.start.');
      process.exit(await evaluate(files, flags));
    });
}

/** Every file is read and validated before any batch starts: one invalid file sends nothing. */
function prepareAll(files: string[], flags: EvalFlags, out: Output): PreparedSuite[] | null {
  const prepared: PreparedSuite[] = [];
  let invalid = false;
  for (const file of files) {
    try {
      prepared.push(prepareSuite(file, { trials: flags.trials, filter: flags.filter, tags: flags.tag, local: flags.local === true }));
    } catch (error) {
      if (!(error instanceof InvalidSuiteFile)) throw error;
      out.error(error.message);
      invalid = true;
    }
  }
  if (invalid) return null;
  // A local suite's env names must all be set here; checked before any batch starts, like the files.
  for (const suite of prepared) {
    const { missing } = suite.local ? localEnvironment(suite.env, process.env) : { missing: [] };
    if (missing.length === 0) continue;
    out.error(`${suite.file.shownAs}: env names ${missing.join(', ')}, which this environment does not set; set them or remove them from env.`);
    invalid = true;
  }
  return invalid ? null : prepared;
}

const NO_KEY = 'No API key: pass --key or set ASSAY_API_KEY (a key with evals:write and evals:read; see "assay keys create").';

function stdOutput(): Output {
  return {
    line: (text) => process.stdout.write(`${text}\n`),
    error: (text) => process.stderr.write(`${text}\n`),
    stream: process.stdout,
  };
}

async function evaluate(files: string[], flags: EvalFlags): Promise<number> {
  const out = stdOutput();
  const prepared = prepareAll(files, flags, out);
  if (!prepared) {
    out.error('Nothing was sent: fix the file and run again.');
    return flush(EXIT.usage);
  }
  if (!flags.key) {
    out.error(NO_KEY);
    return flush(EXIT.usage);
  }
  const beat = beatInterval(process.env);
  if (beat.problem) {
    out.error(beat.problem);
    return flush(EXIT.usage);
  }
  const api = new AssayApi(flags.url, flags.key);
  const interrupt = onInterrupt();
  const checked = await orRefusal(() => checkCaseOwners(api, prepared, flags.move, out), out);
  if (typeof checked === 'number') return flush(checked);
  return flush(await runAll(prepared, api, flags, out, interrupt.signal, beat.ms));
}

/**
 * Aborted by the first Ctrl-C, which stops following (and cancels a local batch cleanly); a
 * second one leaves at once.
 */
function onInterrupt(): AbortController {
  const interrupt = new AbortController();
  // Each batch followed, each local runner and each wait for a slot listens for it: a long suite has many.
  setMaxListeners(0, interrupt.signal);
  process.on('SIGINT', () => {
    if (interrupt.signal.aborted) process.exit(EXIT.interrupted);
    interrupt.abort();
  });
  return interrupt;
}

/** Under these flags the suite file is needed: they choose among its cases, or run it here. */
const FILE_FLAGS: Array<[keyof EvalFlags, string]> = [
  ['local', '--local'],
  ['trials', '--trials'],
  ['filter', '--filter'],
];

/** `--retry-void BATCH` without a file: the batch's void trials run again from the cases the server stores. */
async function retryStored(batchId: string, flags: EvalFlags): Promise<number> {
  const out = stdOutput();
  const needsFile = [...FILE_FLAGS.filter(([flag]) => flags[flag] !== undefined).map(([, name]) => name), ...(flags.tag.length > 0 ? ['--tag'] : [])];
  if (needsFile.length > 0) {
    out.error(`--retry-void without a suite file runs the stored cases on the server as they are: ${needsFile.join(', ')} needs the suite file the batch ran.`);
    return flush(EXIT.usage);
  }
  if (!flags.key) {
    out.error(NO_KEY);
    return flush(EXIT.usage);
  }
  const api = new AssayApi(flags.url, flags.key);
  const interrupt = onInterrupt();
  const planned = await orRefusal(() => storedRetryRun(api, batchId), out);
  if (typeof planned === 'number') return flush(planned);
  const choices: RunChoices = {
    failOn: flags.failOn,
    bars: flags.progress && process.stdout.isTTY,
    concurrency: flags.concurrency,
    waitTimeoutMs: flags.waitTimeout,
  };
  const outcome = await runSuite(planned.plan, api, choices, out, interrupt.signal);
  writeReports(flags, [planned.report(outcome)], 1);
  return flush(outcome.exit);
}

async function runAll(prepared: PreparedSuite[], api: AssayApi, flags: EvalFlags, out: Output, signal: AbortSignal, beatIntervalMs?: number): Promise<number> {
  const choices: RunChoices = {
    failOn: flags.failOn,
    bars: flags.progress && process.stdout.isTTY,
    concurrency: flags.concurrency,
    beatIntervalMs,
    waitTimeoutMs: flags.waitTimeout,
  };
  const codes: number[] = [];
  const reports: SuiteReport[] = [];
  for (const suite of prepared) {
    if (signal.aborted) break;
    const planned = await orRefusal(() => suiteRun(suite, api, flags.retryVoid), out);
    if (typeof planned === 'number') {
      codes.push(planned);
      continue;
    }
    const { plan, report } = planned;
    const outcome = await runSuite(plan, api, choices, out, signal);
    codes.push(outcome.exit);
    reports.push(report(outcome));
    if (outcome.exit === EXIT.interrupted) break;
  }
  writeReports(flags, reports, prepared.length);
  return worstExit(codes);
}

/**
 * A case id is the organization's: a case another suite holds moves to this one when it runs
 * (and leaves that suite's page). Each is said before anything starts; --no-move refuses them.
 */
async function checkCaseOwners(api: AssayApi, prepared: PreparedSuite[], move: boolean, out: Output): Promise<{ ok: true }> {
  let refused = false;
  for (const suite of prepared) {
    const caseIds = (suite.body.cases as Array<{ id: string }>).map((evalCase) => evalCase.id);
    for (const moved of await casesOfOtherSuites(api, suite.suiteId, caseIds)) {
      out.error(`${suite.file.shownAs}: ${movedCaseLine(moved, suite.suiteId, !move)}`);
      refused ||= !move;
    }
  }
  if (refused) throw new StartRefused(EXIT.usage, 'Nothing was started.');
  return { ok: true };
}

/** What `work` answers; or, when it was refused or the server could not be reached, the exit code, once said. */
async function orRefusal<T extends object>(work: () => Promise<T>, out: Output): Promise<T | number> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StartRefused) {
      out.error(error.message);
      return error.exit;
    }
    if (error instanceof ServerUnreachable) {
      out.error(error.message);
      return EXIT.usage;
    }
    throw error;
  }
}

/** The exit code, once what was written to stdout has left the process. */
function flush(code: number): Promise<number> {
  return new Promise((resolve) => process.stdout.write('', () => resolve(code)));
}

/** Whether an error is a refusal of the eval command line (exit 2). */
export const isEvalUsage = (error: unknown): error is Error => error instanceof EvalUsage;
