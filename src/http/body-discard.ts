import type { IncomingMessage } from 'node:http';
import { ApiError } from './errors.ts';
import { rawErrorResponse } from './raw-response.ts';

/**
 * How much of a body the server still reads after answering without it (a refusal before the body, a 413):
 * enough that a client sending a normal-sized body finishes and reads the answer instead of meeting a broken
 * pipe, little enough that a refused upload cannot make the server read hundreds of MiB.
 */
export const DISCARD_LIMIT_BYTES = 8 * 1024 * 1024;
const CHECK_EVERY_MS = 50;

/**
 * Node drops the rest of an unread body itself (the request is "dumped": its bytes never become 'data'
 * events), so the bound is kept on the socket's byte count: past `limitBytes` the connection is closed.
 */
export function discardRestOfBody(request: IncomingMessage, limitBytes = DISCARD_LIMIT_BYTES): void {
  const socket = request.socket;
  if (request.complete || socket.destroyed) return;
  request.resume();
  const start = socket.bytesRead;
  const stop = () => {
    clearInterval(timer);
    socket.removeListener('close', stop);
  };
  const timer = setInterval(() => {
    if (request.complete || socket.destroyed) stop();
    else if (socket.bytesRead - start > limitBytes) {
      stop();
      socket.destroy();
    }
  }, CHECK_EVERY_MS);
  timer.unref();
  socket.once('close', stop);
}

/**
 * A body must arrive within `timeoutMs` of the request's start, however it trickles (the idle timeout only
 * catches silence): past it the client gets 408 REQUEST_TIMEOUT, unless an answer already went out, and the
 * connection is closed. Node's own `requestTimeout` stops counting once the headers are handed over.
 */
export function limitBodyTime(request: IncomingMessage, timeoutMs: number, answered: () => boolean): void {
  const socket = request.socket;
  const timer = setTimeout(() => {
    if (request.complete || socket.destroyed) return;
    if (!answered() && socket.writable) socket.end(rawErrorResponse(new ApiError('REQUEST_TIMEOUT')));
    socket.destroySoon();
  }, timeoutMs);
  timer.unref();
  // Both listeners go once the body is in: a keep-alive socket carries many requests.
  const stop = () => {
    clearTimeout(timer);
    request.removeListener('end', stop);
    socket.removeListener('close', stop);
  };
  request.once('end', stop);
  socket.once('close', stop);
}
