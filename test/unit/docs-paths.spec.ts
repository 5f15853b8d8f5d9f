import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const DOCS = ['docs/decisions.md', 'docs/architecture.md', 'bench/README.md'];

/** Every file name the text shows in backquotes: a word with an extension, with or without a directory. */
function namedFiles(text: string): string[] {
  const names = [...text.matchAll(/`([\w./-]+\.(?:ts|js|json|md|ya?ml))`/g)].map((match) => match[1]);
  return [...new Set(names)];
}

describe('the docs name only files in the repository', () => {
  it.each(DOCS)('%s: each file it names is at that path from the repository root', (doc) => {
    const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
    const names = namedFiles(text);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !fs.existsSync(path.join(ROOT, name)))).toEqual([]);
  });
});
