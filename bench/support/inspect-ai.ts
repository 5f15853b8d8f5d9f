import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from './sqlite-log';
import { AT_ONCE, Workload } from './workloads';

const run = promisify(execFile);

/** The version measured: pinned, so that a run's figures say what they were of. */
export const INSPECT_VERSION = '0.3.285';

/**
 * How a sample runs the workload: `subprocess`, Inspect's subprocess helper in a directory made
 * for the sample before the clock starts (as promptfoo's are); `local`, Inspect's local sandbox,
 * which makes (and removes) each sample's directory itself, inside the eval.
 */
export type InspectMode = 'subprocess' | 'local';

/**
 * The Inspect task, written into the temporary install at run time: one sample per trial, a solver
 * that runs the workload's command (`sh -c`) and never calls the model, a scorer that runs its
 * verify. `mockllm/model` stands in for the model.
 */
const TASK = `import os

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, accuracy, scorer
from inspect_ai.solver import solver
from inspect_ai.util import sandbox, subprocess

RUN = os.environ["BENCH_RUN"]
VERIFY = os.environ["BENCH_VERIFY"]
SAMPLES = int(os.environ["BENCH_SAMPLES"])
LOCAL = os.environ["BENCH_MODE"] == "local"
DIRS = os.environ.get("BENCH_DIRS", "")


async def shell(state, command):
    if LOCAL:
        return await sandbox().exec(["sh", "-c", command])
    return await subprocess(["sh", "-c", command], cwd=os.path.join(DIRS, str(state.sample_id)))


@solver
def run_workload():
    async def solve(state, generate):
        await shell(state, RUN)
        return state

    return solve


@scorer(metrics=[accuracy()])
def verify():
    async def score(state, target):
        result = await shell(state, VERIFY)
        return Score(value="C" if result.returncode == 0 else "I")

    return score


@task
def workload():
    samples = [Sample(id=index, input=str(index)) for index in range(SAMPLES)]
    return Task(dataset=samples, solver=run_workload(), scorer=verify(), sandbox="local" if LOCAL else None)
`;

/** Inspect AI installed for one bench run in a temporary virtual environment; never a dependency of the project. */
export interface InspectAi {
  version: string;
  /** Wall time of `inspect eval` over `samples` samples of the workload, AT_ONCE at once. */
  evaluate(workload: Workload, samples: number, mode: InspectMode): Promise<number>;
  remove(): void;
}

/** Installs inspect-ai with pip into a temporary virtual environment; null (and why) when it cannot be. */
export async function installInspect(): Promise<{ inspect: InspectAi | null; reason: string }> {
  const home = tempDir('inspect');
  try {
    const venv = home.file('venv');
    await run('python3', ['-m', 'venv', venv], { timeout: 120_000 });
    await run(path.join(venv, 'bin', 'pip'), ['install', '--quiet', `inspect-ai==${INSPECT_VERSION}`], { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 });
    const program = path.join(venv, 'bin', 'inspect');
    const { stdout } = await run(program, ['--version'], { timeout: 60_000 });
    fs.writeFileSync(home.file('bench_task.py'), TASK);
    return { inspect: installed(home, program, stdout.trim()), reason: '' };
  } catch (error) {
    home.remove();
    return { inspect: null, reason: (error as Error).message.split('\n')[0] };
  }
}

function installed(home: ReturnType<typeof tempDir>, program: string, version: string): InspectAi {
  return {
    version,
    async evaluate(workload, samples, mode) {
      const dirs = tempDir('inspect-samples');
      try {
        if (mode === 'subprocess') for (let sample = 0; sample < samples; sample += 1) fs.mkdirSync(path.join(dirs.dir, String(sample)));
        const logs = home.file(`logs-${path.basename(dirs.dir)}`);
        const limits = ['--max-samples', '--max-subprocesses', '--max-sandboxes'].flatMap((option) => [option, String(AT_ONCE)]);
        const output = ['--display', 'none', '--log-dir', logs, '--log-format', 'json'];
        // Inspect resolves the task file against its working directory (the install): an absolute path is refused.
        const args = ['eval', 'bench_task.py', '--model', 'mockllm/model', ...limits, ...output];
        const started = performance.now();
        const { stdout, stderr } = await run(program, args, {
          cwd: home.dir,
          timeout: 600_000,
          maxBuffer: 16 * 1024 * 1024,
          env: {
            ...process.env,
            BENCH_DIRS: dirs.dir,
            BENCH_RUN: workload.run,
            BENCH_VERIFY: workload.verify,
            BENCH_SAMPLES: String(samples),
            BENCH_MODE: mode,
            // Its traces and caches go with the install, not into the user's home.
            XDG_DATA_HOME: home.file('data'),
            XDG_CACHE_HOME: home.file('cache'),
          },
        }).catch((error: unknown) => {
          throw new Error(`inspect eval failed: ${String((error as { stderr?: string }).stderr ?? error).slice(-1500)}`);
        });
        const wallMs = performance.now() - started;
        checkLog(logs, samples, `${stdout}${stderr}`);
        return wallMs;
      } finally {
        dirs.remove();
      }
    },
    remove: () => home.remove(),
  };
}

/** The eval's log says it succeeded with every sample scored correct; throws otherwise. */
function checkLog(logs: string, samples: number, output: string): void {
  const files = fs.readdirSync(logs).filter((name) => name.endsWith('.json'));
  if (files.length !== 1) throw new Error(`inspect eval wrote ${files.length} logs:\n${output.slice(-1000)}`);
  const log = JSON.parse(fs.readFileSync(path.join(logs, files[0]), 'utf8'));
  const accuracy = log.results?.scores?.[0]?.metrics?.accuracy?.value;
  const scored = log.results?.completed_samples;
  fs.rmSync(logs, { recursive: true, force: true });
  if (log.status !== 'success' || accuracy !== 1 || scored !== samples) {
    throw new Error(
      `inspect eval did not pass all ${samples} samples (status ${log.status}, accuracy ${accuracy}, completed ${scored}):\n${output.slice(-1000)}`,
    );
  }
}
