import type { Duplex } from 'node:stream';

/** Sockets written to in this turn of the event loop, corked until it ends. */
const corked = new Set<Duplex>();
let scheduled = false;

/**
 * Holds a socket's writes until the current turn of the event loop ends, so the fan-out frames one turn gives it
 * (a burst of presences coming online) leave in one `writev` instead of one each (docs/performance.md#gateway).
 * One `setImmediate` per turn uncorks every socket written to.
 */
export function batchWrites(socket: Duplex): void {
  if (corked.has(socket)) return;
  socket.cork();
  corked.add(socket);
  if (scheduled) return;
  scheduled = true;
  setImmediate(flush);
}

function flush(): void {
  scheduled = false;
  const sockets = [...corked];
  corked.clear();
  for (const socket of sockets) socket.uncork();
}
