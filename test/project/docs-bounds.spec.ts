import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** Files under docs/, as paths from the repository root. */
function docsFiles(folder = 'docs'): string[] {
  return fs.readdirSync(path.join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return docsFiles(relative);
    return entry.name.endsWith('.md') ? [relative] : [];
  });
}

function lineCount(file: string): number {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

/** The API reference documents every operation, so it is the one file allowed to be long. */
const UNBOUNDED = new Set(['docs/api.md']);

describe('the docs stay short enough to read', () => {
  it('README.md is at most 200 lines: the door, not the guide', () => {
    expect(lineCount('README.md')).toBeLessThanOrEqual(200);
  });

  it('bench/README.md is at most 150 lines: results live in bench/results/', () => {
    expect(lineCount('bench/README.md')).toBeLessThanOrEqual(150);
  });

  it.each(docsFiles().filter((file) => !UNBOUNDED.has(file)))('%s is at most 600 lines', (file) => {
    expect(lineCount(file)).toBeLessThanOrEqual(600);
  });
});
