import { execFileSync } from 'node:child_process';
import { BUBBLEWRAP, PROCESS, TempDirs, testRunner, trialSpec } from '../../../test/support/trial-fixtures';
import { bubblewrapAbsent } from '../../../test/support/bubblewrap';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

/** The runner alone (no server): a validator and a prepare under each sandbox driver the host has. */
describe.each([PROCESS, ...(bubblewrapAbsent === null ? [BUBBLEWRAP] : [])])('TrialRunner: validator and prepare under %s', (sandbox) => {
  it('prepares the workspace, lets the agent use it, and judges the result', async () => {
    const { runner } = testRunner(dirs, { validatorTimeoutMs: 10_000 });
    const outcome = await runner.run(
      trialSpec({
        sandbox,
        prompt: 'Copy {{prepare.file}}',
        profile: { run: 'cat "$(echo "$ASSAY_PROMPT" | cut -d" " -f2)" > copy.txt' },
        verify: null,
        prepare: { name: 'setUp', source: 'export const setUp = (ctx) => { ctx.workspace.writeFile("in.txt", "42"); return { file: "in.txt" }; };' },
        validator: { name: 'check', source: 'export const check = (ctx) => ({ passed: ctx.workspace.readFile("copy.txt") === "42", message: ctx.prompt });' },
      }),
    );
    expect(outcome.failure).toBeNull();
    expect(outcome.status).toBe('passed');
    expect(outcome.trajectory[0]).toMatchObject({ _tag: 'prepare', name: 'setUp', result: { file: 'in.txt' } });
    expect(outcome.validations).toMatchObject([{ name: 'check', status: 'passed', message: 'Copy in.txt', exitCode: 0 }]);
    expect(outcome.filesChanged).toEqual(['copy.txt']);
  });

  it('voids a trial whose validator is killed at the timeout, and leaves no process behind', async () => {
    const { runner } = testRunner(dirs, { validatorTimeoutMs: 1000 });
    // A duration no other process uses: how the straggler is found afterwards.
    const MARK = `599.${process.pid}${sandbox.length}`;
    const source = `import { spawn } from 'node:child_process'; export function hang() { spawn('sleep', ['${MARK}'], { stdio: 'ignore' }); return new Promise(() => {}); }`;
    const outcome = await runner.run(trialSpec({ sandbox, verify: null, validator: { name: 'hang', source } }));
    expect(outcome).toMatchObject({ status: 'void', failure: 'validator "hang" timed out after 1000 ms', voidFields: ['validator'] });
    const processes = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    expect(processes.split('\n').filter((line) => line.includes(MARK))).toEqual([]);
  });
});
