// Shared pieces of every page: loading, errors, statuses, and the data hook.
import { h } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';

export const html = htm.bind(h);

/**
 * Loads with `loader(signal)` when `deps` change; `reload()` loads again, keeping what is shown
 * until the new answer arrives (no flicker while a batch updates live).
 */
export function useLoad(loader, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const generation = useRef(0);
  const reload = useCallback(() => {
    const mine = ++generation.current;
    return loader().then(
      (data) => mine === generation.current && setState({ data, error: null, loading: false }),
      (error) => mine === generation.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  }, deps);
  useEffect(() => {
    setState({ data: null, error: null, loading: true });
    void reload();
    return () => {
      generation.current++;
    };
  }, [reload]);
  return { ...state, reload };
}

export function Loading({ what }) {
  return html`<p class="loading" role="status">Loading ${what}…</p>`;
}

export function Failure({ error }) {
  const status = error?.status ? ` (${error.status} ${error.tag})` : '';
  return html`<div class="failure" role="alert"><strong>Could not load this page${status}.</strong> ${error?.message ?? String(error)}</div>`;
}

/** Waits for `load`, then renders `children(data)`; errors in the API's words. */
export function Loaded({ load, what, children }) {
  if (load.error && !load.data) return html`<${Failure} error=${load.error} />`;
  if (!load.data) return html`<${Loading} what=${what} />`;
  return html`${load.error ? html`<${Failure} error=${load.error} />` : null}${children(load.data)}`;
}

const SYMBOLS = { passed: '✓', failed: '✗', void: '⊘', running: '●', queued: '…', finished: '■', failed_batch: '✗' };

/** A status as a word and a symbol as well as a colour. */
export function Status({ status }) {
  return html`<span class=${`status status-${status}`}><span aria-hidden="true">${SYMBOLS[status] ?? '•'} </span>${status}</span>`;
}

/** The page's title: the h1, focused after each navigation so screen readers announce the page. */
export function Title({ children, sub }) {
  const ref = useRef(null);
  useEffect(() => {
    ref.current?.focus({ preventScroll: true });
  }, []);
  // The tab's title follows the heading, which may name what it shows once that has loaded.
  const text = typeof children === 'string' ? children : Array.isArray(children) ? children.join('') : null;
  useEffect(() => {
    document.title = `${ref.current?.textContent ?? 'Assay'} · Assay`;
  }, [text]);
  return html`<header class="page-title">
    <h1 tabindex="-1" ref=${ref}>${children}</h1>
    ${sub ? html`<p class="sub">${sub}</p>` : null}
  </header>`;
}

export function Breadcrumbs({ items }) {
  return html`<nav aria-label="Breadcrumb" class="breadcrumbs">
    <ol>
      ${items.map(
        ([label, href], index) =>
          html`<li>${href && index < items.length - 1 ? html`<a href=${href}>${label}</a>` : html`<span aria-current="page">${label}</span>`}</li>`,
      )}
    </ol>
  </nav>`;
}

/** A definition list of label → value pairs (null values left out). */
export function Facts({ items, label }) {
  return html`<dl class="facts" aria-label=${label}>
    ${items
      .filter(([, value]) => value !== null && value !== undefined && value !== '')
      .map(
        ([term, value]) =>
          html`<div>
            <dt>${term}</dt>
            <dd>${value}</dd>
          </div>`,
      )}
  </dl>`;
}

export function Code({ children, label }) {
  return html`<pre class="code" tabindex="0" aria-label=${label}><code>${children}</code></pre>`;
}

/**
 * Passed, failed and void counts, each in its status's colour, void never mistaken for a pass;
 * "nothing measured" when no trial was scored.
 */
export function Counts({ passed, failed, voided }) {
  const nothing = passed + failed === 0 && voided > 0;
  const parts = [
    html`<span class="status-passed" title="passed">${passed} ✓</span>`,
    html`<span class="status-failed" title="failed">${failed} ✗</span>`,
    html`<span class="status-void" title="void">${voided} ⊘</span>`,
  ];
  if (nothing) parts.push(html`<span class="nothing-measured">nothing measured</span>`);
  return html`<span class="counts">${parts.flatMap((part, index) => (index === 0 ? [part] : [' ', part]))}</span>`;
}
