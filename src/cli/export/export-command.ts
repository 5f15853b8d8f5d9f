import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { viewerDirectory } from '#infrastructure/http/viewer-assets';
import { ApiRefusal, AssayApi, ServerUnreachable } from '../eval/api-client';

/** A usage mistake of `assay export`: exit 2 with the message. */
export class ExportUsage extends Error {}

interface ExportFlags {
  html: string;
  url: string;
  key?: string;
  force?: boolean;
}

/**
 * `assay export BATCH_ID --html FILE`: one self-contained HTML file of a batch, which opens from
 * disk with no server and no network: the viewer's own bundle and style inlined, and the answers
 * its pages ask for (the batch, each run with its trials, conversations, validations and costs,
 * each trial's diff and model calls) kept in the file.
 */
export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .argument('<batchId>')
    .description('Write one self-contained HTML file of a batch (opens from disk, no server, no network).')
    .requiredOption('--html <file>', 'the file to write')
    .option('--force', 'replace the file when it exists')
    .addOption(new Option('--url <url>', 'the Assay server').env('ASSAY_URL').default('http://127.0.0.1:8080'))
    .addOption(new Option('--key <key>', 'an API key with evals:read').env('ASSAY_API_KEY'))
    .configureOutput({ outputError: () => undefined })
    .exitOverride((error: CommanderError) => {
      if (error.exitCode === 0) process.exit(0);
      throw new ExportUsage(error.message.replace(/^error: /, ''));
    })
    .action(async (batchId: string, flags: ExportFlags) => {
      process.exitCode = await exportBatch(batchId, flags);
    });
}

interface TrialLine {
  id: string;
  status: string;
}

interface RunLine {
  id: string;
  case?: { id: string };
  suite?: { id: string; name: string };
  trials?: TrialLine[];
}

/** What the export reads of evals.batches.get and evals.runs.get. */
interface BatchDetail {
  id: string;
  status: string;
  startedAt: string;
  finishedAt?: string | null;
  failure?: string | null;
  trigger?: unknown;
  runs?: RunLine[];
}

async function exportBatch(batchId: string, flags: ExportFlags): Promise<number> {
  if (!flags.key) throw new ExportUsage('No API key: pass --key or set ASSAY_API_KEY (a key with evals:read).');
  if (!/^https?:\/\/\S+$/.test(flags.url)) throw new ExportUsage(`--url (or ASSAY_URL) must be an http(s) URL, not "${flags.url}".`);
  const file = path.resolve(flags.html);
  if (existsSync(file) && flags.force !== true) throw new ExportUsage(`${flags.html} exists: give another file, or --force to replace it.`);
  const viewer = viewerDirectory(path.join(__dirname, '..', '..', 'infrastructure', 'http'));
  if (viewer === null) throw new ExportUsage('The viewer is not built here: run "npm run build" (an installed assay has it).');
  const api = new AssayApi(flags.url.replace(/\/+$/, ''), flags.key);
  const answers: Record<string, unknown> = {};
  const ask = async (operation: string, body: Record<string, unknown>): Promise<unknown> => {
    const answer = await api.expect(operation, body);
    answers[exportKey(operation, body)] = answer;
    return answer;
  };
  try {
    const batch = (await ask('evals.batches.get', { id: batchId })) as BatchDetail;
    if (batch.status === 'running') process.stderr.write(`assay export: batch ${batchId} is still running: the file holds it as it is now.\n`);
    let trials = 0;
    for (const summary of batch.runs ?? []) {
      const run = (await ask('evals.runs.get', { id: summary.id })) as RunLine;
      for (const trial of run.trials ?? []) {
        await ask('evals.trials.diff', { trialId: trial.id });
        await ask('evals.trials.modelCalls', { trialId: trial.id });
        trials += 1;
      }
      process.stderr.write(`\rassay export: ${trials} trials read`);
    }
    process.stderr.write('\n');
    const exported = { server: flags.url, exportedAt: new Date().toISOString(), batchId, summary: summaryOf(batch), answers };
    writeFileSync(file, page(viewer, exported));
    process.stdout.write(`${file}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof ApiRefusal) && !(error instanceof ServerUnreachable)) throw error;
    process.stderr.write(`assay export: ${error.message}\n`);
    return 2;
  }
}

/** The batch as evals.batches.list shows it, from its detail. */
function summaryOf(batch: BatchDetail): Record<string, unknown> {
  let scored = 0;
  let passed = 0;
  let voided = 0;
  for (const run of batch.runs ?? []) {
    for (const trial of run.trials ?? []) {
      if (trial.status === 'passed') passed += 1;
      if (trial.status === 'passed' || trial.status === 'failed') scored += 1;
      if (trial.status === 'void') voided += 1;
    }
  }
  const cases = new Set((batch.runs ?? []).map((run) => run.case?.id)).size;
  const { id, status, startedAt, finishedAt, failure, trigger } = batch;
  return {
    id,
    status,
    startedAt,
    finishedAt: finishedAt ?? null,
    failure: failure ?? null,
    cases,
    runs: batch.runs?.length ?? 0,
    scored,
    passed,
    voided,
    trigger,
    suite: batch.runs?.[0]?.suite ?? null,
  };
}

/** The same key as the viewer's exportKey (viewer/api.js): the operation and its body with sorted keys. */
export function exportKey(operation: string, body: Record<string, unknown>): string {
  return `${operation} ${JSON.stringify(sortedKeys(body))}`;
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  );
}

/** JSON or code inside a <script>: nothing in it can close the element. */
function scriptSafe(text: string): string {
  return text.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

function page(viewer: string, exported: Record<string, unknown>): string {
  const app = readFileSync(path.join(viewer, 'app.js'), 'utf8').replace(/\n\/\/# sourceMappingURL=.*$/m, '');
  const css = readFileSync(path.join(viewer, 'app.css'), 'utf8').replace(/\/\*# sourceMappingURL=.*?\*\//g, '');
  const icon = readFileSync(path.join(viewer, 'favicon.svg')).toString('base64');
  const title = `Assay: batch ${String(exported.batchId)}`;
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="referrer" content="no-referrer" />
    <meta http-equiv="content-security-policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:" />
    <title>${title.replace(/[<&>"]/g, '')}</title>
    <link rel="icon" type="image/svg+xml" href="data:image/svg+xml;base64,${icon}" />
    <style>${css.replace(/<\/style/gi, '<\\/style')}</style>
    <script>globalThis.ASSAY_EXPORT = ${scriptSafe(JSON.stringify(exported))};</script>
    <script type="module">${scriptSafe(app)}</script>
  </head>
  <body>
    <div id="app"><p class="loading">Loading the exported batch…</p></div>
    <noscript>This exported batch needs JavaScript to show.</noscript>
  </body>
</html>
`;
}
