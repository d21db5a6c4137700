/**
 * Fan-out of events between processes: gateway dispatches, cache invalidation, session revocation.
 * The in-process bus delivers synchronously to local subscribers; the Redis bus also reaches other processes.
 */
/**
 * Every topic of the bus and the type of its messages. The module that owns a topic adds it here by declaration
 * merging next to its constant (`declare module '…/event-bus.ts' { interface BusTopics { 'chat.invalidate':
 * ChatInvalidation } }`), so a publish or a subscription with the wrong message type, or to a topic nobody owns,
 * does not compile; the platform layer never imports the domains that own the topics.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in the modules that own topics
export interface BusTopics {}

/** A topic some module declared in `BusTopics`. */
export type BusTopic = keyof BusTopics & string;

export interface EventBus {
  /** True when other processes share the bus (Redis): a gateway session may then live on another node. */
  readonly distributed: boolean;
  /**
   * `shardKey` (a guild id) lets a sharded bus carry the message on that key's shard (on a Redis cluster,
   * docs/deployment.md#redis-cluster): messages with the same key keep their order; messages with different
   * keys, or with a key and without one, may arrive at another process in an order other than published.
   */
  publish<K extends BusTopic>(topic: K, message: BusTopics[K], shardKey?: string): Promise<void>;
  subscribe<K extends BusTopic>(topic: K, handler: BusHandler<BusTopics[K]>): () => void;
  /**
   * The last message of `topic` this process has seen from each publisher (its own included), by number.
   * Each publisher numbers its messages per topic and every process receives one publisher's messages in
   * order, so another process can tell exactly which messages came after this point (the gateway's
   * cross-node resume, docs/gateway.md#resume).
   */
  position(topic: BusTopic): Record<string, number>;
  /**
   * Runs `handler` when messages of `topic` may have been lost on the way to this process: a publisher's
   * numbers skipped one (`sequence`), or the connection to the bus was re-established (`reconnect`, every
   * subscribed topic). Whatever this process derived from the topic is stale then (docs/gateway.md#across-nodes).
   * The in-process bus never loses a message.
   */
  onGap(topic: BusTopic, handler: GapHandler): () => void;
  close(): Promise<void>;
}

/** Messages of a topic that did not arrive: from `origin`, numbers `from` to `to` (a sequence gap), or unknown. */
export type BusGap =
  | { topic: string; reason: 'sequence'; origin: string; from: number; to: number }
  | { topic: string; reason: 'reconnect' };

export type GapHandler = (gap: BusGap) => void;

/** Who published a message and its number among that publisher's messages on the topic. */
export interface BusMark {
  origin: string;
  n: number;
}

export type BusHandler<T> = (message: T, mark: BusMark) => void;

/** Per-topic numbering of this process's messages and the last number seen from every other publisher. */
export class BusPositions {
  /** Topic → this process's stream (itself, or itself on one shard) → the last number it gave. */
  private readonly own = new Map<string, Map<string, number>>();
  private readonly seen = new Map<string, Map<string, number>>();
  /**
   * Per topic, the publishers whose messages arrived without a break since the last (re)connection: only
   * their next number can reveal a gap (a first message from a publisher, or the first after a reconnect,
   * which is reported as a gap of its own, cannot).
   */
  private readonly continuous = new Map<string, Set<string>>();

  constructor(readonly origin: string) {}

  /**
   * Numbers this process's next message of `topic`. A sharded bus numbers each shard apart (`stream`): only
   * messages of one shard travel one ordered path. The mark's origin then names the shard too
   * (`streamOrigin`), so positions and gaps stay exact per ordered stream.
   */
  next(topic: string, stream?: string): BusMark {
    const origin = streamOrigin(this.origin, stream);
    let own = this.own.get(topic);
    if (!own) {
      own = new Map();
      this.own.set(topic, own);
    }
    const n = (own.get(origin) ?? 0) + 1;
    own.set(origin, n);
    return { origin, n };
  }

