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

  constructor(
    private readonly voice: VoiceService,
    private readonly registry: SessionRegistry,
    private readonly log: Logger,
  ) {}

  request(session: GatewaySession, request: VoiceStateRequest): void {
    // Not a guild of this session: ignored, as a refusal would be.
    if (!session.guildIds.has(request.guildId)) return;
    this.enqueue(session.id, () => this.apply(session, request));
  }

  /** A frame for one session from any process (a moderator's move mints a new token for the moved session). */
  onSessionMessage(message: VoiceSessionMessage): void {
    this.registry.get(message.sessionId)?.deliver(dispatchPrefix(message.event, message.payload));
  }

  sessionEnded(session: GatewaySession): void {
    const guilds = this.joined.get(session.id);
    if (!guilds) return;
    this.joined.delete(session.id);
    this.enqueue(session.id, async () => {
      await this.voice.leaveSession(session.id, session.userId, guilds);
      this.queues.delete(session.id);
    });
  }

  private async apply(session: GatewaySession, request: VoiceStateRequest): Promise<void> {
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
