import { useState } from 'preact/hooks';
import { call, keyStore } from '../api.js';
import { html, Title } from '../ui.js';

/** Asks for an API key once per tab; checks it with auth.whoami before keeping it. */
export function Login({ onKey, notice }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [remember, setRemember] = useState(false);

  const submit = async (event) => {
    event.preventDefault();
    // What the field holds now: a submit can come before the last keystroke's render.
    const field = event.currentTarget.elements.namedItem('api-key');
    const given = (field ? field.value : key).trim();
    if (given === '') return setError('Paste an API key first.');
    setBusy(true);
    setError(null);
    try {
      const whoami = await call('auth.whoami', {}, { key: given });
      keyStore.set(given, remember);
      onKey(whoami);
    } catch (failure) {
      setError(failure.status === 401 ? 'The server does not know this key (401). Check that it is whole and not revoked.' : failure.message);
    } finally {
      setBusy(false);
    }
  };

  return html`<main id="main" class="login">
    <${Title} sub="Batches, runs, trials, cases, suites and prompts of your organization, read through the public API.">Assay viewer</${Title}>
    ${notice ? html`<p class="notice" role="status">${notice}</p>` : null}
    <form onSubmit=${submit} aria-describedby="key-help">
      <label for="api-key">API key</label>
      <input id="api-key" name="api-key" type="password" autocomplete="off" spellcheck="false" value=${key} onInput=${(e) => setKey(e.currentTarget.value)} aria-invalid=${error ? 'true' : undefined} aria-describedby=${error ? 'key-error' : undefined} />
      <p id="key-help" class="hint">
        A key of your organization (<code>assay keys create</code> or <code>auth.keys.create</code>), with <code>evals:read</code>${' '}and${' '}
        <code>prompts:read</code>. It is kept in this tab's session storage, or on this device until you forget it, and sent to this server alone.
      </p>
      <label class="remember"
        ><input type="checkbox" name="remember" checked=${remember} onChange=${(e) => setRemember(e.currentTarget.checked)} /> Remember on this device (until
        "Forget key")</label
      >
      ${error ? html`<p id="key-error" class="failure" role="alert">${error}</p>` : null}
      <button type="submit" disabled=${busy}>${busy ? 'Checking…' : 'Open the viewer'}</button>
    </form>
  </main>`;
}
