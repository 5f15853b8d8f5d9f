import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from './sqlite-log';
import { AT_ONCE, Workload } from './workloads';

const run = promisify(execFile);

/**
 * The 0.121 line: the version the throughput results compare against, and the last that runs on the Node 20
 * this project supports (later ones refuse it).
 */
export const PROMPTFOO_VERSION = '0.121';

/** promptfoo installed for one bench run in a temporary directory; never a dependency of the project. */
export interface Promptfoo {
  version: string;
  /** Wall time of `promptfoo eval` over `tests` tests of the workload, 8 at once, cache off. */
  evaluate(workload: Workload, tests: number): Promise<number>;
  remove(): void;
}

/** Installs promptfoo with npm into a temporary directory; null (and why) when it cannot be. */
export async function installPromptfoo(): Promise<{ promptfoo: Promptfoo | null; reason: string }> {
  const home = tempDir('promptfoo');
  try {
    fs.writeFileSync(home.file('package.json'), JSON.stringify({ name: 'assay-bench-peer', private: true }));
    await run('npm', ['install', `promptfoo@${PROMPTFOO_VERSION}`, '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: home.dir,
      timeout: 600_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const main = home.file('node_modules/promptfoo/dist/src/main.js');
    const version = (JSON.parse(fs.readFileSync(home.file('node_modules/promptfoo/package.json'), 'utf8')) as { version: string }).version;
    if (!fs.existsSync(main)) throw new Error(`${main} is missing after the install`);
    return { promptfoo: installed(home, main, version), reason: '' };
  } catch (error) {
    home.remove();
    return { promptfoo: null, reason: (error as Error).message.split('\n')[0] };
  }
}

function installed(home: ReturnType<typeof tempDir>, main: string, version: string): Promptfoo {
  // The exec: provider runs `sh trial.sh <prompt> <options> <context>`: the prompt is the test's
  // directory, made before the clock starts (as Assay's trial directories are part of its cost,
  // this favours the peer). The trial's command and its verify are `sh -c` each, as bare.
  const script = home.file('trial.sh');
  fs.writeFileSync(script, 'cd "$BENCH_DIRS/$1" && sh -c "$BENCH_RUN" && sh -c "$BENCH_VERIFY" && echo pass\n');
  return {
    version,
    async evaluate(workload, tests) {
      const dirs = tempDir('promptfoo-tests');
      try {
        for (let test = 0; test < tests; test += 1) fs.mkdirSync(path.join(dirs.dir, String(test)));
        const config = {
          prompts: ['{{test}}'],
          providers: [`exec: sh ${script}`],
          tests: Array.from({ length: tests }, (_, test) => ({ vars: { test } })),
          defaultTest: { assert: [{ type: 'equals', value: 'pass' }] },
          evaluateOptions: { maxConcurrency: AT_ONCE },
        };
        const configFile = dirs.file('promptfooconfig.json');
        fs.writeFileSync(configFile, JSON.stringify(config));
        const started = performance.now();
        const { stdout, stderr } = await run(
          process.execPath,
          [main, 'eval', '-c', configFile, '--no-cache', '--no-write', '--no-table', '--no-progress-bar', '-j', String(AT_ONCE)],
          {
            cwd: dirs.dir,
            timeout: 600_000,
            maxBuffer: 16 * 1024 * 1024,
            env: {
              ...process.env,
              BENCH_DIRS: dirs.dir,
              BENCH_RUN: workload.run,
              BENCH_VERIFY: workload.verify,
              PROMPTFOO_CONFIG_DIR: home.file('config'),
              PROMPTFOO_DISABLE_TELEMETRY: '1',
              PROMPTFOO_DISABLE_UPDATE: '1',
            },
          },
        );
        const wallMs = performance.now() - started;
        if (!`${stdout}${stderr}`.includes(`${tests} passed`))
          throw new Error(`promptfoo did not pass all ${tests} tests:\n${`${stdout}${stderr}`.slice(-1000)}`);
        return wallMs;
      } finally {
        dirs.remove();
      }
    },
    remove: () => home.remove(),
  };
}
