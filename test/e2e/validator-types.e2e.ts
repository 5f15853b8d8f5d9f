import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, tempDir } from '../support/servers';

const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/**
 * `import type { ValidatorContext } from 'assay/validator'` resolves in a user's project, from the
 * built package (npm run build first): through `exports` (node16 resolution) and `typesVersions`
 * (the older node resolution), and the types catch a misuse.
 */
describe('the package ships the validator types as assay/validator', () => {
  let project: string;

  beforeAll(() => {
    expect(fs.existsSync(path.join(ROOT, 'dist', 'validator.d.ts'))).toBe(true);
    project = tempDir('assay-types-');
    fs.mkdirSync(path.join(project, 'node_modules'));
    fs.symlinkSync(ROOT, path.join(project, 'node_modules', 'assay'), 'dir');
  });

  function compile(source: string, moduleResolution: 'node16' | 'node10') {
    fs.writeFileSync(path.join(project, 'check.ts'), source);
    const module = moduleResolution === 'node16' ? 'node16' : 'commonjs';
    const compilerOptions = { strict: true, noEmit: true, types: [], lib: ['es2022'], module, moduleResolution };
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['check.ts'] }));
    return spawnSync(process.execPath, [TSC, '-p', '.'], { cwd: project, encoding: 'utf8' });
  }

  const good = `
    import type { PrepareContext, ValidatorContext, ValidatorResult } from 'assay/validator';
    export async function check(ctx: ValidatorContext): Promise<ValidatorResult> {
      const text: string = ctx.workspace.readFile('out.txt');
      const verdict = await ctx.judge({ prompt: 'Polite?', choices: { yes: 1, no: 0 }, files: ['out.txt'] });
      ctx.log(ctx.prompt, ctx.conversation.length, ctx.finalMessage, ctx.variables.word, ctx.workspace.exec('ls').exitCode);
      return [text.length > 0, { passed: verdict.passed, score: verdict.score, message: verdict.reason }];
    }
    export function setUp(ctx: PrepareContext) {
      ctx.workspace.writeFile('a.txt', 'x');
      return { ticket: ctx.workspace.listFiles().join(',') };
    }`;

  it.each(['node16', 'node10'] as const)('compiles a validator and a prepare against it (%s resolution)', (resolution) => {
    const result = compile(good, resolution);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('refuses a validator that writes to the workspace (only prepare may)', () => {
    const bad = `import type { ValidatorContext } from 'assay/validator';\nexport function check(ctx: ValidatorContext) { ctx.workspace.writeFile('a', 'b'); return true; }`;
    const result = compile(bad, 'node16');
    expect(result.status).not.toBe(0);
    expect(result.stdout).toContain("Property 'writeFile' does not exist");
  });
});
