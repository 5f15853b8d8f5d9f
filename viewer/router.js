// Routing by the URL's hash (#/batches/<id>…): links work from the CLI, bookmarks and the
// browser's history, and the server serves one page at `/` with no fallback route.

const ROUTES = [
  ['batches', /^\/batches\/?$/],
  ['batch', /^\/batches\/([^/]+)$/],
  ['trial', /^\/runs\/([^/]+)\/trials\/([^/]+)$/],
  ['run', /^\/runs\/([^/]+)$/],
  ['case', /^\/cases\/([^/]+)$/],
  ['suites', /^\/suites\/?$/],
  ['suite', /^\/suites\/([^/]+)$/],
  ['analytics', /^\/analytics\/?$/],
  ['analytics', /^\/analytics\/([^/]+)$/],
  ['prompts', /^\/prompts\/?$/],
  // Prompt ids may hold slashes (support/greeting): everything after #/prompts/ is the id.
  ['prompt', /^\/prompts\/(.+)$/],
];

export function parseHash(hash) {
  const path = hash.replace(/^#/, '') || '/batches';
  if (path === '/') return { name: 'batches', params: [] };
  for (const [name, pattern] of ROUTES) {
    const match = pattern.exec(path);
    if (match) return { name, params: match.slice(1).map(decodeURIComponent) };
  }
  return { name: 'missing', params: [path] };
}

const segment = (id) => encodeURIComponent(id);

export const link = {
  batches: () => '#/batches',
  batch: (id) => `#/batches/${segment(id)}`,
  run: (id) => `#/runs/${segment(id)}`,
  trial: (runId, trialId) => `#/runs/${segment(runId)}/trials/${segment(trialId)}`,
  case: (id) => `#/cases/${segment(id)}`,
  suites: () => '#/suites',
  suite: (id) => `#/suites/${segment(id)}`,
  analytics: (suiteId) => (suiteId ? `#/analytics/${segment(suiteId)}` : '#/analytics'),
  prompts: () => '#/prompts',
  prompt: (id) => `#/prompts/${id.split('/').map(segment).join('/')}`,
};
