/** An error answer from the API: `{code, message, ...}` plus the HTTP status. */
export class HearthApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown>,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'HearthApiError';
  }

  /** Element codes of an `INVALID_FORM_BODY`, by dot path (`email`, `password`, `root`). */
  fieldCodes(): Record<string, string> {
    const errors = this.body.errors;
    const out: Record<string, string> = {};
    if (!Array.isArray(errors)) return out;
    for (const element of errors as { path?: string; code?: string }[]) {
      if (element.path && element.code && !(element.path in out)) out[element.path] = element.code;
    }
    return out;
  }

  /** The most specific code to show: the first element code of a form error, else the top-level code. */
  displayCode(): string {
    if (this.code !== 'INVALID_FORM_BODY') return this.code;
    return Object.values(this.fieldCodes())[0] ?? this.code;
  }
}

/** Network failure (server unreachable, CORS, offline): no status, no code from the server. */
export class NetworkError extends Error {
  readonly code = 'NETWORK_ERROR';
}

export function errorCode(error: unknown): string {
  if (error instanceof HearthApiError) return error.displayCode();
  if (error instanceof NetworkError) return error.code;
  return 'UNKNOWN_ERROR';
}
