/** A thin client over real HTTP for end-to-end tests. */
export interface Answer<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface CallOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as-is instead of JSON-encoding the body. */
  rawBody?: string | Buffer;
  key?: string | null;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly key: string | null = null,
  ) {}

  withKey(key: string | null): ApiClient {
    return new ApiClient(this.baseUrl, key);
  }

  async call<T = any>(operation: string, body: unknown = {}, options: CallOptions = {}): Promise<Answer<T>> {
    return this.request<T>(`/v1/${operation}`, body, options);
  }

  async request<T = any>(path: string, body: unknown, options: CallOptions = {}): Promise<Answer<T>> {
    const method = options.method ?? 'POST';
    const key = options.key === undefined ? this.key : options.key;
    const headers: Record<string, string> = { ...(key ? { authorization: `Bearer ${key}` } : {}) };
    let payload: string | Buffer | undefined;
    if (method !== 'GET' && method !== 'HEAD') {
      payload = options.rawBody ?? JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    Object.assign(headers, options.headers ?? {});
    const response = await fetch(this.baseUrl + path, { method, headers, body: payload });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed as T, text, headers: response.headers };
  }
}
