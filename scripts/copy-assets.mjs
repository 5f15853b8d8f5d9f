// Copies the sources' non-TypeScript files that the build must ship beside its JavaScript (the
// Python spawn helper) from src/ into the given output directory (dist by default), at the same
// relative paths. Run by `npm run build` and `npm run bench` after tsc.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.resolve(root, process.argv[2] ?? 'dist');
const SHIPPED = /\.py$/;

function copyUnder(directory) {
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    const source = path.join(directory, entry.name);
    if (entry.isDirectory()) copyUnder(source);
    else if (SHIPPED.test(entry.name)) {
      const target = path.join(out, path.relative(path.join(root, 'src'), source));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.copyFileSync(source, target);
    }
  }
}

copyUnder(path.join(root, 'src'));
