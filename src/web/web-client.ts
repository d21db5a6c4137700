import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.ts';
import type { Logger } from '../platform/log.ts';
import { contentSecurityPolicy } from './security-headers.ts';

/** Where `npm ci` (the root `prepare` script) puts the built client. */
export const DEFAULT_WEB_DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));

/** Path prefixes that belong to the server, never to the client's history fallback (issue 15). */
const SERVER_PREFIXES = ['/v1', '/gateway', '/media', '/.well-known', '/_health', '/test'] as const;

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.js', '.css', '.html', '.svg', '.json', '.txt', '.webmanifest']);

interface StaticFile {
  body: Buffer;
  /** Worth compressing (text, over 512 bytes). */
  compressible: boolean;
  /** The gzip body, made at the first request that accepts it (off the event loop) and kept. */
  gzip: Promise<Buffer> | undefined;
  type: string;
}

const gzipAsync = promisify(gzip);

export interface WebClientOptions {
  config: Pick<Config, 'publicUrl' | 'captchaProvider'>;
  log: Logger;
  distDir?: string;
}

/** True for paths the server answers itself; the fallback leaves them to the JSON 404. */
export function isServerPath(path: string): boolean {
  return SERVER_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/** A browser navigation asks for HTML; API clients and asset loaders do not. */
function acceptsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && accept.includes('text/html');
}

/**
 * Reads the built client once, at start: it is small and immutable for the life of the process. Compressing it
 * at start cost more than the rest of the start-up wiring (docs/performance.md#start-up): each file is
 * compressed at its first request instead.
 */
function loadDist(distDir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      const ext = extname(name);
      const body = readFileSync(path);
      const url = `/${relative(distDir, path).split(sep).join('/')}`;
      files.set(url, {
        body,
        compressible: COMPRESSIBLE.has(ext) && body.length > 512,
        gzip: undefined,
        type: TYPES[ext] ?? 'application/octet-stream',
      });
    }
  };
  walk(distDir);
  return files;
}

async function send(request: FastifyRequest, reply: FastifyReply, file: StaticFile): Promise<FastifyReply> {
  reply.header('content-type', file.type).header('vary', 'Accept-Encoding');
  const accept = request.headers['accept-encoding'];
  if (file.compressible && typeof accept === 'string' && /\bgzip\b/.test(accept)) {
    file.gzip ??= gzipAsync(file.body, { level: 9 });
    return reply.header('content-encoding', 'gzip').send(await file.gzip);
  }
  return reply.send(file.body);
}

/**
 * Serves the first-party web client from the same process: hashed assets under `/assets/` with a long
 * immutable cache, other built files (favicon) with a short one, and `index.html` for any HTML navigation
 * outside the server's own prefixes, so deep links (`/verify#token=…`, `/oauth2/authorize?…`) open the app.
 */
export function registerWebClient(app: FastifyInstance, options: WebClientOptions): boolean {
  const distDir = options.distDir ?? DEFAULT_WEB_DIST;
  if (!existsSync(join(distDir, 'index.html'))) {
    options.log.warn('web client is not built (run `npm run build:web`): only the API is served', { distDir });
    return false;
  }
  const files = loadDist(distDir);
  const index = files.get('/index.html') as StaticFile;
  // Computed per request from the live configuration (tests learn their public URL only after listen).
  let csp = { forUrl: '', value: '' };
  const currentCsp = () => {
    if (csp.forUrl !== options.config.publicUrl) {
      csp = { forUrl: options.config.publicUrl, value: contentSecurityPolicy(options.config) };
    }
    return csp.value;
  };

  app.get('/assets/*', (request, reply) => {
    const file = files.get(request.url.split('?')[0] ?? '');
    if (!file) return reply.callNotFound();
    reply.header('cache-control', 'public, max-age=31536000, immutable');
    reply.header('x-content-type-options', 'nosniff');
    return send(request, reply, file);
  });

  app.get('/*', (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (isServerPath(path)) return reply.callNotFound();
    const file = path === '/index.html' ? undefined : files.get(path);
    if (file) {
      reply.header('cache-control', 'public, max-age=3600');
      reply.header('x-content-type-options', 'nosniff');
      return send(request, reply, file);
    }
    if (!acceptsHtml(request)) return reply.callNotFound();
    reply
      .header('cache-control', 'no-cache')
      .header('content-security-policy', currentCsp())
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cross-origin-opener-policy', 'same-origin')
      // Voice needs the microphone, camera and screen capture in the app's own document (never in frames).
      .header('permissions-policy', 'camera=(self), microphone=(self), display-capture=(self), geolocation=()');
    return send(request, reply, index);
  });
  return true;
}
