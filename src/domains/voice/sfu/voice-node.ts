import { randomBytes } from 'node:crypto';
import type { Logger } from '../../../platform/log.ts';
import { PeriodicTask } from '../../../platform/periodic-task.ts';
import type { VoiceNodeAnnouncement, VoiceNodeStore } from '../../../platform/state/voice-nodes.ts';

export interface VoiceNodeOptions {
  nodes: VoiceNodeStore;
  /** The public signalling URL (HEARTH_VOICE_ENDPOINT, else derived from the public URL when announced). */
  endpoint: () => string;
  /** How long an announcement lives; it is renewed every third of it. */
  ttlMs: number;
  /** The SFU's current load. */
  load: () => { rooms: number; participants: number };
  /** The SFU's rooms with someone connected (room keys), and closing one's members here. */
  rooms: () => string[];
  evict: (roomKey: string) => number;
  log: Logger;
}

/**
 * A process with the `voice` role (docs/voice.md#the-voice-role): announces its endpoint and load in the
 * shared store every third of the TTL, so gateways can place rooms on it, and withdraws at shutdown.
 */
export class VoiceNode {
  readonly id = `voice-${randomBytes(6).toString('hex')}`;
  private readonly heartbeat: PeriodicTask;
  private started = false;

  constructor(private readonly options: VoiceNodeOptions) {
    this.heartbeat = new PeriodicTask({
      intervalMs: Math.max(500, Math.floor(options.ttlMs / 3)),
      run: () => this.announce(),
      onError: (error) => options.log.error('voice node heartbeat failed', { error: (error as Error).message }),
    });
  }

  /** What this node announces now. */
  current(): VoiceNodeAnnouncement {
    return { id: this.id, endpoint: this.options.endpoint(), ...this.options.load() };
  }

  /** Announces at once (the process is listening), then on every heartbeat. */
  async start(): Promise<void> {
    await this.announce();
    this.started = true;
    this.heartbeat.start();
    this.options.log.info('voice node announced', { node: this.id, endpoint: this.options.endpoint() });
  }

  async stop(): Promise<void> {
    await this.heartbeat.stop();
    if (this.started) await this.options.nodes.withdraw(this.id).catch(() => {});
  }

  /**
   * Renews the announcement, then closes the members of any room here that is now assigned to another node: a
   * node that stalled past its TTL was taken for dead and its rooms moved (docs/voice.md#failover).
   */
  private async announce(): Promise<void> {
    const { nodes } = this.options;
    await nodes.announce(this.current(), this.options.ttlMs);
    const keys = this.options.rooms();
    if (keys.length === 0) return;
    const held = await nodes.assignmentsOf(keys);
    keys.forEach((key, index) => {
      const assignment = held[index];
      if (!assignment || assignment.node === this.id) return;
      const evicted = this.options.evict(key);
      this.options.log.warn('voice room moved to another node; closed its members here', {
        room: key,
        to: assignment.node,
        members: evicted,
      });
    });
  }
}
