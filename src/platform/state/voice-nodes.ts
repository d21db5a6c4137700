/**
 * Voice nodes and room placement, shared by every process (docs/voice.md#the-voice-role). A process with the
 * `voice` role announces itself with a heartbeat; an announcement that is not renewed within its TTL is gone,
 * and the node with it. A room (a guild voice channel or a DM call) is assigned to one node; gateways place new
 * rooms on the least-loaded live node and move a dead node's rooms.
 */
export interface VoiceNodeAnnouncement {
  id: string;
  /** The signalling WebSocket URL clients are sent to (VOICE_SERVER_UPDATE `endpoint`). */
  endpoint: string;
  /** Rooms with at least one connected member on this node. */
  rooms: number;
  /** Connected members on this node. */
  participants: number;
}

/**
 * A room's assignment. `at` changes at every placement (unix ms), so a compare-and-set on the whole record
 * notices a placement that happened in between.
 */
export interface RoomAssignment {
  node: string;
  at: number;
}

export interface VoiceNodeStore {
  /** Announces (or renews) a node for `ttlMs`. */
  announce(node: VoiceNodeAnnouncement, ttlMs: number): Promise<void>;
  /** Withdraws a node at once (a clean shutdown). */
  withdraw(nodeId: string): Promise<void>;
  /** The nodes whose announcement is alive. */
  liveNodes(): Promise<VoiceNodeAnnouncement[]>;
  /**
   * Places a room: keeps its node when that node is in `liveIds`, else assigns `candidate`. Atomic, so two
   * joins racing for a new room land on one node. Returns the assignment now in force and, when it replaced
   * another node's (a dead one), that one.
   */
  place(
    roomKey: string,
    candidate: string,
    liveIds: readonly string[],
    at: number,
  ): Promise<{ assignment: RoomAssignment; previous: RoomAssignment | undefined }>;
  /** Every room assignment. */
  assignments(): Promise<Map<string, RoomAssignment>>;
  /** The assignments of these rooms, in order (undefined: not assigned). */
  assignmentsOf(roomKeys: readonly string[]): Promise<(RoomAssignment | undefined)[]>;
  /** Replaces `expected` by `next` (or deletes it when `next` is null) only if it is still in force; true if so. */
  reassign(roomKey: string, expected: RoomAssignment, next: RoomAssignment | null): Promise<boolean>;
  /** Clears everything (test harness). */
  reset(): Promise<void>;
}

export class InProcessVoiceNodeStore implements VoiceNodeStore {
  private readonly nodes = new Map<string, { node: VoiceNodeAnnouncement; expiresAt: number }>();
  /** One per room with a member in voice (assignments of empty rooms are collected by the placement sweep). */
  private readonly rooms = new Map<string, RoomAssignment>();

  async announce(node: VoiceNodeAnnouncement, ttlMs: number): Promise<void> {
    this.nodes.set(node.id, { node: { ...node }, expiresAt: Date.now() + ttlMs });
  }

  async withdraw(nodeId: string): Promise<void> {
    this.nodes.delete(nodeId);
  }

  async liveNodes(): Promise<VoiceNodeAnnouncement[]> {
    const now = Date.now();
    const live: VoiceNodeAnnouncement[] = [];
    for (const [id, entry] of this.nodes) {
      if (entry.expiresAt <= now) this.nodes.delete(id);
      else live.push({ ...entry.node });
    }
    return live;
  }

  async place(
    roomKey: string,
    candidate: string,
    liveIds: readonly string[],
    at: number,
  ): Promise<{ assignment: RoomAssignment; previous: RoomAssignment | undefined }> {
    const current = this.rooms.get(roomKey);
    const next = { node: current && liveIds.includes(current.node) ? current.node : candidate, at };
    this.rooms.set(roomKey, next);
    return { assignment: { ...next }, previous: current && current.node !== next.node ? { ...current } : undefined };
  }

  async assignments(): Promise<Map<string, RoomAssignment>> {
    return new Map([...this.rooms].map(([key, value]) => [key, { ...value }]));
  }

  async assignmentsOf(roomKeys: readonly string[]): Promise<(RoomAssignment | undefined)[]> {
    return roomKeys.map((key) => {
      const assignment = this.rooms.get(key);
      return assignment ? { ...assignment } : undefined;
    });
  }

  async reassign(roomKey: string, expected: RoomAssignment, next: RoomAssignment | null): Promise<boolean> {
    const current = this.rooms.get(roomKey);
    if (!current || current.node !== expected.node || current.at !== expected.at) return false;
    if (next) this.rooms.set(roomKey, { ...next });
    else this.rooms.delete(roomKey);
    return true;
  }

  async reset(): Promise<void> {
    this.rooms.clear();
  }
}
