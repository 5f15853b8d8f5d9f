import type { FakeProvider } from './fake-provider';
import type { ApiClient } from './http-client';
import { waitForBatch } from './evals';

const HELLO = { harness: 'command', model: 'none', profile: { name: 'writes-hello', run: 'echo hello > out.txt' } };
const BYE = { harness: 'command', model: 'none', profile: { name: 'writes-bye', run: 'echo bye > out.txt' } };
const verdict = (choice: 'pass' | 'fail') => ({ object: { choice, reason: `judged ${choice}` } });

/** How analytics label the two variant definitions (harness/model (profile name)). */
export const ANALYTICS_SIDES = { hello: 'command/none (writes-hello)', bye: 'command/none (writes-bye)' };

async function finished(api: ApiClient, body: Record<string, unknown>): Promise<string> {
  const started = await api.call('evals.batches.start', body);
  if (started.status !== 200) throw new Error(`evals.batches.start answered ${started.status}: ${started.text}`);
  const batch = await waitForBatch(api, started.body.id, 120_000);
  if (batch.status !== 'finished') throw new Error(`batch ${batch.id} ended ${batch.status}: ${batch.failure}`);
  return batch.id as string;
}

/**
 * Suite `moods`, three batches with known outcomes:
 * - a judged case `polite`, 4 trials of writes-hello, the judge answering pass, fail, pass, fail
 *   (2 of 4: flaky, 4 of its 6 pairs disagree);
 * - `before`: six greetings (`greets-1`…`greets-6`, grep hello) on writes-bye, one trial each (0 of 6);
 * - `after`: the same six on writes-hello (6 of 6): McNemar's exact p = 2 / 2^6 = 0.03125.
 * The server must have a judge on `fake` (ASSAY_CONFIG `judges`).
 */
export async function makeAnalyticsHistory(api: ApiClient, fake: FakeProvider): Promise<{ flaky: string; before: string; after: string }> {
  const suite = { id: 'moods', prompt: 'Greet the user' };
  fake.answer(verdict('pass'), verdict('fail'), verdict('pass'), verdict('fail'));
  const flaky = await finished(api, {
    suite,
    cases: [{ id: 'polite', validator: { name: 'polite', kind: 'judge', prompt: 'Did the agent answer politely?' } }],
    variants: [HELLO],
    trials: 4,
  });
  const greetings = Array.from({ length: 6 }, (_, index) => ({ id: `greets-${index + 1}`, verify: 'grep -q hello out.txt' }));
  const before = await finished(api, { suite, cases: greetings, variants: [BYE], trials: 1 });
  const after = await finished(api, { suite, cases: greetings, variants: [HELLO], trials: 1 });
  return { flaky, before, after };
}
