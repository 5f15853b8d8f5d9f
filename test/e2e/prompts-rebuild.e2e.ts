import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { GetPromptHandler } from '#modules/prompts/get-prompt/get-prompt.handler';
import { GetPrompt } from '#modules/prompts/get-prompt/get-prompt.query';
import { selectorOf, SelectorInput } from '#modules/prompts/get-prompt/prompt-selector';
import { ListPromptsHandler } from '#modules/prompts/list-prompts/list-prompts.handler';
import { ListPrompts } from '#modules/prompts/list-prompts/list-prompts.query';
import { ListPromptVersionsHandler } from '#modules/prompts/list-versions/list-versions.handler';
import { ListPromptVersions } from '#modules/prompts/list-versions/list-versions.query';
import { GetPromptHistoryHandler } from '#modules/prompts/prompt-history/prompt-history.handler';
import { GetPromptHistory } from '#modules/prompts/prompt-history/prompt-history.query';
import { PROMPT_HISTORY, PROMPT_VERSIONS, PROMPTS } from '#modules/prompts/prompt.projections';
import type { ApiClient } from '../support/http-client';
import { rebuildFromLog, replayTwice, snapshot as snapshotOf } from '../support/read-models';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

const COLLECTIONS = [PROMPTS, PROMPT_VERSIONS, PROMPT_HISTORY];
const PROMPT_IDS = ['rebuild/a', 'rebuild/b', 'rebuild/c'];

const snapshot = (store: ReadStore) => snapshotOf(store, COLLECTIONS);

/** Every read a caller can make, asked of a read store directly through the query handlers. */
async function answersFrom(store: ReadStore, readBodies: Array<{ id: string } & SelectorInput>): Promise<unknown[]> {
  const answers: unknown[] = [await new ListPromptsHandler(store).execute(new ListPrompts('acme'))];
  for (const id of PROMPT_IDS) {
    answers.push(await new ListPromptVersionsHandler(store).execute(new ListPromptVersions('acme', id)));
    answers.push(await new GetPromptHistoryHandler(store).execute(new GetPromptHistory('acme', id, null)));
  }
  for (const { id, ...selector } of readBodies) {
    answers.push(
      await new GetPromptHandler(store).execute(new GetPrompt('acme', id, selectorOf(selector))).catch((error: unknown) => (error as Error).message),
    );
  }
  return answers;
}

describe('prompt read models: rebuilt from the log, they give the same documents and answers', () => {
  let server: InProcessServer;
  let api: ApiClient;
  const reads: Array<{ id: string } & SelectorInput> = [];

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    const pause = () => new Promise((resolve) => setTimeout(resolve, 3));
    for (const [index, id] of PROMPT_IDS.entries()) {
      for (let version = 1; version <= 3 + index; version += 1) {
        const named = version === 2 ? { name: `Prompt ${id} v2` } : {};
        await api.call('prompts.versions.create', { id, content: `${id} text ${version}`, message: `change ${version}`, publish: version === 2, ...named });
        await pause();
      }
      for (const [channel, version] of [
        ['production', 1],
        ['production', 3],
        ['canary', 2],
        ['production', 3],
        ['production', 1],
      ] as const) {
        expect((await api.call('prompts.promote', { id, channel, version })).status).toBe(200);
        await pause();
      }
    }
    for (const id of PROMPT_IDS) {
      reads.push({ id }, { id, channel: 'latest' }, { id, channel: 'canary' }, { id, version: 2 }, { id, channel: 'nope' });
      for (const { at } of (await api.call('prompts.history', { id })).body.data as Array<{ at: string }>) {
        reads.push({ id, at }, { id, at, channel: 'production' }, { id, at: new Date(Date.parse(at) - 1).toISOString(), channel: 'canary' });
      }
    }
  });

  afterAll(() => server.close());

  it('answers the same over HTTP as the query handlers do on the live read models', async () => {
    const viaHandlers = await answersFrom(server.runtime.readStore, reads);
    const viaHttp: unknown[] = [(await api.call('prompts.list')).body];
    for (const id of PROMPT_IDS) {
      viaHttp.push((await api.call('prompts.versions.list', { id })).body, (await api.call('prompts.history', { id })).body);
    }
    for (const body of reads) {
      const answer = await api.call('prompts.get', body);
      viaHttp.push(answer.status === 200 ? answer.body : answer.body.message);
    }
    expect(viaHttp).toEqual(viaHandlers);
    expect(viaHandlers.filter((answer) => typeof answer === 'string').length).toBeGreaterThan(3);
  });

  it('replays the whole log into empty read models and gets equal documents and equal answers', async () => {
    const live = await snapshot(server.runtime.readStore);
    expect(live[PROMPTS]).toHaveLength(3);
    expect(live[PROMPT_VERSIONS]).toHaveLength(3 + 4 + 5);
    // Per prompt: its appends, the publish of version 2, and four moves (one promote repeats).
    expect(live[PROMPT_HISTORY]).toHaveLength(3 + 4 + 5 + 3 * 5);

    const rebuilt = await rebuildFromLog(server.runtime.eventStore);
    expect(await snapshot(rebuilt)).toEqual(live);
    expect(await answersFrom(rebuilt, reads)).toEqual(await answersFrom(server.runtime.readStore, reads));
  });

  it('is idempotent: every event delivered twice, then the whole log again, changes nothing', async () => {
    const twice = await replayTwice(server.runtime.eventStore);
    expect(await snapshot(twice)).toEqual(await snapshot(server.runtime.readStore));
  });
});
