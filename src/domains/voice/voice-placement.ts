import type { Config } from '../../config/config.ts';
import type { Clock } from '../../platform/clock.ts';
import { digest, randomBase62 } from '../../platform/crypto/tokens.ts';
import type { Logger } from '../../platform/log.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import type { RoomAssignment, VoiceNodeAnnouncement, VoiceNodeStore } from '../../platform/state/voice-nodes.ts';
import type { StoredVoiceState, VoiceStateStore } from '../../platform/state/voice-states.ts';
import type { GatewayEvents } from '../events/catalogue.ts';
import type { VoiceServerView } from './voice-views.ts';

declare module '../../platform/state/event-bus.ts' {
  interface BusTopics {
    'voice.session': VoiceSessionMessage;
  }
}

/** Bus topic carrying a frame for one gateway session (VOICE_SERVER_UPDATE after a move or a failover). */
export const VOICE_SESSION_TOPIC = 'voice.session';

export interface VoiceSessionMessage {
  sessionId: string;
  event: 'VOICE_SERVER_UPDATE';
  payload: GatewayEvents['VOICE_SERVER_UPDATE'];
}

/** How long the VOICE_SERVER_UPDATE token opens the media endpoint. */
export const VOICE_GRANT_TTL_MS = 120_000;

/** Assignments of rooms nobody is in any more are collected at most this often per process. */
const EMPTY_ROOM_SWEEP_MS = 30_000;

/** The room of a guild voice channel or of a DM call (`call:<channel id>`); the shared key of its assignment. */
export function voiceRoomKey(guildId: string | null, channelId: string): string {
  return `${guildId ?? 'call'}:${channelId}`;
}

function parseRoomKey(key: string): { scope: string; channelId: string } {
  const [first = '', channelId = ''] = key.split(':');
  return { scope: first === 'call' ? channelId : first, channelId };
}

/** The fallback endpoint when no voice node is announced: the signalling WebSocket on the public origin. */
export function voiceEndpoint(config: Pick<Config, 'publicUrl'>): string {
  return `${config.publicUrl.replace(/^http/, 'ws')}/voice`;
}

/** Fewest connected members first, then fewest rooms; the id breaks ties so every gateway agrees. */
function leastLoaded(nodes: readonly VoiceNodeAnnouncement[]): VoiceNodeAnnouncement | undefined {
  return [...nodes].sort((a, b) => a.participants - b.participants || a.rooms - b.rooms || (a.id < b.id ? -1 : 1))[0];
}

export interface VoicePlacementDeps {
  nodes: VoiceNodeStore;
  store: VoiceStateStore;
  bus: EventBus;
  clock: Clock;
  config: Pick<Config, 'publicUrl' | 'testMode'>;
  log: Logger;
  /**
   * This process's own voice node, when it has the `voice` role: always counted as live here, so a
   * single-process deployment never loses its rooms to a late heartbeat.
   */
  localNode?: (() => VoiceNodeAnnouncement | undefined) | undefined;
}

/**
 * Room placement (docs/voice.md#room-placement): a room lives on one voice node; a join is sent to the node
 * already holding the room, else to the least-loaded live node, and the token minted for it is accepted by any
 * node (grants are in the shared store). A node whose announcement expired loses its rooms (docs/voice.md#failover):
 * whoever first notices — the sweep or a join — moves the room and sends every member a fresh VOICE_SERVER_UPDATE.
 */
export class VoicePlacement {
  private lastEmptySweep = 0;
  private warnedNoNode = false;

  constructor(private readonly deps: VoicePlacementDeps) {}

