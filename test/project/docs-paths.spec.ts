import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** The markdown a reader is sent to: the README, every file under docs/, and the benchmarks' README. */
function documents(): string[] {
  const under = (folder: string): string[] =>
    fs.readdirSync(path.join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
      const relative = `${folder}/${entry.name}`;
      if (entry.isDirectory()) return under(relative);
      return entry.name.endsWith('.md') ? [relative] : [];
    });
  return ['README.md', ...under('docs'), 'bench/README.md'].sort();
}

/**
 * Every path into the project the text shows in backquotes: one that starts with a folder of the
 * project. Bare names (`suite.yaml`) are left out: the guide shows files of the user's own.
 */
export function namedPaths(text: string): string[] {
  const names = [...text.matchAll(/`((?:src|test|bench|docs|scripts|viewer|\.ci)\/[\w./-]*)`/g)].map((match) => match[1]);
  return [...new Set(names.filter((name) => !name.includes('...')))]; // `src/...` stands for any path
}

/** Folders git ignores (`test/artifacts/`): made by a run, so a document may name them before one exists. */
const ignoredFolders = fs
  .readFileSync(path.join(ROOT, '.gitignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line.endsWith('/') && !/[*?[!#]/.test(line))
  .map((line) => line.replace(/^\//, ''));

function isInRepository(name: string): boolean {
  return fs.existsSync(path.join(ROOT, name)) || ignoredFolders.some((folder) => `${name}/`.startsWith(folder));
}

/** The text with code blocks and code spans emptied: brackets there are code, not links. */
function prose(text: string): string {
  return text.replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** The target of every markdown link and image of the text, as written. */
export function linkTargets(text: string): string[] {
  return [...prose(text).matchAll(/!?\[(?:[^\]\n]|\n(?!\s*\n))*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]);
}

/** GitHub's anchor for a heading: the text as shown, lower case, without punctuation, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor the markdown file's headings give, with GitHub's -1, -2 for repeated ones. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const match of text.replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, '').matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(match[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** What is wrong with a link from `document` (a path from the root), or null when it leads somewhere. */
function brokenLink(document: string, target: string): string | null {
  if (/^[a-z][a-z+.-]*:/i.test(target)) return null; // https:, mailto:: not a file of the repository
  const hash = target.indexOf('#');
  const file = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? null : target.slice(hash + 1);
  const resolved = file === '' ? path.join(ROOT, document) : path.resolve(path.join(ROOT, path.dirname(document)), decodeURIComponent(file));
  const relative = path.relative(ROOT, resolved);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return `${target}: outside the repository`;
  if (!fs.existsSync(resolved)) return `${target}: no such file`;
  if (anchor === null || !resolved.endsWith('.md')) return null;
  return anchors(fs.readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor)) ? null : `${target}: no heading with that anchor`;
}

describe('the docs name only files in the repository', () => {
  it('reads the README, every file under docs/ (the API reference too) and the benchmarks README', () => {
    expect(documents()).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/architecture.md', 'bench/README.md']));
  });

  it.each(documents())('%s: each path into the project it shows in backquotes is there', (document) => {
    const text = fs.readFileSync(path.join(ROOT, document), 'utf8');
    expect(namedPaths(text).filter((name) => !isInRepository(name))).toEqual([]);
  });

  it.each(documents())('%s: each relative link leads to a file of the repository, and each anchor to a heading', (document) => {
    const text = fs.readFileSync(path.join(ROOT, document), 'utf8');
    expect(linkTargets(text).flatMap((target) => brokenLink(document, target) ?? [])).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('find paths into the project, and leave the user’s own file names alone', () => {
    expect(namedPaths('see `src/no/such.ts`, `docs/guide/`, `suite.yaml` and `npm test`')).toEqual(['src/no/such.ts', 'docs/guide/']);
    expect(isInRepository('src/no/such.ts')).toBe(false);
    expect(isInRepository('test/artifacts/viewer-batch.png')).toBe(true);
  });

  it('find links and images in prose, not in code', () => {
    const text = '[a](docs/x.md#y) ![b](img.png) `[c](d.md)`\n\n```\n[e](f.md)\n```\n[g](https://example.com) [a text\nwrapped](h.md)';
    expect(linkTargets(text)).toEqual(['docs/x.md#y', 'img.png', 'https://example.com', 'h.md']);
  });

  it('make the anchors GitHub makes', () => {
    expect([...anchors('# Assay\n## `assay eval`\n### evals.batches.start\n## GET /health\n## Set-up\n## Set-up\n```\n# not a heading\n```')]).toEqual([
      'assay',
      'assay-eval',
      'evalsbatchesstart',
      'get-health',
      'set-up',
      'set-up-1',
    ]);
  });

  it('refuse a missing file, a missing heading and a way out of the repository', () => {
    expect(brokenLink('README.md', 'docs/no-such.md')).toMatch(/no such file/);
    expect(brokenLink('README.md', 'docs/api.md#no-such-heading')).toMatch(/no heading/);
    expect(brokenLink('docs/api.md', '../../outside.md')).toMatch(/outside the repository/);
    expect(brokenLink('README.md', '#no-such-heading-here')).toMatch(/no heading/);
  });
});
