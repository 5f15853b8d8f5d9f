// Bundles the web viewer (viewer/) into dist/viewer: index.html, app.js and app.css, with no CDN.
// Run by `npm run build` after the server's own build.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'viewer');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });

await build({
  entryPoints: { app: path.join(root, 'viewer', 'main.js') },
  outdir: out,
  bundle: true,
  minify: true,
  sourcemap: true,
  format: 'esm',
  target: ['es2022'],
  platform: 'browser',
  legalComments: 'linked',
  logLevel: 'warning',
});
fs.copyFileSync(path.join(root, 'viewer', 'index.html'), path.join(out, 'index.html'));
fs.copyFileSync(path.join(root, 'viewer', 'favicon.svg'), path.join(out, 'favicon.svg'));
