import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { call, exported, keyStore, UNAUTHORIZED_EVENT } from './api.js';
import { link, parseHash } from './router.js';
import { html, Title } from './ui.js';
import { Login } from './pages/login.js';
import { BatchesPage } from './pages/batches.js';
import { BatchPage } from './pages/batch.js';
import { RunPage } from './pages/run.js';
import { TrialPage } from './pages/trial.js';
import { CasePage } from './pages/case.js';
import { SuitePage, SuitesPage } from './pages/suite.js';
import { PromptPage, PromptsPage } from './pages/prompts.js';
import { AnalyticsPage } from './pages/analytics.js';

const PAGES = {
  batches: () => html`<${BatchesPage} />`,
  batch: ([id]) => html`<${BatchPage} id=${id} />`,
  run: ([id]) => html`<${RunPage} id=${id} />`,
  trial: ([runId, trialId]) => html`<${TrialPage} runId=${runId} trialId=${trialId} />`,
  case: ([id]) => html`<${CasePage} id=${id} />`,
  suites: () => html`<${SuitesPage} />`,
  suite: ([id]) => html`<${SuitePage} id=${id} />`,
  analytics: ([suiteId]) => html`<${AnalyticsPage} suiteId=${suiteId ?? null} />`,
  prompts: () => html`<${PromptsPage} />`,
  prompt: ([id]) => html`<${PromptPage} id=${id} />`,
  missing: ([path]) => html`<${Title}>Nothing at ${path}</${Title}><p>This address names no page. <a href=${link.batches()}>See the batches</a>.</p>`,
};

function useRoute() {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseHash(location.hash));
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}

function App() {
  const route = useRoute();
  const [who, setWho] = useState(null);
  const [hasKey, setHasKey] = useState(() => keyStore.get() !== null);
  const [notice, setNotice] = useState(null);

  useEffect(() => {
    const refused = () => {
      keyStore.forget();
      setHasKey(false);
      setWho(null);
      setNotice('The server refused the key (401): it may have been revoked. Paste a key again.');
    };
    window.addEventListener(UNAUTHORIZED_EVENT, refused);
    return () => window.removeEventListener(UNAUTHORIZED_EVENT, refused);
  }, []);

  useEffect(() => {
    if (hasKey && who === null) call('auth.whoami').then(setWho, () => undefined);
  }, [hasKey, who]);

  if (!hasKey) {
    return html`<${Login}
      notice=${notice}
      onKey=${(whoami) => {
        setNotice(null);
        setWho(whoami);
        setHasKey(true);
      }}
    />`;
  }

  const forget = () => {
    keyStore.forget();
    setWho(null);
    setHasKey(false);
    setNotice('The key was forgotten: this tab no longer holds it.');
  };
  const section = {
    batches: 'batches',
    batch: 'batches',
    run: 'batches',
    trial: 'batches',
    case: 'suites',
    suites: 'suites',
    suite: 'suites',
    analytics: 'analytics',
    prompts: 'prompts',
    prompt: 'prompts',
  }[route.name];
  const navLink = (href, label, name) => html`<li><a href=${href} aria-current=${section === name ? 'page' : undefined}>${label}</a></li>`;
  return html`
    <a
      class="skip"
      href="#main"
      onClick=${(e) => {
        e.preventDefault();
        document.querySelector('#main h1')?.focus();
      }}
      >Skip to content</a
    >
    <header class="top">
      <a class="brand" href=${link.batches()}>Assay</a>
      <nav aria-label="Main">
        <ul>
          ${navLink(link.batches(), 'Batches', 'batches')}
          ${exported ? null : html`${navLink(link.suites(), 'Suites', 'suites')} ${navLink(link.analytics(), 'Analytics', 'analytics')} ${navLink(link.prompts(), 'Prompts', 'prompts')}`}
        </ul>
      </nav>
      ${
        exported
          ? html`<div class="who" id="exported"><span>Exported from ${exported.server} on ${exported.exportedAt}: a copy, not live</span></div>`
          : html`<div class="who">
              ${who ? html`<span>Organization <strong>${who.organization}</strong> · ${who.name ?? who.subject ?? who.keyId}</span>` : null}
              <button type="button" class="quiet" onClick=${forget}>Forget key</button>
            </div>`
      }
    </header>
    <main id="main" key=${`${route.name}:${route.params.join('/')}`}>${(PAGES[route.name] ?? PAGES.missing)(route.params)}</main>
  `;
}

const root = document.getElementById('app');
// The placeholder shown while the bundle loads goes: Preact renders into an empty container.
root.replaceChildren();
render(html`<${App} />`, root);
