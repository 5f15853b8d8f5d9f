#!/usr/bin/env node
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import { Refusal, UsageError } from './cli/errors';
import { PERMISSIONS } from '#shared/permissions';

const USAGE = `Usage: assay <command>

  init                                    write a first suite (evals/) and a GitHub Actions workflow here
  serve                                   serve the API (HOST, PORT, ASSAY_DATA_DIR, ...)
  eval FILE... [options]                  run suite files against a server (or this machine with --local),
                                          follow them and gate on the result; see "assay eval --help"
  keys create --org ORG --permissions P1,P2 [--name NAME] [--create-org]
                                          issue an API key; the key is the last line printed.
                                          ORG must exist, unless --create-org creates it
  keys rotate-master [--force]            re-wrap every data key under a new master key
                                          (ASSAY_NEW_MASTER_KEY, or a new key file); values stay as they are;
                                          refused while a server uses the data directory, unless --force
  projections rebuild                     rebuild the read models from the event log while servers run
                                          (MongoDB: new collections swapped in; embedded: the snapshot)
  audit export --since TIME [--until TIME] [--category C]... [--url URL] [--key KEY] > FILE
                                          the organization's events as NDJSON, with a chain-hash trailer
  audit verify FILE                       check an export offline: 0 intact, 1 at its first bad line
  agents install [AGENT[@VERSION]...]     install built-in agents ahead of their first trial (ASSAY_AGENTS_DIR);
                                          without arguments, those ASSAY_CONFIG's harnesses name
  export BATCH_ID --html FILE [--force] [--url URL] [--key KEY]
                                          one self-contained HTML file of a batch: opens from disk, no server
  report --suite ID [--since ISO] [--until ISO] [--bucket hour|day|week] [--compare BATCH1,BATCH2]
                                          print a suite's pass rates per variant over time (and a comparison
                                          of batches) from a server (--url, --key or ASSAY_URL, ASSAY_API_KEY)

  --version                               print the version

Permissions: ${PERMISSIONS.join(', ')}`;

/** The operator's commands load the server's runtime; only when one of them runs. */
const admin = () => import('./cli/admin');

/** A command of its own module: how it joins the program, and how its own refusals end the process. */
interface CommandModule {
  register(program: Command): void;
  /** What to print on stderr and the exit code, when the error is this command's refusal of its command line. */
  refusal?(error: unknown): { text: string; code: number } | null;
}

/**
 * The commands whose modules are loaded only when they run, so that `--help`, `--version` and
 * each command load nothing of the others (`eval` alone takes half a second to load).
 */
const LAZY_COMMANDS: Record<string, () => Promise<CommandModule>> = {
  init: async () => {
    const { InitUsage, registerInitCommand } = await import('./cli/init/init-command');
    const refusal = (error: unknown) =>
      error instanceof InitUsage ? { text: `assay init: ${error.message}\nRun "assay init --help" for its options.\n`, code: 64 } : null;
    return { register: registerInitCommand, refusal };
  },
  eval: async () => {
    const [{ isEvalUsage, registerEvalCommand }, { EXIT }] = await Promise.all([import('./cli/eval/eval-command'), import('./cli/eval/exit-codes')]);
    const refusal = (error: unknown) =>
      isEvalUsage(error) ? { text: `assay eval: ${error.message}\nRun "assay eval --help" for its options.\n`, code: EXIT.usage } : null;
    return { register: registerEvalCommand, refusal };
  },
  audit: async () => {
    const { isAuditUsage, registerAuditCommand } = await import('./cli/audit/audit-command');
    const refusal = (error: unknown) =>
      isAuditUsage(error)
        ? { text: `assay audit: ${error.message}\nRun "assay audit export --help" or "assay audit verify --help" for the options.\n`, code: 2 }
        : null;
    return { register: registerAuditCommand, refusal };
  },
  report: async () => {
    const { registerReportCommand, ReportUsage } = await import('./cli/report/report-command');
    const refusal = (error: unknown) => (error instanceof ReportUsage ? { text: `assay report: ${error.message}\n`, code: 2 } : null);
    return { register: registerReportCommand, refusal };
  },
  agents: async () => ({ register: (await import('./cli/agents-command')).registerAgentsCommand }),
  export: async () => {
    const { ExportUsage, registerExportCommand } = await import('./cli/export/export-command');
    const refusal = (error: unknown) => (error instanceof ExportUsage ? { text: `assay export: ${error.message}\n`, code: 2 } : null);
    return { register: registerExportCommand, refusal };
  },
};

