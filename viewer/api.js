// The public API and nothing else: POST /v1/<operation> with the key the user pasted.

const KEY_NAME = 'assay.apiKey';

/**
 * The key lives in this tab's sessionStorage, gone when the tab closes; on "remember on this
 * device" in localStorage too, for every tab until "Forget key". Never in a cookie.
 */
export const keyStore = {
  get: () => sessionStorage.getItem(KEY_NAME) ?? localStorage.getItem(KEY_NAME),
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
