/**
 * Fans the one gateway connection of the tab out to whoever listens (the chat store, the shell). It keeps
 * the last READY and the dispatches since (bounded), so a feature whose chunk loads after the connection is
 * up starts from the same state as one that was there from the beginning.
 */
const LOG_LIMIT = 5000;

export type HubListener = (type: string, data: unknown) => void;

export class GatewayHub {
  private readonly listeners = new Set<HubListener>();
  /** The last READY payload of this tab's session (null until one arrives). */
  ready: unknown = null;
  connected = false;
  /** Heartbeat now and reconnect if the socket is dead (set by the shell while a connection exists). */
  probe: () => void = () => {};
  /** Sends a frame on the tab's connection (set by the shell while a connection exists; voice uses op 4). */
  send: (op: number, d: unknown) => void = () => {};

  private log: [string, unknown][] = [];

  /** Listens from now on; with `replay`, first hears READY and every dispatch after it. */
  subscribe(listener: HubListener, options: { replay?: boolean } = {}): () => void {
    if (options.replay) {
      if (this.ready) listener('READY', this.ready);
      for (const [type, data] of this.log) listener(type, data);
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(type: string, data: unknown): void {
    if (type === 'READY') {
      this.ready = data;
      this.log = [];
    } else if (this.log.length < LOG_LIMIT && !type.startsWith('@')) {
      this.log.push([type, data]);
    }
    for (const listener of this.listeners) listener(type, data);
  }

  /** Connection state changes travel as pseudo-events `@connected` / `@disconnected`. */
  setConnected(connected: boolean): void {
    this.connected = connected;
    this.emit(connected ? '@connected' : '@disconnected', null);
  }

  reset(): void {
    this.ready = null;
    this.log = [];
    this.connected = false;
  }
}
