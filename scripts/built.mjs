// Whether dist/ holds a complete build newer than everything the build reads: exit 0 when it
// does, 1 when `npm run build` must run first. `prestart` and `prepare` run
// `node scripts/built.mjs || npm run build`, so `npm start` on a built tree starts at once, and a
// fresh clone, a git-URL install or a changed source is built first.
// The build begins with `node scripts/built.mjs --begin` and ends with `--mark`, which records
// that a build completed, dated when it began: a source saved while it ran is built next time.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MARK = path.join(root, 'dist', '.built');
const BEGUN = path.join(root, 'dist', '.building');
/** What `npm run build` reads besides node_modules (whose changes npm install follows with prepare). */
const INPUTS = [
  'src',
  'viewer',
  'scripts/copy-assets.mjs',
  'scripts/build-viewer.mjs',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.validator.json',
];

/** The newest modification time under a path, in milliseconds (specs are not built). */
function newest(target) {
  const stat = fs.statSync(target, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return target.endsWith('.spec.ts') ? 0 : stat.mtimeMs;
  let latest = stat.mtimeMs; // a file removed from the folder changes the folder
  for (const entry of fs.readdirSync(target)) latest = Math.max(latest, newest(path.join(target, entry)));
  return latest;
}

if (process.argv.includes('--begin')) {
  fs.mkdirSync(path.dirname(BEGUN), { recursive: true });
  fs.writeFileSync(BEGUN, `${new Date().toISOString()}\n`);
} else if (process.argv.includes('--mark')) {
  if (fs.existsSync(BEGUN))
    fs.renameSync(BEGUN, MARK); // keeps the time the build began
  else fs.writeFileSync(MARK, `${new Date().toISOString()}\n`);
} else if (!fs.existsSync(path.join(root, 'src'))) {
  // Nothing to build from: the Docker image installs its dependencies before it copies the sources in.
  process.exit(0);
} else {
  const mark = fs.statSync(MARK, { throwIfNoEntry: false });
  const sources = Math.max(...INPUTS.map((input) => newest(path.join(root, input))));
  const fresh = mark !== undefined && fs.existsSync(path.join(root, 'dist', 'cli.js')) && mark.mtimeMs >= sources;
  if (!fresh) process.stderr.write(mark ? 'dist/ is older than the sources: building.\n' : 'dist/ is not built: building.\n');
  process.exit(fresh ? 0 : 1);
}
