import { randomBytes } from 'node:crypto';
import { DISPATCH_TOPIC } from '../domains/events/dispatch.ts';
import type { Logger } from '../platform/log.ts';
import type { EventBus } from '../platform/state/event-bus.ts';
import type { Fanout } from './fanout.ts';
import type { HandedOverPresence, PresenceTracker } from './presence.ts';
import { CLOSE } from './protocol.ts';
import type { GatewaySession, SessionCredential, SessionRegistry, SessionState } from './sessions.ts';

declare module '../platform/state/event-bus.ts' {
  interface BusTopics {
    'gateway.handoff.request': HandoffRequest;
    'gateway.handoff.reply': HandoffReply;
  }
}

export const HANDOFF_REQUEST_TOPIC = 'gateway.handoff.request';
export const HANDOFF_REPLY_TOPIC = 'gateway.handoff.reply';

/** What the resuming client proved, as the process that holds the session checks it. */
export interface ResumeClaim {
  userId: string;
  credential: SessionCredential;
  /** Suspicious-activity flags apply to the account now. */
  restrictedNow: boolean;
  seq: number;
  /** The session would move to another process. */
  moving: boolean;
}

export type ResumeVerdict =
  | { outcome: 'ok' }
  /** Op 9; `end` = the session is gone for good (expired, restricted since, replay no longer reaches back). */
  | { outcome: 'invalid'; end: boolean }
  /** Close 4004: the token is not this session's. */
  | { outcome: 'foreign' }
  /** Close 4007. */
  | { outcome: 'sequence' };

/** The checks of a resume (docs/gateway.md#resume), the same wherever the session lives. */
export function checkResume(
  session: GatewaySession,
  claim: ResumeClaim,
  now: number,
  windowMs: number,
  isExpired: (session: GatewaySession, now: number, windowMs: number) => boolean,
): ResumeVerdict {
  if (session.starting) return { outcome: 'invalid', end: false };
  if (isExpired(session, now, windowMs)) return { outcome: 'invalid', end: true };
  // Dispatches it should have had were lost: the client must identify and read everything afresh.
  if (session.lost) return { outcome: 'invalid', end: true };
  if (!sameCredential(session.credential, claim.credential) || session.userId !== claim.userId)
    return { outcome: 'foreign' };
  // Flags set while the socket was away end the full session: the client identifies again, restricted.
  if (!session.restricted && claim.restrictedNow) return { outcome: 'invalid', end: true };
  // A restricted session whose flags were cleared resumes where it is, but cannot move: the taking process
  // collected as the account is now, so the client identifies again.
  if (claim.moving && session.restricted !== claim.restrictedNow) return { outcome: 'invalid', end: false };
  if (claim.seq > session.seq || claim.seq < session.acknowledged) return { outcome: 'sequence' };
  if (!session.canReplayAfter(claim.seq)) return { outcome: 'invalid', end: true };
  return { outcome: 'ok' };
}

function sameCredential(a: SessionCredential, b: SessionCredential): boolean {
  if (a.kind === 'session') return b.kind === 'session' && a.sessionIdHash === b.sessionIdHash;
  return b.kind === 'bot' && a.applicationId === b.applicationId;
}

interface HandoffRequest {
  requestId: string;
  sessionId: string;
  claim: ResumeClaim;
}

export type HandoffReply =
  | {
      requestId: string;
      outcome: 'moved';
      state: SessionState;
      guildIds: string[];
      /** The holder's bus position on the dispatch topic when the request reached it. */
      position: Record<string, number>;
      presence: HandedOverPresence | undefined;
    }
  | { requestId: string; outcome: 'invalid' | 'foreign' | 'sequence' };

/**
 * Resume on any node (docs/gateway.md#resume). A process asked to resume a session it does not hold starts
 * collecting the account's dispatches in a not-yet-started session, then asks over the bus; the process that
 * holds the session checks the claim, waits until every dispatch it received before the request has reached
 * the session, and hands over its numbering, replay buffer, guilds and presence with its bus position. The
 * taker keeps only the collected dispatches the holder had not seen, so nothing is lost or sent twice. Bus
 * order makes this exact: each publisher's messages reach every process in order, and the request is
 * published after collection began.
 */
export class SessionHandoff {
  private readonly waiting = new Map<string, (reply: HandoffReply) => void>();
  private readonly unsubscribe: (() => void)[];

  constructor(
    private readonly deps: {
      bus: EventBus;
      log: Logger;
      clock: { now(): number };
      resumeWindowMs: () => number;
    },
    private readonly registry: SessionRegistry,
    private readonly fanout: Fanout,
    private readonly presences: PresenceTracker,
    private readonly timeoutMs = 1500,
  ) {
    this.unsubscribe = [
      deps.bus.subscribe(HANDOFF_REQUEST_TOPIC, (request) => this.onRequest(request)),
      deps.bus.subscribe(HANDOFF_REPLY_TOPIC, (reply) => this.waiting.get(reply.requestId)?.(reply)),
    ];
  }

  get enabled(): boolean {
    return this.deps.bus.distributed;
  }

  /** Asks the other processes for the session; `undefined` when none holds it (op 9). */
  request(sessionId: string, claim: ResumeClaim): Promise<HandoffReply | undefined> {
    const requestId = randomBytes(12).toString('base64url');
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(requestId);
        resolve(undefined);
      }, this.timeoutMs);
      this.waiting.set(requestId, (reply) => {
        clearTimeout(timer);
        this.waiting.delete(requestId);
        resolve(reply);
      });
      this.deps.bus
        .publish(HANDOFF_REQUEST_TOPIC, { requestId, sessionId, claim })
        .catch((error) => this.deps.log.error('gateway hand-off request failed', { error: (error as Error).message }));
    });
  }

  close(): void {
    for (const off of this.unsubscribe) off();
  }

  private onRequest(request: HandoffRequest): void {
    // Our own request reaches us too (local delivery), and finds the session collecting for it.
    if (this.waiting.has(request.requestId)) return;
    const session = this.registry.get(request.sessionId);
    if (!session) return;
    // Taken when the request arrives: what came before it on the bus is what the session has (or will have,
    // once the queue ahead of the barrier is delivered).
    const position = this.deps.bus.position(DISPATCH_TOPIC);
    this.fanout.whenDelivered(() => this.answer(session, request, position));
  }

  private answer(session: GatewaySession, request: HandoffRequest, position: Record<string, number>): void {
    if (this.registry.get(session.id) !== session) return;
    const verdict = checkResume(
      session,
      request.claim,
      this.deps.clock.now(),
      this.deps.resumeWindowMs(),
      (s, now, windowMs) => this.registry.isExpired(s, now, windowMs),
    );
    const { requestId } = request;
    let reply: HandoffReply;
    if (verdict.outcome === 'ok') {
      const state = session.snapshot();
      const guildIds = [...session.guildIds];
      const presence = this.presences.handOver(session);
      // The old socket (a half-open one, typically) must not detach the session or show it offline here.
      const socket = session.socket;
      session.socket = undefined;
      this.registry.remove(session, true);
      socket?.closeWith(CLOSE.SESSION_UNAVAILABLE.code, CLOSE.SESSION_UNAVAILABLE.reason);
      reply = { requestId, outcome: 'moved', state, guildIds, position, presence };
    } else {
      if (verdict.outcome === 'invalid' && verdict.end) this.registry.remove(session);
      reply = { requestId, outcome: verdict.outcome };
    }
    this.deps.bus
      .publish(HANDOFF_REPLY_TOPIC, reply)
      .catch((error) => this.deps.log.error('gateway hand-off reply failed', { error: (error as Error).message }));
  }
}
