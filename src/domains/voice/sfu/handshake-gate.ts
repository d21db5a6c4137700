/**
 * Join admission (docs/voice.md#join-admission): at most `limit` new peer connections negotiate (offer, answer,
 * ICE checks, DTLS handshake) at once in this process; the others wait their turn in arrival order. A DTLS
 * handshake is a burst of public-key work on the one event loop that also forwards every packet, so a wave of
 * joins, unbounded, starves forwarding to the members already connected. A small room never waits: the queue
 * only forms while `limit` handshakes are under way.
 */
export class HandshakeGate {
  private active = 0;
  private refusedCount = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly limit: number,
    /** A slot is given back after this long even if the handshake never finished (a client that went silent). */
    private readonly holdLimitMs: number,
  ) {}

  /** Handshakes under way / waiting for a slot (the status line and tests read them). */
  get inProgress(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** DTLS handshakes aborted: the client's CertificateVerify or Finished did not verify (docs/voice.md#join-admission). */
  get refused(): number {
    return this.refusedCount;
  }

  countRefused(): void {
    this.refusedCount++;
  }

  /**
   * Waits for a slot; resolves with its release, which is idempotent and happens at the latest after
   * `holdLimitMs`. A member that left while waiting releases as soon as its turn comes.
   */
  async acquire(): Promise<() => void> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` does not change.
      if (next) next();
      else this.active--;
    };
    const timer = setTimeout(release, this.holdLimitMs);
    return release;
  }
}

/** Concurrent handshakes per process: enough that a handful of people joining at once never queue. */
export const HANDSHAKE_LIMIT = 8;
/** A handshake that has not finished after this long gives its slot back (ICE gives up on its own later). */
export const HANDSHAKE_HOLD_LIMIT_MS = 5000;
/**
 * A member whose media is not connected this long after the server's first offer (the answer, ICE and the DTLS
 * handshake) is removed from the room and the voice channel, as at a leave (docs/voice.md#join-admission). Above
 * the 15 s the server waits for an answer, with room for ICE and DTLS after a late one.
 */
export const MEDIA_CONNECT_LIMIT_MS = 20_000;
