import { fromBase64Url } from '../lib/base64url.ts';
import { HearthApiError, NetworkError } from './errors.ts';

export interface RequestOptions {
  body?: unknown;
  /** A list is sent as the parameter repeated (`author_id=1&author_id=2`). */
  query?: Record<string, string | string[] | undefined>;
  /** Send the session token (default true when one is held). */
  auth?: boolean;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Outlives the page (fetch `keepalive`): for what a closing tab must still say, such as a read marker. */
  keepalive?: boolean;
}

const SUDO_HEADER = 'X-Service-Sudo-Mode-JWT';

/**
 * The one place that talks HTTP to the API: JSON in and out, the session token in `Authorization`,
 * the sudo proof header kept in memory (5 minutes, never stored) and errors turned into `HearthApiError`.
 */
export class HttpClient {
  private sudoProof: string | undefined;

  constructor(
    /** `endpoints.api_client` + `/v1`, from discovery. */
    readonly base: string,
    private readonly token: () => string | null,
    /** A request that carried the session token was refused as signed out: the session is gone. */
    private readonly onSessionRejected: (token: string) => void = () => {},
  ) {}

  forgetSudoProof(): void {
    this.sudoProof = undefined;
  }

  /**
   * Whether a sudo proof is held that has not expired by this clock (its JWT `exp`; an unreadable one counts as
   * held, for the server to judge). An expired one is dropped.
   */
  hasSudoProof(now = Date.now()): boolean {
    if (!this.sudoProof) return false;
    const exp = jwtExpiry(this.sudoProof);
    if (exp !== undefined && exp * 1000 <= now) this.sudoProof = undefined;
    return this.sudoProof !== undefined;
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(`${this.base}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (Array.isArray(value)) for (const item of value) url.searchParams.append(name, item);
      else if (value !== undefined) url.searchParams.set(name, value);
    }
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    const token = options.auth === false ? null : this.token();
    if (token) headers.authorization = token;
    if (token && this.sudoProof) headers[SUDO_HEADER] = this.sudoProof;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body,
        signal: options.signal,
        keepalive: options.keepalive,
        referrerPolicy: 'no-referrer',
      });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new NetworkError((error as Error).message);
    }
    const proof = response.headers.get(SUDO_HEADER);
    if (proof) this.sudoProof = proof;
    const text = await response.text();
    const parsed: unknown = text ? safeJson(text) : undefined;
    if (!response.ok) {
      if (response.status === 401 && token) this.onSessionRejected(token);
      const data = (parsed && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
      const retryAfter =
        typeof data.retry_after === 'number'
          ? data.retry_after
          : Number(response.headers.get('retry-after')) || undefined;
      throw new HearthApiError(
        response.status,
        typeof data.code === 'string' ? data.code : `HTTP_${response.status}`,
        typeof data.message === 'string' ? data.message : response.statusText,
        data,
        retryAfter,
      );
    }
    return parsed as T;
  }

  /**
   * A multipart request through XMLHttpRequest, the one browser API that reports upload progress
   * (`onProgress(sent, total)`); answers and errors as `request` does.
   */
  upload<T>(
    method: string,
    path: string,
    form: FormData,
    onProgress: (sent: number, total: number) => void,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(method, `${this.base}${path}`);
      xhr.setRequestHeader('accept', 'application/json');
      const token = this.token();
      if (token) xhr.setRequestHeader('authorization', token);
      xhr.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : 0);
      xhr.onerror = () => reject(new NetworkError('upload failed'));
      xhr.onload = () => {
        const parsed: unknown = xhr.responseText ? safeJson(xhr.responseText) : undefined;
        if (xhr.status >= 200 && xhr.status < 300) {
          resolve(parsed as T);
          return;
        }
        if (xhr.status === 401 && token) this.onSessionRejected(token);
        const data = (parsed && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
        reject(
          new HearthApiError(
            xhr.status,
            typeof data.code === 'string' ? data.code : `HTTP_${xhr.status}`,
            typeof data.message === 'string' ? data.message : xhr.statusText,
            data,
          ),
        );
      };
      xhr.send(form);
    });
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The `exp` (seconds) of a JWT's payload, or undefined when it cannot be read. */
function jwtExpiry(jwt: string): number | undefined {
  try {
    const json = new TextDecoder().decode(fromBase64Url(jwt.split('.')[1] ?? ''));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp : undefined;
  } catch {
    return undefined;
  }
}
