/**
 * Fan-out of events between processes: gateway dispatches, cache invalidation, session revocation.
 * The in-process bus delivers synchronously to local subscribers; the Redis bus also reaches other processes.
 */
export interface EventBus {
  publish<T>(topic: string, message: T): Promise<void>;
  subscribe<T>(topic: string, handler: (message: T) => void): () => void;
  close(): Promise<void>;
}

export class LocalSubscribers {
  private readonly handlers = new Map<string, Set<(message: unknown) => void>>();

  add<T>(topic: string, handler: (message: T) => void): () => void {
    let set = this.handlers.get(topic);
    if (!set) {
      set = new Set();
      this.handlers.set(topic, set);
    }
    set.add(handler as (message: unknown) => void);
    return () => set.delete(handler as (message: unknown) => void);
  }

  deliver(topic: string, message: unknown): void {
    const set = this.handlers.get(topic);
    if (!set) return;
    for (const handler of set) {
      try {
        handler(message);
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
  private readonly subscribers = new LocalSubscribers();

  async publish<T>(topic: string, message: T): Promise<void> {
    this.subscribers.deliver(topic, message);
  }

  subscribe<T>(topic: string, handler: (message: T) => void): () => void {
    return this.subscribers.add(topic, handler);
  }

  async close(): Promise<void> {}
}
