import { pino } from 'pino';

/**
 * Structured logs on pino (docs/deployment.md#logs): one JSON line per event on stdout, or a one-line human format
 * for development. Callers pass fields, never raw URLs or headers; credential-named fields are redacted anyway, as
 * the second line of defence.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFormat = 'json' | 'pretty';

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface LoggerOptions {
  format?: LogFormat;
  /** Where each finished line goes (with its newline); default: stdout, written synchronously so nothing is lost on exit. */
  write?: (line: string) => void;
}

/** Field names that hold credentials, wherever they appear at the top level or one level down. */
const CREDENTIAL_FIELDS = [
  'authorization',
  'cookie',
  'set-cookie',
  'password',
  'new_password',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'secret',
  'client_secret',
  'code',
  'code_verifier',
  'ticket',
  'api_key',
];
export const REDACTED_PATHS = CREDENTIAL_FIELDS.flatMap((field) => [`["${field}"]`, `*["${field}"]`]);
const CENSOR = '[redacted]';

export function createLogger(level: LogLevel, options: LoggerOptions = {}): Logger {
  const format = options.format ?? 'json';
  const write = options.write;
  const json = write
    ? { write: (line: string) => write(line) }
    : pino.destination({ fd: process.stdout.fd, sync: true });
  const destination = format === 'pretty' ? { write: (line: string) => json.write(prettyLine(line)) } : json;
  const base = pino(
    {
      level,
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: CENSOR },
    },
    destination,
  );
  return {
    debug: (message, fields) => base.debug(fields ?? {}, message),
    info: (message, fields) => base.info(fields ?? {}, message),
    warn: (message, fields) => base.warn(fields ?? {}, message),
    error: (message, fields) => base.error(fields ?? {}, message),
  };
}

/** `12:00:00.123 INFO  request method=GET route=/v1/users/@me status=200` from one JSON line. */
export function prettyLine(line: string): string {
  const { time, level, msg, ...fields } = JSON.parse(line) as Record<string, unknown>;
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const rest = Object.entries(fields)
    .map(([key, value]) => `${key}=${typeof value === 'string' && !/\s/.test(value) ? value : JSON.stringify(value)}`)
    .join(' ');
  return `${clock} ${String(level).toUpperCase().padEnd(5)} ${String(msg)}${rest ? ` ${rest}` : ''}\n`;
}
