import * as fs from 'node:fs';
import { createInterface } from 'node:readline';
import { Command, CommanderError, Option } from 'commander';
import { ExportChainCheck } from './export-chain-check';

/** `assay audit` exits: 0 done (or intact), 1 refused or broken, 2 a command line or file to fix. */
export const AUDIT_EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A command line `assay audit` cannot take. */
class AuditUsage extends Error {}

export const isAuditUsage = (error: unknown): error is Error => error instanceof AuditUsage;

interface ExportFlags {
  since: string;
  until?: string;
  category: string[];
  url: string;
  key?: string;
}

function instant(flag: string) {
  return (value: string): string => {
    if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value) || Number.isNaN(Date.parse(value))) {
      throw new AuditUsage(`${flag} takes an ISO-8601 date or date-time with a zone (2025-01-31 or 2025-01-31T12:00:00Z), not "${value}".`);
    }
    return new Date(Date.parse(value)).toISOString();
  };
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, ...value.split(',').filter((category) => category !== '')];
}

function baseUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new AuditUsage(`--url (or ASSAY_URL) must be an http(s) URL, not "${value}".`);
  }
  return value.replace(/\/+$/, '');
}

export function registerAuditCommand(program: Command): void {
  const audit = program.command('audit').configureOutput({ outputError: () => undefined });
  audit.exitOverride(usage);
  audit
    .command('export')
    .description('Write the organization events as NDJSON to standard output, ending with the count and chain hash.')
    .addOption(new Option('--since <time>', 'the oldest event time (ISO-8601)').argParser(instant('--since')).makeOptionMandatory())
    .addOption(new Option('--until <time>', 'the newest event time (ISO-8601)').argParser(instant('--until')))
    .addOption(new Option('--category <category>', 'only these stream categories (repeat, or a comma list)').argParser(collect).default([]))
    .addOption(new Option('--url <url>', 'the Assay server').env('ASSAY_URL').default('http://127.0.0.1:8080').argParser(baseUrl))
    .addOption(new Option('--key <key>', 'an API key with audit:read').env('ASSAY_API_KEY'))
    .configureOutput({ outputError: () => undefined })
    .exitOverride(usage)
    .action(async (flags: ExportFlags) => {
      process.exitCode = await exportEvents(flags);
    });
  audit
    .command('verify')
    .description('Check an export file offline: exit 0 when it is complete and unaltered, 1 at its first bad line.')
    .argument('<file>', 'an NDJSON file written by "assay audit export"')
    .configureOutput({ outputError: () => undefined })
    .exitOverride(usage)
    .action(async (file: string) => {
      process.exitCode = await verifyFile(file);
    });
}

function usage(error: CommanderError): never {
  if (error.exitCode === 0) process.exit(AUDIT_EXIT.ok); // --help: printed already
  throw new AuditUsage(error.message.replace(/^error: /, ''));
}

async function exportEvents(flags: ExportFlags): Promise<number> {
  if (!flags.key) throw new AuditUsage('No API key: pass --key or set ASSAY_API_KEY (a key with audit:read).');
  const body = { from: flags.since, ...(flags.until ? { to: flags.until } : {}), ...(flags.category.length > 0 ? { categories: flags.category } : {}) };
  let response: Response;
  try {
    response = await fetch(`${flags.url}/v1/audit.events.export`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${flags.key}` },
      body: JSON.stringify(body),
    });
  } catch (error) {
    process.stderr.write(`assay audit export: cannot reach the Assay server at ${flags.url} (${(error as Error).message}).\n`);
    return AUDIT_EXIT.failed;
  }
  if (response.status !== 200 || !response.body) {
    process.stderr.write(`assay audit export: audit.events.export answered ${response.status}: ${await response.text()}\n`);
    return response.status === 400 ? AUDIT_EXIT.usage : AUDIT_EXIT.failed;
  }
  let last = '';
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    const text = Buffer.from(chunk).toString('utf8');
    if (text.length > 0) last = (last + text).slice(-200_000);
    if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  }
  const trailer = last.trimEnd().split('\n').at(-1) ?? '';
  if (!trailer.startsWith('{"trailer":')) {
    process.stderr.write('assay audit export: the export ended without its trailer line (the connection was cut): run it again.\n');
    return AUDIT_EXIT.failed;
  }
  const { count } = (JSON.parse(trailer) as { trailer: { count: number } }).trailer;
  process.stderr.write(`assay audit export: ${count} events.\n`);
  return AUDIT_EXIT.ok;
}

async function verifyFile(file: string): Promise<number> {
  let input: fs.ReadStream;
  try {
    fs.accessSync(file, fs.constants.R_OK);
    if (!fs.statSync(file).isFile()) throw new Error('not a file');
    input = fs.createReadStream(file);
  } catch {
    throw new AuditUsage(`Cannot read "${file}": give the path of a file written by "assay audit export".`);
  }
  const check = new ExportChainCheck();
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    if (check.add(line)) break;
  }
  input.destroy();
  const outcome = check.finish();
  if (outcome.break) {
    process.stdout.write(`BROKEN at line ${outcome.break.line}: ${outcome.break.reason}\n`);
    return AUDIT_EXIT.failed;
  }
  process.stdout.write(`OK: ${outcome.events} events, the chain is intact.\n`);
  return AUDIT_EXIT.ok;
}
