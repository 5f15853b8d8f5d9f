import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const cruiser = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

/**
 * Runs the layer check of `npm run lint:layers` on one probe file placed in `folder` (src/shared
 * unless told), following only its direct imports so today's other files cannot decide the outcome.
 */
function checkProbe(importLine: string, folder = 'src/shared'): { status: number | null; output: string } {
  const name = `${folder}/layer-probe-${process.pid}.ts`;
  const probe = join(root, name);
  try {
    writeFileSync(probe, `${importLine}\nexport const probe = imported;\n`);
    const run = spawnSync(process.execPath, [cruiser, '--config', '.dependency-cruiser.cjs', '--max-depth', '1', '--output-type', 'err', name], {
      cwd: root,
      encoding: 'utf8',
    });
    return { status: run.status, output: run.stdout + run.stderr };
  } finally {
    rmSync(probe, { force: true });
  }
}

describe('layer rules', () => {
  it('a file in src/shared importing a module fails the check, naming the rule', () => {
    const result = checkProbe("import { organizationStream as imported } from '../modules/auth/organizations/organization';");
    expect(result.output).toContain('shared-imports-nothing-of-the-project');
    expect(result.status).not.toBe(0);
  });

  it('the same file importing only src/shared passes', () => {
    const result = checkProbe("import { systemClock as imported } from './clock';");
    expect(result.output).not.toContain('error');
    expect(result.status).toBe(0);
  });

  it('a module importing a file inside src/trial-runner fails the check, naming the rule', () => {
    const result = checkProbe("import { findHostTool as imported } from '../trial-runner/sandbox/host-tools';", 'src/modules');
    expect(result.output).toContain('trial-runner-only-through-its-face');
    expect(result.status).not.toBe(0);
  });

  it("the same module importing the engine's public face passes", () => {
    const result = checkProbe("import { createTrialRunner as imported } from '../trial-runner';", 'src/modules');
    expect(result.output).not.toContain('error');
    expect(result.status).toBe(0);
  });

  it('a file of the engine importing a module fails the check', () => {
    const result = checkProbe("import { organizationStream as imported } from '../modules/auth/organizations/organization';", 'src/trial-runner');
    expect(result.output).toContain('trial-runner-not-to-modules');
    expect(result.status).not.toBe(0);
  });
});
