/**
 * The layer rules, checked by `npm run lint:layers` (decision record 0067).
 * dependency-cruiser rather than eslint-plugin-import: it reads path rules and cycles from one
 * graph of the whole tree in seconds, where import/no-cycle re-walks the graph per file.
 */
const fs = require('node:fs');
const path = require('node:path');

/**
 * A slice is a use-case folder: one below an area (src/modules/<area>/...) that holds a
 * controller. Found from the tree so a new slice is covered without editing this file.
 */
function slicesUnder(dir, depth = 0) {
  const entries = fs.readdirSync(dir, { withFileTypes: true });
  const here = depth >= 2 && entries.some((e) => e.isFile() && e.name.endsWith('.controller.ts')) ? [dir] : [];
  const below = entries.filter((e) => e.isDirectory()).flatMap((e) => slicesUnder(path.join(dir, e.name), depth + 1));
  return [...here, ...below];
}
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const slices = slicesUnder(path.join(__dirname, 'src/modules')).map((d) => escape(path.relative(__dirname, d).split(path.sep).join('/')));
const SLICE = `^(${slices.join('|')})/`;
/** Slices grouped by their area folder: one rule per area forbids a slice to import a sibling. */
const byArea = new Map();
for (const slice of slices) {
  const area = slice.slice(0, slice.lastIndexOf('/'));
  byArea.set(area, [...(byArea.get(area) ?? []), slice.slice(area.length + 1)]);
}
const siblingRules = [...byArea].map(([area, names]) => ({
  name: 'slice-not-to-sibling-slice',
  comment: 'A slice is one use case a newcomer can read alone; what two slices share moves up to their area folder.',
  severity: 'error',
  from: { path: `^${area}/(${names.join('|')})/` },
  to: { path: `^${area}/(${names.join('|')})/`, pathNot: `^${area}/$1/` },
}));

/** Specs stand beside the file they test; they may set up whatever the test needs (a store, a module), so the layer rules are for the code they test. */
const SPEC = '\\.spec\\.ts$';

/** The app's wiring: what composes the modules must not be reachable from them. */
const WIRING = '^src/(runtime|projections|app\\.module|main)\\.ts$';
/** Store adapters (the ports beside them are fine); the trial runner runs without any store. */
const STORE_ADAPTERS = '^src/infrastructure/(event-store/(sqlite|eventstoredb)|read-store/(memory|mongodb))/|^node_modules/(better-sqlite3|mongodb|@eventstore)/';

module.exports = {
  forbidden: [
    {
      name: 'modules-not-to-wiring',
      comment: 'Modules are composed by the wiring; importing it back makes every module depend on all others (and cycles).',
      severity: 'error',
      from: { path: '^src/modules/', pathNot: SPEC },
      to: { path: WIRING },
    },
    {
      name: 'shared-imports-nothing-of-the-project',
      comment: 'src/shared is the vocabulary everything uses; it stays usable alone, so it imports only itself.',
      severity: 'error',
      from: { path: '^src/shared/', pathNot: SPEC },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'infrastructure-not-to-modules',
      comment: 'Infrastructure offers ports and adapters to the modules; knowing a module would invert the layers.',
      severity: 'error',
      from: { path: '^src/infrastructure/', pathNot: SPEC },
      to: { path: '^src/modules/|^src/trial-runner/' },
    },
    ...siblingRules,
    {
      name: 'slice-not-to-other-slice',
      comment: 'A slice of another area is no sibling, but the same reasoning holds: what two slices share lives in their area.',
      severity: 'error',
      from: { path: SLICE },
      to: { path: SLICE, pathNot: '^$1/' },
    },
    {
      name: 'trial-runner-only-through-its-face',
      comment:
        'The trial engine is a room of its own: outside it, only its public face (src/trial-runner/index.ts, which exports the contract) is imported, so its insides can change without reaching its users.',
      severity: 'error',
      from: { pathNot: '^src/trial-runner/' },
      to: { path: '^src/trial-runner/', pathNot: '^src/trial-runner/index\\.ts$' },
    },
    {
      name: 'trial-runner-not-to-modules',
      comment: "The trial engine is imported alone by the CLI's local mode; the domain and the saga that drive it live above it.",
      severity: 'error',
      from: { path: '^src/trial-runner/', pathNot: SPEC },
      to: { path: '^src/modules/' },
    },
    {
      name: 'trial-runner-without-nest',
      comment: 'The local mode runs trials without a Nest application, so the engine must not need one.',
      severity: 'error',
      from: { path: '^src/trial-runner/' },
      to: { path: '^node_modules/@nestjs/|^@nestjs/' },
    },
    {
      name: 'trial-runner-without-runtime-or-stores',
      comment: 'The local mode has no event log nor read store; the engine reports through its contract instead.',
      severity: 'error',
      from: { path: '^src/trial-runner/', pathNot: SPEC },
      to: { path: `${WIRING}|${STORE_ADAPTERS}` },
    },
    {
      name: 'no-cycles',
      comment: 'A cycle makes load order matter (undefined imports at start-up) and hides which part is the lower layer.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that resolves to nothing fails at run time; catch it here too.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are kept: they bind the layers as much as value imports do.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
    exclude: { path: '^(dist|dist-bench|dist-all|coverage)/' },
  },
};
