import { Command, CommanderError, Option } from 'commander';
import { ApiRefusal, AssayApi, ServerUnreachable } from '../eval/api-client';
import { ComparisonAnswer, comparisonTable, PassRatesAnswer, passRateTable } from './report-tables';

/** A usage mistake of `assay report`: exit 2 with the message. */
export class ReportUsage extends Error {}

interface ReportFlags {
  suite: string;
  case?: string;
  variant?: string;
  since?: string;
  until?: string;
  bucket: string;
  compare?: string;
  url: string;
  key?: string;
}

function instant(name: string) {
  return (value: string): string => {
    if (Number.isNaN(Date.parse(value))) throw new ReportUsage(`${name} takes an ISO-8601 date or date-time, not "${value}".`);
    // A bare date is midnight UTC, as the API reads instants with a zone.
    return /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
  };
}

function baseUrl(value: string): string {
  if (!/^https?:\/\/[^\s]+$/.test(value)) throw new ReportUsage(`--url (or ASSAY_URL) must be an http(s) URL, not "${value}".`);
  return value.replace(/\/+$/, '');
}

export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description("Print a suite's pass rates per variant over time (analytics.passRates) and, with --compare, a comparison of batches.")
    .requiredOption('--suite <id>', 'the suite')
    .option('--case <id>', 'one case of the suite only')
    .option('--variant <variantKey>', 'one variant definition only (the keys are printed under the table)')
    .addOption(new Option('--since <iso>', 'from this instant (default: the bucket size times 30, 48 or 26 back)').argParser(instant('--since')))
    .addOption(new Option('--until <iso>', 'until this instant (default: now)').argParser(instant('--until')))
    .addOption(new Option('--bucket <size>', 'hour, day or week').choices(['hour', 'day', 'week']).default('day'))
    .option('--compare <batches>', 'comma-separated batch ids: their variants side by side, with pass@k and a paired test')
    .addOption(new Option('--url <url>', 'the Assay server').env('ASSAY_URL').default('http://127.0.0.1:8080').argParser(baseUrl))
    .addOption(new Option('--key <key>', 'an API key with evals:read').env('ASSAY_API_KEY'))
    .configureOutput({ outputError: () => undefined })
    .exitOverride((error: CommanderError) => {
      if (error.exitCode === 0) process.exit(0);
      throw new ReportUsage(error.message.replace(/^error: /, ''));
    })
    .action(async (flags: ReportFlags) => {
      process.exitCode = await report(flags);
    });
}

async function report(flags: ReportFlags): Promise<number> {
  if (!flags.key) throw new ReportUsage('No API key: pass --key or set ASSAY_API_KEY (a key with evals:read).');
  const api = new AssayApi(flags.url, flags.key);
  const body = { suiteId: flags.suite, caseId: flags.case, variant: flags.variant, from: flags.since, to: flags.until, bucket: flags.bucket };
  try {
    const rates = (await api.expect('analytics.passRates', body)) as PassRatesAnswer;
    process.stdout.write(`Pass rates of suite ${flags.suite}, by ${rates.bucket}, ${rates.from} to ${rates.to}\n\n${passRateTable(rates)}\n`);
    if (flags.compare !== undefined) {
      const batchIds = flags.compare
        .split(',')
        .map((id) => id.trim())
        .filter((id) => id !== '');
      const comparison = (await api.expect('analytics.compare', { batchIds })) as ComparisonAnswer;
      process.stdout.write(`\nComparison of ${batchIds.join(', ')}\n\n${comparisonTable(comparison)}\n`);
    }
    return 0;
  } catch (error) {
    if (!(error instanceof ApiRefusal) && !(error instanceof ServerUnreachable)) throw error;
    process.stderr.write(`assay report: ${error.message}\n`);
    return 2;
  }
}
