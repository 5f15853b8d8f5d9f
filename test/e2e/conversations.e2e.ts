import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiClient } from '../support/http-client';
import { makeRepository } from '../support/evals';
import { startBody, waitForBatch } from '../support/evals';
import { tempDir } from '../support/servers';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/**
 * Conversations with a scripted user, for real: the command harness runs once per turn in the
 * default sandbox, each turn's message on stdin and in ASSAY_PROMPT, the conversation so far in
 * ASSAY_CONVERSATION.
 */
describe('conversations: scripted users', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });

  afterAll(() => server.close());

  /** Appends each turn's number, stdin and ASSAY_PROMPT to turns.log, then says which turn it was. */
  const recordingAgent = {
    harness: 'command',
    model: 'none',
    profile: {
      run: 'msg=$(cat); echo "turn=$ASSAY_TURN stdin=$msg env=$ASSAY_PROMPT lines=$(wc -l < "$ASSAY_CONVERSATION")" >> turns.log; echo "done with turn $ASSAY_TURN"',
    },
  };

  async function runCase(evalCase: Record<string, unknown>, variant: Record<string, unknown> = recordingAgent) {
    const started = await api.call('evals.batches.start', startBody({ cases: [evalCase], variants: [variant] }));
    expect(started.body).toHaveProperty('id');
    const batch = await waitForBatch(api, started.body.id);
    expect(batch.status).toBe('finished');
    return batch.runs[0].trials[0];
  }

  const messages = (trial: any) => trial.trajectory.filter((entry: any) => entry._tag === 'message').map((m: any) => `${m.role}${m.turn}:${m.text}`);

  it('sends each scripted reply in order, one agent turn each, and ends when they run out', async () => {
    const trial = await runCase({
      id: 'three-turns',
      variables: { word: 'hello' },
      user: { kind: 'scripted', replies: ['now add tests', 'thanks, that is all'] },
      verify: 'grep -c "^turn=" turns.log | grep -qx 3 && grep -q "turn=2 stdin=now add tests env=now add tests lines=3" turns.log',
    });
    expect(trial.status).toBe('passed');
    expect(messages(trial)).toEqual([
      'user1:Write hello into out.txt',
      'agent1:done with turn 1',
      'user2:now add tests',
      'agent2:done with turn 2',
      'user3:thanks, that is all',
      'agent3:done with turn 3',
    ]);
    expect(trial.trajectory.map((entry: any) => entry._tag)).toEqual([
      'message',
      'command',
      'message',
      'message',
      'command',
      'message',
      'message',
      'command',
      'message',
      'conversation',
      'command',
    ]);
    expect(trial.trajectory.at(-2)).toEqual({ _tag: 'conversation', turns: 3, endReason: 'replies-exhausted' });
    expect(trial).toMatchObject({ turns: 3, endReason: 'replies-exhausted', commands: 4 });
    // The conversation file is the service's: never a change of the agent's.
    expect(trial.filesChanged).toEqual(['turns.log']);
    for (const message of trial.trajectory.filter((entry: any) => entry._tag === 'message')) expect(typeof message.at).toBe('number');
  });

  it('stops at maxTurns when the replies would go on (the opening prompt counts)', async () => {
    const trial = await runCase({
      id: 'too-many-replies',
      variables: { word: 'hello' },
      maxTurns: 2,
      user: { kind: 'scripted', replies: ['one', 'two', 'three'] },
      verify: 'grep -c "^turn=" turns.log | grep -qx 2',
    });
    expect(trial.status).toBe('passed');
    expect(trial).toMatchObject({ turns: 2, endReason: 'max-turns' });
    expect(messages(trial)).toEqual(['user1:Write hello into out.txt', 'agent1:done with turn 1', 'user2:one', 'agent2:done with turn 2']);
  });

  it('a case without a user is one turn, ended single-turn', async () => {
    const trial = await runCase({ id: 'one-turn', variables: { word: 'hello' }, verify: 'grep -q "turn=1 " turns.log' });
    expect(trial).toMatchObject({ status: 'passed', turns: 1, endReason: 'single-turn' });
    expect(trial.trajectory.at(-2)).toEqual({ _tag: 'conversation', turns: 1, endReason: 'single-turn' });
  });

  it('bounds the agent by timeoutMs across all turns: a slow second turn fails the trial, timed', async () => {
    const slowSecondTurn = {
      harness: 'command',
      model: 'none',
      profile: { run: 'cat > /dev/null; if [ "$ASSAY_TURN" = 2 ]; then sleep 30; fi; echo turn $ASSAY_TURN >> turns.log' },
    };
    const trial = await runCase(
      { id: 'slow', variables: { word: 'x' }, timeoutMs: 2000, user: { kind: 'scripted', replies: ['go on', 'more'] }, verify: 'true' },
      slowSecondTurn,
    );
    expect(trial).toMatchObject({ status: 'failed', timed: true, turns: 2, endReason: 'timeout' });
    expect(trial.failure).toMatch(/ran out of time/);
    // Verify does not run for an agent that did not finish.
    expect(trial.verifySteps).toEqual([]);
  });

  it('never writes the conversation file through a link the agent put in its place', async () => {
    const target = path.join(tempDir(), 'host-file.txt');
    fs.writeFileSync(target, 'original\n');
    const agent = {
      harness: 'command',
      model: 'none',
      profile: { run: `cat > /dev/null; if [ "$ASSAY_TURN" = 1 ]; then ln -sf ${target} "$ASSAY_CONVERSATION"; fi; echo turn $ASSAY_TURN >> turns.log` },
    };
    const trial = await runCase(
      { id: 'link-attack', variables: { word: 'x' }, user: { kind: 'scripted', replies: ['next'] }, verify: 'grep -q "turn 2" turns.log' },
      agent,
    );
    expect(trial).toMatchObject({ status: 'passed', turns: 2 });
    expect(fs.readFileSync(target, 'utf8')).toBe('original\n');
  });

  it('keeps the conversation file out of a git workspace: ignored by git, never a changed file', async () => {
    const repository = makeRepository();
    const agent = { harness: 'command', model: 'none', profile: { run: 'cat > /dev/null; git status --porcelain > status.txt' } };
    const trial = await runCase(
      {
        id: 'git-ignored',
        variables: { word: 'x' },
        source: { kind: 'repo', url: repository.url, ref: null },
        user: { kind: 'scripted', replies: ['again'] },
        verify: 'test -f .assay/conversation.jsonl && ! grep -q assay status.txt',
      },
      agent,
    );
    expect(trial.status).toBe('passed');
    expect(trial.filesChanged).toEqual(['status.txt']);
  });
});
