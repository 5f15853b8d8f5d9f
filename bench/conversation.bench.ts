/**
 * The cost of a conversation turn over the command it runs: the gap between one agent command's
 * end and the next one's start, which holds the user's answer (the fake provider answering at
 * once, or a scripted reply), the message entries and the conversation file. Run through the
 * trial runner itself, in the host's default sandbox, as the server runs it.
 */
import { parseExecutionConfig, createTrialRunner, detectDefaultSandbox } from '#trial-runner';
import type { TrajectoryCommand, TrialOutcome, TrialSpec } from '#trial-runner';
import { startFakeProvider } from '../test/support/fake-provider';
import type { Progress, Suite } from './support/suite';
import { tempDir } from './support/sqlite-log';
import { percentile } from './support/table';

const TURNS = 20;
const TRIALS = 10;

function spec(id: number, user: TrialSpec['user']): TrialSpec {
  return {
    trialId: `trl_bench_conversation_${id}`,
    organization: 'bench',
    prompt: 'start',
    source: { kind: 'empty' },
    cache: null,
    profile: { run: 'cat > /dev/null' },
    harness: 'command',
    model: 'none',
    sandbox: null,
    timeoutMs: 600_000,
    verify: 'true',
    env: {},
    secrets: [],
    user,
    maxTurns: TURNS,
    variables: {},
    validator: null,
    prepare: null,
    providerKeys: {},
  };
}

/** The gaps between consecutive agent commands of a trial: one per turn after the first. */
function turnGaps(outcome: TrialOutcome): number[] {
  if (outcome.status !== 'passed') throw new Error(`a benchmark trial did not pass: ${outcome.failure ?? outcome.status}`);
  const commands = outcome.trajectory.filter((entry): entry is TrajectoryCommand => entry._tag === 'command').slice(0, -1);
  return commands.slice(1).map((command, index) => command.startedAtMillis - commands[index].finishedAtMillis);
}

async function measure(progress: Progress, label: string, user: TrialSpec['user'], config: Record<string, unknown>): Promise<number[]> {
  const data = tempDir('conversation-data');
  const trials = tempDir('conversation-trials');
  try {
    const runner = createTrialRunner({ dataDir: data.dir, trialsRoot: trials.dir, config: parseExecutionConfig(config, 'bench config') });
    const counter = progress.counter(`${label} trials of ${TURNS} turns`, TRIALS);
    const gaps: number[] = [];
    for (let trial = 0; trial < TRIALS; trial += 1) {
      gaps.push(...turnGaps(await runner.run(spec(trial, user))));
      counter.tick();
    }
    return gaps;
  } finally {
    data.remove();
    trials.remove();
  }
}

export const conversationSuite: Suite = {
  name: 'conversation',
  description: `The gap between agent commands in ${TURNS}-turn conversations (the cost of a turn over its command), simulated user on a loopback provider against scripted replies.`,
  async run(progress) {
    const driver = (await detectDefaultSandbox()).driver;
    const provider = await startFakeProvider();
    provider.setDefault({ text: 'please go on', usage: { input: 50, output: 5 } });
    process.env.BENCH_FAKE_PROVIDER_KEY = 'bench-fake-provider-key-0123456789';
    try {
      const base = { allowUnsandboxed: true };
      const simulatedConfig = {
        ...base,
        providers: { fake: { protocol: 'openai', baseURL: provider.url, apiKeyEnv: 'BENCH_FAKE_PROVIDER_KEY' } },
        users: { default: 'fake', defaultModel: 'bench-user' },
      };
      const simulated = await measure(progress, 'simulated', { kind: 'simulated', goal: 'keep going', prompt: 'say go on' }, simulatedConfig);
      const replies = Array.from({ length: TURNS - 1 }, (_, index) => `reply ${index + 1}`);
      const scripted = await measure(progress, 'scripted', { kind: 'scripted', replies }, base);
      const benchmark = `turn overhead (${driver})`;
      return [
        {
          benchmark,
          measure: 'p50 ms between commands, simulated',
          value: percentile(simulated, 50),
          baseline: percentile(scripted, 50),
          target: { kind: 'at-most', value: 5, unit: 'ms' },
        },
        { benchmark, measure: 'p99 ms between commands, simulated', value: percentile(simulated, 99), baseline: percentile(scripted, 99) },
      ];
    } finally {
      delete process.env.BENCH_FAKE_PROVIDER_KEY;
      await provider.close();
    }
  },
};
