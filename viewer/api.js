// The public API and nothing else: POST /v1/<operation> with the key the user pasted.

const KEY_NAME = 'assay.apiKey';

/**
 * A batch exported to one HTML file (`assay export BATCH --html FILE`): the answers its pages
 * ask for, kept in the file; no server, no key, no network. Null in the live viewer.
 */
export const exported = globalThis.ASSAY_EXPORT ?? null;

/** The export's answer to an operation with this body, by the same key the export was written with. */
export function exportKey(operation, body) {
  return `${operation} ${JSON.stringify(sortedKeys(body ?? {}))}`;
}

function sortedKeys(value) {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys(value[key])]));
}

/**
 * The key lives in this tab's sessionStorage, gone when the tab closes; on "remember on this
 * device" in localStorage too, for every tab until "Forget key". Never in a cookie.
 */
export const keyStore = {
  get: () => (exported ? 'exported' : (sessionStorage.getItem(KEY_NAME) ?? localStorage.getItem(KEY_NAME))),
  set: (key, remember = false) => {
    sessionStorage.setItem(KEY_NAME, key);
    if (remember) localStorage.setItem(KEY_NAME, key);
    else localStorage.removeItem(KEY_NAME);
  },
  /** Whether the key is remembered on this device. */
  remembered: () => localStorage.getItem(KEY_NAME) !== null,
  forget: () => {
    sessionStorage.removeItem(KEY_NAME);
    localStorage.removeItem(KEY_NAME);
  },
};

/** An error answer of the API, in its shape: `_tag` and a message meant for a person. */
export class ApiError extends Error {
  constructor(status, tag, message) {
    super(message);
    this.status = status;
    this.tag = tag;
  }
}

/** Fired when the key stops working (revoked, mistyped): the app asks for one again. */
export const UNAUTHORIZED_EVENT = 'assay:unauthorized';

export async function call(operation, body = {}, options = {}) {
  if (exported) return answerFromExport(operation, body);
  const key = options.key ?? keyStore.get();
  let response;
  try {
    response = await fetch(`/v1/${operation}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key ?? ''}` },
      body: JSON.stringify(body),
      signal: options.signal,
    });
  } catch (error) {
    if (error?.name === 'AbortError') throw error;
    throw new ApiError(0, 'NetworkError', `The server did not answer ${operation}: is it running?`);
  }
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    if (response.status === 401 && options.key === undefined) window.dispatchEvent(new CustomEvent(UNAUTHORIZED_EVENT));
    throw new ApiError(response.status, parsed?._tag ?? 'Error', parsed?.message ?? `${operation} answered ${response.status}.`);
  }
  return parsed;
}

/** What an exported file holds for an operation: its kept answer, the one batch for any list, else "not in this export". */
function answerFromExport(operation, body) {
  const kept = exported.answers[exportKey(operation, body)];
  if (kept !== undefined) return Promise.resolve(structuredClone(kept));
  if (operation === 'evals.batches.list') return Promise.resolve({ batches: [exported.summary], next: null, total: 1 });
  return Promise.reject(new ApiError(404, 'NotFound', `Not in this export (${operation}): open the batch on its server to see it.`));
}
