import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { importCycles, ImportGraph, reachableFrom, readImportGraph } from '../support/import-graph';

/**
 * The layers a newcomer can see in the tree, checked on the import graph: feature modules never
 * reach the app's wiring, shared/ imports nothing of the project, nothing imports in a circle,
 * and the trial runner can be loaded alone (the CLI's local mode runs it on a user's machine).
 */
const ROOT = path.resolve(__dirname, '../..');
const SRC = path.join(ROOT, 'src');
const at = (relative: string) => path.join(SRC, relative);
const shown = (file: string) => (path.isAbsolute(file) ? path.relative(SRC, file) : file);

let graph: ImportGraph;
beforeAll(() => {
  graph = readImportGraph(SRC);
});

/** Every `importer → imported` edge whose importer passes `from` and whose target passes `to`. */
function edges(from: (file: string) => boolean, to: (target: string) => boolean): string[] {
  return [...graph.edges].flatMap(([file, targets]) => (from(file) ? targets.filter(to).map((target) => `${shown(file)} → ${shown(target)}`) : []));
}

describe('the layers point one way', () => {
  it("no feature module imports the app's wiring", () => {
    // Every file at the top of src/ is wiring (composition root, CLI, bootstrap), except the configuration's shape.
    const wiring = (target: string) => path.dirname(target) === SRC && target !== at('config.ts');
    expect(graph.edges.has(at('runtime.ts'))).toBe(true);
    expect(edges((file) => file.startsWith(at('modules/')), wiring)).toEqual([]);
  });

  it('shared/ imports nothing of the project outside itself', () => {
    const project = (target: string) => path.isAbsolute(target) && !target.startsWith(at('shared/'));
    expect(edges((file) => file.startsWith(at('shared/')), project)).toEqual([]);
  });

  it('no infrastructure file imports a feature module or the wiring', () => {
    const outside = (target: string) =>
      target.startsWith(at('modules/')) || (path.isAbsolute(target) && path.dirname(target) === SRC && target !== at('config.ts'));
    expect(edges((file) => file.startsWith(at('infrastructure/')), outside)).toEqual([]);
  });

  it('nothing imports in a circle', () => {
    expect(importCycles(graph).map((cycle) => cycle.map(shown))).toEqual([]);
  });
});

describe('the trial runner is importable alone', () => {
  const EXECUTION = at('modules/evals/execution/');

  it('the execution folder imports nothing of the orchestration, Nest, the stores or the wiring', () => {
    const reached = reachableFrom(graph, path.join(EXECUTION, 'index.ts'));
    const serverPackages = ['better-sqlite3', 'mongodb', '@eventstore/db-client', 'fastify'];
    const allowedFolders = [EXECUTION, at('shared/'), at('modules/evals/shared/')];
    const allowed = (file: string) =>
      path.isAbsolute(file) ? allowedFolders.some((folder) => file.startsWith(folder)) : !file.startsWith('@nestjs/') && !serverPackages.includes(file);
    expect(reached.filter((file) => !allowed(file)).map(shown)).toEqual([]);
    expect(
      edges(
        (file) => file.startsWith(EXECUTION),
        (target) => target.startsWith(at('modules/evals/orchestration/')),
      ),
    ).toEqual([]);
  });

  it('the orchestration reaches the runner only through its port and its public face', () => {
    const publicFace = [path.join(EXECUTION, 'trial-runner.port.ts'), path.join(EXECUTION, 'index.ts')];
    const internal = (target: string) => target.startsWith(EXECUTION) && !publicFace.includes(target);
    expect(edges((file) => file.startsWith(at('modules/evals/orchestration/')), internal)).toEqual([]);
  });

  it('loads in a fresh node process without loading Nest or a store', () => {
    const compiled = path.join(ROOT, 'dist', 'modules', 'evals', 'execution', 'index.js');
    if (!fs.existsSync(compiled)) throw new Error(`${compiled} is missing: run "npm run build" first (npm test does).`);
    const script = `const runner = require(${JSON.stringify(compiled)});
      const loaded = Object.keys(require.cache).filter((file) => /node_modules[\\\\/](@nestjs|better-sqlite3|mongodb|@eventstore)|[\\\\/]dist[\\\\/](runtime|main|app\\.module|infrastructure[\\\\/](event-store|read-store))/.test(file));
      console.log(JSON.stringify({ exports: typeof runner.createTrialRunner, loaded }));`;
    const result = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ exports: 'function', loaded: [] });
  });
});
