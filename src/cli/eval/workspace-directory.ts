import * as fs from 'node:fs';
import * as path from 'node:path';
import { MAX_KEYS_PER_OBJECT } from '#infrastructure/http/decode/body-shape';

/** A directory that cannot become a `files` source, with what to do about it. */
export class UnreadableDirectory extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A local directory as the `files` of a workspace source: every file by its path relative to
 * the directory, `.git` left out (the workspace is not the user's repository). A `files`
 * source holds text, so a file that is not UTF-8 is refused rather than corrupted, and a
 * symbolic link may only point inside the directory: the suite must not carry files from
 * elsewhere on the machine.
 */
export function readWorkspaceDirectory(directory: string): Record<string, string> {
  let root: string;
  try {
    root = fs.realpathSync(directory);
  } catch (error) {
    throw new UnreadableDirectory(`cannot read ${directory}: ${(error as Error).message}`);
  }
  if (!fs.statSync(root).isDirectory()) throw new UnreadableDirectory(`${directory} is not a directory`);
  const files: Record<string, string> = {};
  walk(root, root, '', files, new Set([root]));
  return files;
}

function walk(root: string, dir: string, prefix: string, files: Record<string, string>, visited: Set<string>): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name === '.git') continue;
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    const full = path.join(dir, entry.name);
    const real = entry.isSymbolicLink() ? insideTarget(root, full, relative) : full;
    const stat = fs.statSync(real);
    if (stat.isDirectory()) {
      // A link back to a parent would loop forever.
      if (visited.has(real)) continue;
      walk(root, real, relative, files, new Set([...visited, real]));
    } else if (stat.isFile()) {
      if (Object.keys(files).length >= MAX_KEYS_PER_OBJECT) {
        throw new UnreadableDirectory(
          `holds more than ${MAX_KEYS_PER_OBJECT} files, the most a files source may have; use a repo source for larger workspaces`,
        );
      }
      files[relative] = readText(real, relative);
    }
  }
}

function insideTarget(root: string, link: string, relative: string): string {
  let target: string;
  try {
    target = fs.realpathSync(link);
  } catch {
    throw new UnreadableDirectory(`${relative} is a symbolic link to nothing; remove it or make it point inside the directory`);
  }
  if (target !== root && !target.startsWith(root + path.sep)) {
    throw new UnreadableDirectory(`${relative} is a symbolic link leaving the directory (to ${target}); copy the file in instead`);
  }
  return target;
}

function readText(file: string, relative: string): string {
  try {
    return utf8.decode(fs.readFileSync(file));
  } catch {
    throw new UnreadableDirectory(`${relative} is not UTF-8 text; a files source holds text only (use a repo source for binary files)`);
  }
}