  /** VOICE_SERVER_UPDATE for a state that just joined a room: its node's endpoint and a fresh single-room token. */
  async serverFor(state: StoredVoiceState): Promise<VoiceServerView> {
    const live = await this.liveNodes();
    const candidate = leastLoaded(live);
    if (!candidate) {
      if (!this.warnedNoNode) {
        this.warnedNoNode = true;
        this.deps.log.warn('no voice node is announced: VOICE_SERVER_UPDATE points at the public URL');
      }
      return this.mint(state, voiceEndpoint(this.deps.config));
    }
    const key = voiceRoomKey(state.guild_id, state.channel_id);
    const { assignment, previous } = await this.deps.nodes.place(
      key,
      candidate.id,
      live.map((node) => node.id),
      Date.now(),
    );
    const node = live.find((n) => n.id === assignment.node) ?? candidate;
    // The room was on a node that is gone: the others in it follow this member to the new node.
    if (previous && previous.node !== assignment.node) await this.moved(key, previous, node, state.user_id);
    return this.mint(state, node.endpoint);
  }

  /**
   * Moves every room of a dead node to the least-loaded live one and tells its members; collects the
   * assignments of rooms nobody is in. Every process may run it: a move is a compare-and-set, so one wins.
   * Returns how many rooms moved.
   */
  async sweep(): Promise<number> {
    const assignments = await this.deps.nodes.assignments();
    if (assignments.size === 0) return 0;
    const live = await this.liveNodes();
    const liveIds = new Set(live.map((node) => node.id));
    const now = Date.now();
    const collectEmpty = this.deps.config.testMode || now - this.lastEmptySweep >= EMPTY_ROOM_SWEEP_MS;
    if (collectEmpty) this.lastEmptySweep = now;
    let moved = 0;
    for (const [key, assignment] of assignments) {
      const alive = liveIds.has(assignment.node);
      if (alive && !collectEmpty) continue;
      const members = await this.membersOf(key);
      if (members.length === 0) {
        // A join writes its state before it places the room, and placing rewrites `at`: a join racing this
        // makes the compare-and-set fail.
        await this.deps.nodes.reassign(key, assignment, null);
        continue;
      }
      if (alive) continue;
      const target = leastLoaded(live);
      // No live node: the members stay where they are until one is announced.
      if (!target) continue;
      if (!(await this.deps.nodes.reassign(key, assignment, { node: target.id, at: now }))) continue;
      await this.moved(key, assignment, target);
      moved++;
    }
    return moved;
  }

  private async liveNodes(): Promise<VoiceNodeAnnouncement[]> {
    const local = this.deps.localNode?.();
    const live = (await this.deps.nodes.liveNodes()).filter((node) => node.id !== local?.id);
    // This process's own node as it is now (its endpoint and load), not as last announced.
    if (local) live.push(local);
    return live;
  }

  private async membersOf(key: string): Promise<StoredVoiceState[]> {
    const { scope, channelId } = parseRoomKey(key);
    return (await this.deps.store.ofGuild(scope)).filter((state) => state.channel_id === channelId);
  }

  /** The room left `from`: each member (but `except`) gets a token for `to`, on whichever node holds its session. */
  private async moved(key: string, from: RoomAssignment, to: VoiceNodeAnnouncement, except?: string): Promise<void> {
    const members = (await this.membersOf(key)).filter((state) => state.user_id !== except);
    this.deps.log.warn('voice room moved off a dead node', {
      room: key,
      from: from.node,
      to: to.id,
      members: members.length,
    });
    for (const state of members)
      await this.deps.bus.publish(VOICE_SESSION_TOPIC, {
        sessionId: state.session_id,
        event: 'VOICE_SERVER_UPDATE',
        payload: await this.mint(state, to.endpoint),
      });
  }

  /**
   * `{token, guild_id, endpoint}` for a guild channel, `{token, channel_id, endpoint}` for a DM call; only the
   * token's digest is stored, so any voice node can check it.
   */
  private async mint(state: StoredVoiceState, endpoint: string): Promise<VoiceServerView> {
    const token = randomBase62(40);
    await this.deps.store.putGrant(digest(token), {
      guildId: state.guild_id,
      channelId: state.channel_id,
      userId: state.user_id,
      sessionId: state.session_id,
      expiresAt: this.deps.clock.now() + VOICE_GRANT_TTL_MS,
    });
    return state.guild_id === null
      ? { token, channel_id: state.channel_id, endpoint }
      : { token, guild_id: state.guild_id, endpoint };
  }
}
