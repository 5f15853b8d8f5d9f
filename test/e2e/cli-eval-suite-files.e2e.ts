import { batchIdsIn, evalCli } from '../support/eval-cli';
import { acmeServerPerSuite, INIT_KEY, tempDir, TEST_CONSENT_CONFIG } from '../support/servers';

const VARIANT = `variants:
  - harness: command
    model: none
    profile:
      run: 'echo "$ASSAY_PROMPT" | sed "s/Write //" > out.txt'
trials: 1
`;

/**
 * What a suite file may say, and what `assay eval` answers when it is wrong: cases from a
 * casesFile, --tag, and problems in the user's words, in file order, before anything is sent.
 */
describe('assay eval, suite files', () => {
  const suite = acmeServerPerSuite({ ASSAY_CONFIG: TEST_CONSENT_CONFIG });
  let dir: string;
  beforeEach(() => {
    dir = tempDir('assay-cli-suite-files-');
  });
  const cli = evalCli({ dir: () => dir, env: () => ({ ASSAY_URL: suite.server.url, ASSAY_API_KEY: INIT_KEY, TMPDIR: tempDir('assay-cli-tmp-') }) });

  const getBatch = async (id: string) => (await suite.api.call('evals.batches.get', { id })).body;
  const batchCount = async () => (await suite.api.call('evals.batches.list', { limit: 1 })).body.total as number;
  /** The lines of stderr that name a place in a file, without the closing line. */
  const problems = (stderr: string) => stderr.split('\n').filter((line) => line !== '' && !line.startsWith('Nothing was sent'));

  it('loads cases from JSON lines, each path relative to the cases file', async () => {
    cli.write('cases/checks/has-bye.sh', 'grep -q bye out.txt');
    cli.write(
      'cases/greetings.jsonl',
      [
        JSON.stringify({ id: 'jl-hello', variables: { word: 'hello' }, verify: 'grep -q hello out.txt' }),
        '',
        JSON.stringify({ id: 'jl-bye', variables: { word: 'bye' }, verifyFile: './checks/has-bye.sh', tags: ['farewell'] }),
      ].join('\n'),
    );
    const file = cli.write('suite.yaml', `suite: { id: jsonl-suite, prompt: "Write {{word}}" }\ncasesFile: ./cases/greetings.jsonl\n${VARIANT}`);
    const result = await cli.run([file]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const batch = await getBatch(batchIdsIn(result.stdout)[0]);
    expect(batch.runs.map((run: any) => [run.case.id, run.setup.verify, run.trials[0].status])).toEqual([
      ['jl-hello', 'grep -q hello out.txt', 'passed'],
      ['jl-bye', 'grep -q bye out.txt', 'passed'],
    ]);
  });

  it('loads cases from CSV: a column per field, variables.<name> columns, tags by spaces, quoted cells; --tag keeps those carrying any tag', async () => {
    cli.write(
      'cases.csv',
      [
        'id,variables.word,verify,tags,timeoutMs',
        'csv-hello,hello,grep -q hello out.txt,greeting smoke,60000',
        'csv-comma,"a, b","grep -q ""a, b"" out.txt",greeting,',
        'csv-bye,bye,grep -q bye out.txt,farewell,',
      ].join('\r\n'),
    );
    const file = cli.write('suite.yaml', `suite: { id: csv-suite, prompt: "Write {{word}}" }\ncasesFile: cases.csv\n${VARIANT}`);
    const all = await cli.run([file]);
    expect(all.stderr).toBe('');
    expect(all.code).toBe(0);
    const batch = await getBatch(batchIdsIn(all.stdout)[0]);
    expect(batch.runs.map((run: any) => [run.case.id, run.setup.prompt, run.trials[0].status])).toEqual([
      ['csv-hello', 'Write hello', 'passed'],
      ['csv-comma', 'Write a, b', 'passed'],
      ['csv-bye', 'Write bye', 'passed'],
    ]);
    expect((await suite.api.call('evals.cases.get', { id: 'csv-hello' })).body.tags).toEqual(['greeting', 'smoke']);

    const tagged = await cli.run([file, '--tag', 'smoke', '--tag', 'farewell']);
    expect(tagged.code).toBe(0);
    expect((await getBatch(batchIdsIn(tagged.stdout)[0])).runs.map((run: any) => run.case.id)).toEqual(['csv-hello', 'csv-bye']);

    const before = await batchCount();
    const none = await cli.run([file, '--tag', 'nightly']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("suite.yaml: no case carries --tag nightly (its cases' tags: greeting, smoke, farewell)");
    expect(await batchCount()).toBe(before);
  });

  it('names the cases file and line of what is wrong in it', async () => {
    cli.write('broken.jsonl', ['{"id": "ok-case", "verify": "true"}', '{"id": "half", ', '["not", "a", "case"]'].join('\n'));
    const syntax = await cli.run([cli.write('a.yaml', `suite: { id: broken, prompt: p }\ncasesFile: broken.jsonl\n${VARIANT}`)]);
    expect(syntax.code).toBe(2);
    expect(problems(syntax.stderr)).toEqual([expect.stringMatching(/^broken\.jsonl:2: not JSON: /), 'broken.jsonl:3: a line holds one case, as a JSON object']);

    cli.write(
      'wrong.jsonl',
      ['{"id": "fine", "verify": "true"}', '{"verify": "true"}', '{"id": "typo", "verfy": "true"}', '{"id": "Upper", "verify": "true"}'].join('\n'),
    );
    const fields = await cli.run([cli.write('b.yaml', `suite: { id: wrong, prompt: p }\ncasesFile: wrong.jsonl\n${VARIANT}`)]);
    expect(fields.code).toBe(2);
    expect(problems(fields.stderr)).toEqual([
      'wrong.jsonl:2: id: is missing',
      'wrong.jsonl:3: case "typo" has neither verify nor a validator, so nothing would judge its trials: add verify (a command that exits 0 when the trial passed), verifyFile or a validator',
      'wrong.jsonl:3: verfy: unknown key; did you mean `verify`?',
      expect.stringMatching(/^wrong\.jsonl:4: id: /),
    ]);

    cli.write('short.csv', 'id,verify\nc-one,true\nc-two,true,extra\n"c-three,true\n');
    const csv = await cli.run([cli.write('c.yaml', `suite: { id: short, prompt: p }\ncasesFile: short.csv\n${VARIANT}`)]);
    expect(csv.code).toBe(2);
    expect(problems(csv.stderr)).toEqual(['short.csv:4: a quoted cell is never closed (a " is missing)']);
    cli.write('cells.csv', 'id,verify\nc-one,true\nc-two,true,extra\n');
    const cells = await cli.run([cli.write('d.yaml', `suite: { id: cells, prompt: p }\ncasesFile: cells.csv\n${VARIANT}`)]);
    expect(problems(cells.stderr)).toEqual(['cells.csv:3: has 3 cells, and the header 2']);

    const both = await cli.run([cli.write('e.yaml', `suite: { id: both, prompt: p }\ncasesFile: cells.csv\ncases: []\n${VARIANT}`)]);
    expect(problems(both.stderr)).toEqual(['e.yaml:2: casesFile: give cases or casesFile, not both']);
    const other = await cli.run([cli.write('f.yaml', `suite: { id: other, prompt: p }\ncasesFile: cases.txt\n${VARIANT}`)]);
    expect(problems(other.stderr)).toEqual(['f.yaml:2: casesFile: must be the path of a .jsonl or .csv file, relative to the suite file']);
  });

  it("says an unknown key's nearest known one, in file order, and a missing key at its parent's line", async () => {
    const before = await batchCount();
    const file = cli.write(
      'suite.yaml',
      [
        'nmae: typos', // 1
        'suite:', // 2
        '  id: typos', // 3
        'cases:', // 4
        '  - id: first', // 5
        '    verfy: grep -q hello out.txt', // 6
        '    user:', // 7
        '      kind: scripted', // 8
        '  - id: second', // 9
        '    verify: "true"', // 10
        '    validator: { name: check, sourceFil: ./check.ts }', // 11
        'variants:', // 12
        '  - harness: command', // 13
        '    modl: none', // 14
        '    profile: { run: "true" }', // 15
        'trails: 2', // 16
        '',
      ].join('\n'),
    );
    const result = await cli.run([file]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(problems(result.stderr)).toEqual([
      'suite.yaml:1: nmae: unknown key; did you mean `name`?',
      'suite.yaml:1: trials: is missing',
      'suite.yaml:2: suite.prompt: is missing',
      'suite.yaml:5: case "first" has neither verify nor a validator, so nothing would judge its trials: add verify (a command that exits 0 when the trial passed), verifyFile or a validator',
      'suite.yaml:6: cases[0].verfy: unknown key; did you mean `verify`?',
      'suite.yaml:7: cases[0].user.replies: is missing',
      'suite.yaml:11: cases[1].validator.sourceFil: unknown key; did you mean `sourceFile`?',
      'suite.yaml:11: cases[1].validator.source: is missing',
      'suite.yaml:13: variants[0].model: is missing',
      'suite.yaml:14: variants[0].modl: unknown key; did you mean `model`?',
      'suite.yaml:16: trails: unknown key; did you mean `trials`?',
    ]);
    expect(result.stderr.trimEnd().split('\n').at(-1)).toBe('Nothing was sent: fix the file and run again.');
    expect(await batchCount()).toBe(before);

    // Far from any key: the keys the place takes.
    const far = await cli.run([cli.write('far.yaml', `suite: { id: far, prompt: p, colour: red }\ncases:\n  - { id: one, verify: "true" }\n${VARIANT}`)]);
    expect(problems(far.stderr)).toEqual(['far.yaml:1: suite.colour: unknown key; this place takes `id`, `name`, `prompt`, `promptFile`, `source`']);
  });

  it('refuses a case with neither verify nor a validator, naming it, and sends nothing', async () => {
    const before = await batchCount();
    const file = cli.write(
      'suite.yaml',
      `suite: { id: unjudged, prompt: p }\ncases:\n  - { id: judged, verify: "true" }\n  - { id: unjudged-case, validator: null }\n${VARIANT}`,
    );
    const result = await cli.run([file]);
    expect(result.code).toBe(2);
    expect(problems(result.stderr)).toEqual([
      'suite.yaml:4: case "unjudged-case" has neither verify nor a validator, so nothing would judge its trials: add verify (a command that exits 0 when the trial passed), verifyFile or a validator',
    ]);
    expect(await batchCount()).toBe(before);
  });

  it('warns before moving a case of another suite, and --no-move refuses without starting anything', async () => {
    const caseLine = '  - { id: shared-case, variables: { word: hello }, verify: grep -q hello out.txt }';
    const first = cli.write('first.yaml', `suite: { id: first-owner, prompt: "Write {{word}}" }\ncases:\n${caseLine}\n${VARIANT}`);
    const second = cli.write('second.yaml', `suite: { id: second-owner, prompt: "Write {{word}}" }\ncases:\n${caseLine}\n${VARIANT}`);
    const owned = await cli.run([first]);
    expect(owned.code).toBe(0);
    // The case is already this suite's: nothing to say.
    const again = await cli.run([first, '--no-move']);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');

    const moved = await cli.run([second]);
    expect(moved.code).toBe(0);
    expect(moved.stderr).toBe('second.yaml: case shared-case belongs to suite first-owner: this batch moves it to second-owner\n');
    expect((await suite.api.call('evals.cases.get', { id: 'shared-case' })).body.suite.id).toBe('second-owner');

    const before = await batchCount();
    const refused = await cli.run([first, '--no-move']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'first.yaml: case shared-case belongs to suite second-owner; --no-move refuses to move it to first-owner: give the case another id, or leave out --no-move to move it\nNothing was started.\n',
    );
    expect(refused.stdout).toBe('');
    expect(await batchCount()).toBe(before);
    expect((await suite.api.call('evals.cases.get', { id: 'shared-case' })).body.suite.id).toBe('second-owner');
  });
});
