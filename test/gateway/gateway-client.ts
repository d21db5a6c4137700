import WebSocket from 'ws';
import type { TestServer } from '../support/server.ts';

export interface Frame {
  op: number;
  d?: any;
  s?: number;
  t?: string;
}

export interface Closed {
  code: number;
  reason: string;
}

/** A raw gateway client for black-box tests: a frame queue, a close promise, and helpers for the usual steps. */
export class GatewayClient {
  private readonly frames: Frame[] = [];
  private waiters: { match: (f: Frame) => boolean; resolve: (f: Frame) => void; reject: (e: Error) => void }[] = [];
  readonly closed: Promise<Closed>;
  readonly opened: Promise<void>;
  readonly raw: string[] = [];
  closeInfo: Closed | undefined;

  constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() };
        for (const w of this.waiters) w.reject(new Error(`socket closed ${code} ${reason.toString()}`));
        this.waiters = [];
        resolve(this.closeInfo);
      });
    });
    this.opened = new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.on('error', () => {});
    ws.on('message', (data) => {
      const text = data.toString();
      this.raw.push(text);
      const frame = JSON.parse(text) as Frame;
      const index = this.waiters.findIndex((w) => w.match(frame));
      if (index >= 0) {
        const [waiter] = this.waiters.splice(index, 1);
        waiter?.resolve(frame);
      } else this.frames.push(frame);
    });
  }

  static connect(server: Pick<TestServer, 'port'>, query = '?v=1&encoding=json', headers: Record<string, string> = {}) {
    return new GatewayClient(new WebSocket(`ws://127.0.0.1:${server.port}/gateway${query}`, { headers }));
  }

  /** The next frame matching `match` (already received ones first). */
  next(match: (f: Frame) => boolean = () => true, timeoutMs = 5000): Promise<Frame> {
    const index = this.frames.findIndex(match);
    if (index >= 0) return Promise.resolve(this.frames.splice(index, 1)[0] as Frame);
    if (this.closeInfo) return Promise.reject(new Error(`socket closed ${this.closeInfo.code}`));
    return new Promise((resolve, reject) => {
      const waiter = { match, resolve, reject };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error('timed out waiting for a frame'));
      }, timeoutMs);
      waiter.resolve = (f) => {
        clearTimeout(timer);
        resolve(f);
      };
      waiter.reject = (e) => {
        clearTimeout(timer);
        reject(e);
      };
      this.waiters.push(waiter);
    });
  }

  dispatch(event: string, timeoutMs = 5000): Promise<Frame> {
    return this.next((f) => f.op === 0 && f.t === event, timeoutMs);
  }

  /** Frames received and not yet taken. */
  pending(): Frame[] {
    return [...this.frames];
  }

  /** True when no frame matching `match` arrives within `ms`. */
  async nothing(match: (f: Frame) => boolean, ms = 300): Promise<boolean> {
    try {
      await this.next(match, ms);
      return false;
    } catch (error) {
      return (error as Error).message === 'timed out waiting for a frame';
    }
  }

  send(payload: unknown): void {
    this.ws.send(typeof payload === 'string' ? payload : JSON.stringify(payload));
  }

  async hello(): Promise<Frame> {
    return this.next((f) => f.op === 10);
  }

  identify(token: string, extra: Record<string, unknown> = {}): void {
    this.send({ op: 2, d: { token, properties: { os: 'linux', browser: 'test', device: 'test' }, ...extra } });
  }

  /** Hello → Identify → READY. */
  async ready(token: string, extra: Record<string, unknown> = {}): Promise<Frame> {
    await this.hello();
    this.identify(token, extra);
    return this.dispatch('READY');
  }

  close(code = 4100): Promise<Closed> {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(code);
    return this.closed;
  }

  terminate(): Promise<Closed> {
    this.ws.terminate();
    return this.closed;
  }
}

export async function readyClient(
  server: Pick<TestServer, 'port'>,
  token: string,
): Promise<{ client: GatewayClient; ready: Frame }> {
  const client = GatewayClient.connect(server);
  const ready = await client.ready(token);
  return { client, ready };
}
