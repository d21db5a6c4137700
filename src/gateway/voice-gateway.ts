import type { CallService } from '../domains/voice/call-service.ts';
import type { VoiceService, VoiceSessionMessage, VoiceStateRequest } from '../domains/voice/voice-service.ts';
import type { Logger } from '../platform/log.ts';
import { dispatchPrefix } from './protocol.ts';
import type { GatewaySession, SessionRegistry } from './sessions.ts';

/**
 * The gateway's side of voice: op 4 from a session (one at a time per session, so a quick join-then-leave lands
 * in order), VOICE_SERVER_UPDATE to that session alone, and leaving every voice channel when a session ends.
 */
export class VoiceGateway {
  private readonly queues = new Map<string, Promise<void>>();
  /** Guilds where each local session joined voice; a session that ends leaves them. */
  private readonly joined = new Map<string, Set<string>>();
  /** The DM channel whose call each local session is in (one call at a time per session, as in Discord). */
  private readonly inCall = new Map<string, string>();

  constructor(
    private readonly voice: VoiceService,
    private readonly calls: CallService,
    private readonly registry: SessionRegistry,
    private readonly log: Logger,
  ) {}

  request(session: GatewaySession, request: VoiceStateRequest): void {
    if (request.guildId === null) {
      this.enqueue(session.id, () => this.applyCall(session, request));
      return;
    }
    // Not a guild of this session: ignored, as a refusal would be.
    if (!session.guildIds.has(request.guildId)) return;
    const guildRequest = { ...request, guildId: request.guildId };
    this.enqueue(session.id, () => this.apply(session, guildRequest));
  }

  /** A frame for one session from any process (a moderator's move mints a new token for the moved session). */
  onSessionMessage(message: VoiceSessionMessage): void {
    this.registry.get(message.sessionId)?.deliver(dispatchPrefix(message.event, message.payload));
  }

  sessionEnded(session: GatewaySession): void {
    if (!this.joined.has(session.id) && !this.inCall.has(session.id) && !this.queues.has(session.id)) return;
    // Queued behind any op 4 of this session still being applied: a join whose VOICE_STATE_UPDATE has gone out
    // but whose bookkeeping has not finished is left too (a socket closed right after joining).
    this.enqueue(session.id, async () => {
      const guilds = this.joined.get(session.id);
      this.joined.delete(session.id);
      if (guilds && guilds.size > 0) await this.voice.leaveSession(session.id, session.userId, guilds);
      const call = this.inCall.get(session.id);
      this.inCall.delete(session.id);
      if (call) await this.calls.leave(call, session.userId, session.id);
      this.queues.delete(session.id);
    });
  }

  /** Op 4 with `guild_id: null`: join a DM call (leaving this session's other call), or hang up. */
  private async applyCall(session: GatewaySession, request: VoiceStateRequest): Promise<void> {
    if (this.registry.get(session.id) !== session) return;
    const current = this.inCall.get(session.id);
    if (current && current !== request.channelId) {
      this.inCall.delete(session.id);
      await this.calls.leave(current, session.userId, session.id);
    }
    if (request.channelId === null) return;
    const outcome = await this.calls.join(session.id, session.userId, { ...request, channelId: request.channelId });
    if (!outcome.ok) return;
    this.inCall.set(session.id, request.channelId);
    if (outcome.server) session.deliver(dispatchPrefix('VOICE_SERVER_UPDATE', outcome.server));
  }

  private async apply(session: GatewaySession, request: VoiceStateRequest & { guildId: string }): Promise<void> {
    if (this.registry.get(session.id) !== session) return;
    const outcome = await this.voice.update(session.id, session.userId, request);
    if (!outcome.ok) return;
    let guilds = this.joined.get(session.id);
    if (request.channelId !== null) {
      if (!guilds) {
        guilds = new Set();
        this.joined.set(session.id, guilds);
      }
      guilds.add(request.guildId);
    } else guilds?.delete(request.guildId);
    if (outcome.server) session.deliver(dispatchPrefix('VOICE_SERVER_UPDATE', outcome.server));
  }

  private enqueue(sessionId: string, work: () => Promise<void>): void {
    const previous = this.queues.get(sessionId) ?? Promise.resolve();
    const next = previous
      .then(work)
      .catch((error) => this.log.error('voice state update failed', { error: (error as Error).message }));
    this.queues.set(sessionId, next);
    void next.then(() => {
      if (this.queues.get(sessionId) === next && !this.registry.get(sessionId)) this.queues.delete(sessionId);
    });
  }
}