/** The package's version, from the package.json beside the build (or the sources). */
function version(): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

/**
 * Commander's refusals in this CLI's words (the operator's commands have always answered
 * `Unexpected argument "…"` and exit 64), thrown as a UsageError.
 */
function toUsageError(command: Command) {
  return (error: CommanderError): never => {
    if (error.code === 'commander.unknownOption') {
      const argument = /'([^']+)'/.exec(error.message)?.[1] ?? '';
      const [name, value] = argument.split('=', 2) as [string, string | undefined];
      const known = command.options.find((option) => option.long === name);
      if (known && value !== undefined && !known.required && !known.optional) throw new UsageError(`${name} takes no value.`);
      throw new UsageError(`Unexpected argument "${argument}".`);
    }
    if (error.code === 'commander.optionMissingArgument') {
      const flag = /(--[a-z-]+)/.exec(error.message)?.[1] ?? 'an option';
      throw new UsageError(`${flag} needs a value.`);
    }
    if (error.code === 'commander.unknownCommand' || error.code === 'commander.help') {
      const words = command.parent ? [command.name(), ...command.args] : command.args;
      throw new UsageError(`Unknown command "${words.join(' ')}".`);
    }
    throw error;
  };
}

/** Positional arguments the operator's commands never took. */
function noArguments(command: Command): void {
  if (command.args.length > 0) throw new UsageError(`Unexpected argument "${command.args[0]}".`);
}

function adminCommand(parent: Command, name: string): Command {
  const command = parent
    .command(name)
    .allowExcessArguments(true)
    .configureOutput({ outputError: () => undefined });
  return command.exitOverride(toUsageError(command));
}

function buildProgram(lazy: CommandModule | null): Command {
  const program = new Command('assay').exitOverride().configureOutput({ outputError: () => undefined });
  program.helpInformation = () => USAGE + '\n';
  program.exitOverride(toUsageError(program));

  // `serve` and `projections rebuild` ignored what followed them; they still do.
  adminCommand(program, 'serve')
    .allowUnknownOption()
    .action(async () => (await admin()).serve());

  const keys = program.command('keys').configureOutput({ outputError: () => undefined });
  keys.exitOverride(toUsageError(keys));
  adminCommand(keys, 'create')
    .option('--org <org>')
    .option('--permissions <permissions>')
    .option('--name <name>')
    .option('--create-org')
    .action(async (flags: { org?: string; permissions?: string; name?: string; createOrg?: boolean }, command: Command) => {
      noArguments(command);
      await (await admin()).createKey(flags);
    });
  adminCommand(keys, 'rotate-master')
    .option('--force')
    .action(async (flags: { force?: boolean }, command: Command) => {
      noArguments(command);
      await (await admin()).rotateMaster(flags.force === true);
    });

  const projections = program.command('projections').configureOutput({ outputError: () => undefined });
  projections.exitOverride(toUsageError(projections));
  adminCommand(projections, 'rebuild')
    .allowUnknownOption()
    .action(async () => (await admin()).rebuildProjections());

  lazy?.register(program);
  return program;
}

/** The module of the command the arguments name, when it is one of the lazily loaded ones. */
let running: CommandModule | null = null;

async function main(argv: string[]): Promise<void> {
  const command = argv.at(0);
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${version()}\n`);
    return;
  }
  const load = Object.hasOwn(LAZY_COMMANDS, command) ? LAZY_COMMANDS[command] : undefined;
  running = load ? await load() : null;
  await buildProgram(running).parseAsync(argv, { from: 'user' });
}

async function fail(error: unknown): Promise<never> {
  const refused = running?.refusal?.(error);
  if (refused) {
    process.stderr.write(refused.text);
    process.exit(refused.code);
  }
  const { ConfigError } = await import('./config');
  if (error instanceof UsageError) process.stderr.write(`${error.message}\n\n${USAGE}\n`);
  else if (error instanceof Refusal) process.stderr.write(`${error.message}\n`);
  else if (error instanceof ConfigError) process.stderr.write(`Configuration error: ${error.message}\n`);
  else process.stderr.write(`assay failed: ${(error as Partial<Error>).message ?? String(error)}\n`);
  process.exit(error instanceof UsageError ? 64 : 1);
}

main(process.argv.slice(2)).catch(fail);
