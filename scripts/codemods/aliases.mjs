#!/usr/bin/env node
// Rewrites relative imports that leave their own top-level folder for src/shared, src/infrastructure or
// src/modules into the aliases #shared/*, #infrastructure/*, #modules/* (tsconfig "paths").
// Idempotent: run it again after a merge; `node scripts/codemods/aliases.mjs --check` lists what it would change.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ALIASES = [
  ['src/shared/', '#shared/'],
  ['src/infrastructure/', '#infrastructure/'],
  ['src/modules/', '#modules/'],
];
// import x from '…', export … from '…', import '…', import('…'), require('…'), jest.mock('…').
const SPECIFIER = /(\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+|\bjest\.(?:mock|requireActual)\s*\(\s*)(['"])(\.\.?\/[^'"]*)\2/g;

/** The folder a file belongs to for this purpose: src/shared, src/infrastructure, src/modules, src (wiring), test or bench. */
function topFolder(path) {
  const alias = ALIASES.find(([prefix]) => path.startsWith(prefix));
  return alias ? alias[0] : path.split('/')[0] + '/';
}

function rewrite(file, text) {
  const from = relative(root, file).split(sep).join('/');
  return text.replace(SPECIFIER, (whole, lead, quote, specifier) => {
    const target = relative(root, resolve(dirname(file), specifier)).split(sep).join('/');
    const alias = ALIASES.find(([prefix]) => target.startsWith(prefix));
    // Inside its own folder a relative import says "nearby"; only crossings get the alias.
    if (!alias || topFolder(from) === alias[0]) return whole;
    return `${lead}${quote}${alias[1]}${target.slice(alias[0].length)}${quote}`;
  });
}

function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.(ts|js)$/.test(entry.name)) yield path;
  }
}

const check = process.argv.includes('--check');
let changed = 0;
for (const folder of ['src', 'test', 'bench']) {
  for (const file of sources(join(root, folder))) {
    const before = readFileSync(file, 'utf8');
    const after = rewrite(file, before);
    if (after === before) continue;
    changed += 1;
    if (check) console.log(relative(root, file));
    else writeFileSync(file, after);
  }
}
console.log(`${check ? 'would change' : 'changed'} ${changed} files`);
process.exitCode = check && changed > 0 ? 1 : 0;