  /** Records a received message; returns the numbers skipped before it, when some were. */
  received(topic: string, mark: BusMark): { from: number; to: number } | undefined {
    let byOrigin = this.seen.get(topic);
    if (!byOrigin) {
      byOrigin = new Map();
      this.seen.set(topic, byOrigin);
    }
    let continuous = this.continuous.get(topic);
    if (!continuous) {
      continuous = new Set();
      this.continuous.set(topic, continuous);
    }
    const last = byOrigin.get(mark.origin);
    byOrigin.set(mark.origin, Math.max(mark.n, last ?? 0));
    const known = continuous.has(mark.origin);
    continuous.add(mark.origin);
    if (known && last !== undefined && mark.n > last + 1) return { from: last + 1, to: mark.n - 1 };
    return undefined;
  }

  /**
   * The connection was re-established (or, with `topic`, the topic was unsubscribed): continuity with every
   * publisher starts again at its next message.
   */
  resync(topic?: string): void {
    if (topic === undefined) this.continuous.clear();
    else this.continuous.delete(topic);
  }

  position(topic: string): Record<string, number> {
    const out: Record<string, number> = Object.fromEntries(this.seen.get(topic) ?? []);
    out[this.origin] = 0;
    for (const [origin, n] of this.own.get(topic) ?? []) out[origin] = n;
    return out;
  }
}

/** The origin of one publisher's messages on one shard (the publisher itself on an unsharded bus). */
export function streamOrigin(origin: string, stream: string | undefined): string {
  return stream === undefined ? origin : `${origin}/${stream}`;
}

/** True when the message marked `mark` came after `position` (it was not seen there). */
export function isAfter(mark: BusMark, position: Record<string, number>): boolean {
  return mark.n > (position[mark.origin] ?? 0);
}

export class LocalSubscribers {
  private readonly handlers = new Map<string, Set<BusHandler<unknown>>>();
  private readonly gapHandlers = new Map<string, Set<GapHandler>>();

  addGap(topic: string, handler: GapHandler): () => void {
    let set = this.gapHandlers.get(topic);
    if (!set) {
      set = new Set();
      this.gapHandlers.set(topic, set);
    }
    set.add(handler);
    return () => set.delete(handler);
  }

  gap(gap: BusGap): void {
    for (const handler of this.gapHandlers.get(gap.topic) ?? []) {
      try {
        handler(gap);
      } catch {
        // One failing reaction must not stop the others.
      }
    }
  }

  /** Every topic something listens to (messages or gaps). */
  gapTopics(): string[] {
    return [...new Set([...this.handlers.keys(), ...this.gapHandlers.keys()])];
  }

  add<T>(topic: string, handler: BusHandler<T>): () => void {
    let set = this.handlers.get(topic);
    if (!set) {
      set = new Set();
      this.handlers.set(topic, set);
    }
    set.add(handler as BusHandler<unknown>);
    return () => set.delete(handler as BusHandler<unknown>);
  }

  deliver(topic: string, message: unknown, mark: BusMark): void {
    const set = this.handlers.get(topic);
    if (!set) return;
    for (const handler of set) {
      try {
        handler(message, mark);
      } catch {
        // A failing subscriber must not stop delivery to the others.
      }
    }
  }

  topics(): string[] {
    return [...this.handlers.keys()];
  }
}

export class InProcessEventBus implements EventBus {
  readonly distributed = false;
  private readonly subscribers = new LocalSubscribers();
  private readonly positions = new BusPositions('local');

  async publish<T>(topic: string, message: T): Promise<void> {
    this.subscribers.deliver(topic, message, this.positions.next(topic));
  }

  subscribe<T>(topic: string, handler: BusHandler<T>): () => void {
    return this.subscribers.add(topic, handler);
  }

  position(topic: string): Record<string, number> {
    return this.positions.position(topic);
  }

  onGap(topic: string, handler: GapHandler): () => void {
    return this.subscribers.addGap(topic, handler);
  }

  async close(): Promise<void> {}
}
