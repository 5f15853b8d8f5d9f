import { executeOnStream } from '#infrastructure/event-store/stream-command';
import { openKeyRing } from '#infrastructure/secrets/key-ring';
import { environmentDecider } from '#modules/environment/environment.decider';
import { environmentStream } from '#modules/environment/environment.events';
import { previewOf } from '#modules/environment/variable-rules';
import { startBody, waitForBatch } from '../support/evals';
import { ApiClient } from '../support/http-client';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/**
 * Variables stored under names that are reserved now (set before the rule existed) are never
 * given to a trial: a trial of the organization still starts its sandbox and runs, where a PATH
 * of /nonexistent used to void every trial with "cannot start bwrap: ENOENT".
 */
describe('reserved variables stored before the rule do not reach trials', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });

  afterAll(() => server.close());

  /** Stored as the old service did: straight through the decider, which never checked names. */
  async function storeAsBefore(values: Record<string, string>): Promise<void> {
    const keyRing = openKeyRing(server.runtime);
    const variables = [];
    for (const [name, value] of Object.entries(values)) {
      const sealedValue = await keyRing.seal({ kind: 'variable', organization: 'acme', name }, value);
      variables.push({ name, secret: false, sealedValue, preview: previewOf(value, false), newVariableId: `env_old_${name.toLowerCase()}` });
    }
    const metadata = { organization: 'acme', actor: 'system:test', correlationId: 'test', causationId: 'test' };
    const command = { type: 'SetVariables' as const, organization: 'acme', variables, now: new Date() };
    await executeOnStream(server.runtime.eventStore, environmentStream('acme'), environmentDecider, command, metadata);
  }

  it('skips them with a warning, and the trial runs with the service PATH and the other variables', async () => {
    await storeAsBefore({ PATH: '/nonexistent', LD_PRELOAD: '/nonexistent/evil.so', BASH_ENV: '/nonexistent/rc', KEPT_SETTING: 'kept' });
    const listed = await api.call('environment.list', {});
    expect(listed.status).toBe(200);
    const verify = 'test "$PATH" != /nonexistent && test -z "$LD_PRELOAD" && test -z "$BASH_ENV" && test "$KEPT_SETTING" = kept && grep -q hello out.txt';
    const started = await api.call('evals.batches.start', startBody({ cases: [{ id: 'runs', variables: { word: 'x' }, verify }] }));
    expect(started.status).toBe(200);
    const batch = await waitForBatch(api, started.body.id);
    const trial = batch.runs[0].trials[0];
    expect({ status: trial.status, failure: trial.failure }).toEqual({ status: 'passed', failure: null });
    const warnings = server.logs.lines.filter((line) => line.includes('reserved environment variable not given to the trial'));
    expect(warnings.join('\n')).toContain('"name":"PATH"');
    expect(warnings.join('\n')).not.toContain('/nonexistent');
  });
});
