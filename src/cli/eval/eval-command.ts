import * as fs from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { AssayApi } from './api-client';
import { EXIT, FAIL_ON, FailOn, worstExit } from './exit-codes';
import { writeJunit, FinishedSuite } from './junit';
import { beatInterval, localEnvironment } from './local-mode';
import { PreparedSuite, prepareSuite } from './prepare-suite';
import { Output, runSuite } from './run-suite';
import { InvalidSuiteFile } from './suite-file';

interface EvalFlags {
  url: string;
  key?: string;
  trials?: number;
  local?: boolean;
  concurrency: number;
  filter?: string;
  junit?: string;
  json?: string;
  failOn: FailOn;
  progress: boolean;
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

export function registerEvalCommand(program: Command): void {
  program
    .command('eval')
    .description('Run suite files (YAML or JSON bodies of evals.batches.start), follow them, and exit by the result.')
    .argument('<FILE...>', 'suite files; each one is a batch, run one after another')
    .addOption(new Option('--url <url>', 'the Assay server').env('ASSAY_URL').default('http://127.0.0.1:8080').argParser(baseUrl))
    .addOption(new Option('--key <key>', 'an API key with evals:write and evals:read').env('ASSAY_API_KEY'))
    .addOption(new Option('--trials <n>', "trials per case and variant, instead of the file's").argParser(integer('--trials', 1, 10)))
    .option('--local', 'run every variant on this machine (variants with sandbox: local always do)')
    .addOption(new Option('--concurrency <n>', 'trials run at once in local mode').default(4).argParser(integer('--concurrency', 1, 64)))
    .option('--filter <pattern>', 'keep the cases whose id matches (* any characters, ? one)')
    .option('--junit <file>', 'write JUnit XML: a testsuite per variant, a testcase per run')
    .option('--json <file>', 'write the batch as evals.batches.get answers it (a list of them for several files)')
    .addOption(new Option('--fail-on <when>', 'exit 1 on failed trials, also on void ones (strict), or never').choices(FAIL_ON).default('failures'))
    .option('--no-progress', 'plain log lines instead of progress bars')
    .configureOutput({ outputError: () => undefined })
    .exitOverride((error: CommanderError) => {
      if (error.exitCode === 0) process.exit(0);
      throw new EvalUsage(error.message.replace(/^error: /, ''));
    })
    .action(async (files: string[], flags: EvalFlags) => {
      process.exit(await evaluate(files, flags));
    });
}

/** Every file is read and validated before any batch starts: one invalid file sends nothing. */
function prepareAll(files: string[], flags: EvalFlags, out: Output): PreparedSuite[] | null {
  const prepared: PreparedSuite[] = [];
  let invalid = false;
  for (const file of files) {
    try {
      prepared.push(prepareSuite(file, { trials: flags.trials, filter: flags.filter, local: flags.local === true }));
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

async function evaluate(files: string[], flags: EvalFlags): Promise<number> {
  const out: Output = {
    line: (text) => process.stdout.write(`${text}\n`),
    error: (text) => process.stderr.write(`${text}\n`),
    stream: process.stdout,
  };
  const prepared = prepareAll(files, flags, out);
  if (!prepared) {
    out.error('Nothing was sent: fix the file and run again.');
    return flush(EXIT.usage);
  }
  if (!flags.key) {
    out.error('No API key: pass --key or set ASSAY_API_KEY (a key with evals:write and evals:read; see "assay keys create").');
    return flush(EXIT.usage);
  }
  const beat = beatInterval(process.env);
  if (beat.problem) {
    out.error(beat.problem);
    return flush(EXIT.usage);
  }
  const api = new AssayApi(flags.url, flags.key);
  const interrupt = new AbortController();
  // The first Ctrl-C stops following (and cancels a local batch cleanly); a second one leaves at once.
  process.on('SIGINT', () => {
    if (interrupt.signal.aborted) process.exit(EXIT.interrupted);
    interrupt.abort();
  });
  const bars = flags.progress && process.stdout.isTTY;
  const codes: number[] = [];
  const finished: FinishedSuite[] = [];
  for (const suite of prepared) {
    if (interrupt.signal.aborted) break;
    const outcome = await runSuite(suite, api, { failOn: flags.failOn, bars, concurrency: flags.concurrency, beatIntervalMs: beat.ms }, out, interrupt.signal);
    codes.push(outcome.exit);
    if (outcome.batch) finished.push({ name: suite.name, batch: outcome.batch });
    if (outcome.exit === EXIT.interrupted) break;
  }
  writeReports(flags, finished, prepared.length);
  return flush(worstExit(codes));
}

function writeReports(flags: EvalFlags, finished: FinishedSuite[], files: number): void {
  if (flags.junit) writeJunit(flags.junit, finished);
  if (flags.json) {
    const batches = finished.map((suite) => suite.batch);
    fs.writeFileSync(flags.json, `${JSON.stringify(files === 1 ? (batches[0] ?? null) : batches, null, 2)}\n`);
  }
}

/** The exit code, once what was written to stdout has left the process. */
function flush(code: number): Promise<number> {
  return new Promise((resolve) => process.stdout.write('', () => resolve(code)));
}

/** Whether an error is a refusal of the eval command line (exit 2). */
export const isEvalUsage = (error: unknown): error is Error => error instanceof EvalUsage;
