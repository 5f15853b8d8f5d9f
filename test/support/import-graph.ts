import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

/**
 * The project's import graph, read from the sources with the TypeScript parser: every
 * `import`, `export … from` and `require` of a file, type-only ones included (a cycle of types
 * is still a cycle a reader has to untangle). Relative specifiers resolve to project files;
 * anything else is kept as the package name it names.
 */
export interface ImportGraph {
  /** Project file (absolute path) → what it imports: project files (absolute) and package names. */
  readonly edges: ReadonlyMap<string, readonly string[]>;
}

const EXTENSIONS = ['.ts', '.js', '.json', '/index.ts', '/index.js'];

export function readImportGraph(root: string): ImportGraph {
  const edges = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    edges.set(
      file,
      importedFiles.map((imported) => resolve(file, imported.fileName)),
    );
  }
  return { edges };
}

function sourceFiles(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

function resolve(from: string, specifier: string): string {
  if (!specifier.startsWith('.')) return packageName(specifier);
  const base = path.resolve(path.dirname(from), specifier);
  const found = ['', ...EXTENSIONS].map((extension) => base + extension).find((candidate) => fs.existsSync(candidate) && fs.statSync(candidate).isFile());
  return found ?? base;
}

/** `@nestjs/common/x` → `@nestjs/common`, `node:fs` → `node:fs`, `yaml/x` → `yaml`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Every file reachable from `entry`, itself included. */
export function reachableFrom(graph: ImportGraph, entry: string): string[] {
  const seen = new Set<string>([entry]);
  const pending = [entry];
  while (pending.length > 0) {
    for (const next of graph.edges.get(pending.pop()!) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      if (graph.edges.has(next)) pending.push(next);
    }
  }
  return [...seen];
}

/** The import cycles of the graph, one per strongly connected component of several files (or a file importing itself). */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter);
    counter += 1;
    stack.push(file);
    onStack.add(file);
    const targets = (graph.edges.get(file) ?? []).filter((target) => graph.edges.has(target));
    for (const target of targets) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || targets.includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.edges.keys()) if (!index.has(file)) visit(file);
  return cycles;
}
