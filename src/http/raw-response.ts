import { STATUS_CODES } from 'node:http';
import { type ApiError, wireText } from './errors.ts';

/**
 * A complete HTTP/1.1 error response as text, for the places that answer on the raw socket because no
 * Fastify reply exists: requests Node's parser rejects, and refused WebSocket upgrades.
 */
export function rawErrorResponse(error: ApiError): string {
  const body = wireText(error);
  const lines = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...Object.entries(error.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
