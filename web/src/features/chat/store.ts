import type { ChatApi } from '../../api/chat.ts';
import type {
  Channel,
  CommandChoice,
  Component,
  Emoji,
  Guild,
  GuildNotificationSettings,
  GuildSettingsChanges,
  Member,
  Message,
  Reaction,
  Relationship,
  Role,
} from '../../api/chat-types.ts';
import { ChannelType } from '../../api/chat-types.ts';
import type { PartialUser } from '../../api/types.ts';
import type { GatewayHub } from '../../gateway/hub.ts';
import { type ImageSource, userAvatar } from '../../lib/media.ts';
import { channelPermissions, P } from './permissions.ts';
import { prefersDark, readableRoleColor, watchScheme } from './role-color.ts';
import { compareIds, maxId } from './snowflake.ts';

/** A guild as the client keeps it: the guild, its roles and channels by id, its members once loaded. */
/** An entry of settings `guild_folders` (Discord's shape); `id` null: one guild outside any folder. */
export interface GuildFolder {
  id: number | string | null;
  name: string | null;
  color: number | null;
  guild_ids: string[];
}

/** One item of the guild rail. */
export type RailItem =
  | { kind: 'guild'; guild: GuildState }
  | { kind: 'folder'; id: number | string; name: string | null; color: number | null; guilds: GuildState[] };

export interface GuildState {
  guild: Guild;
  roles: Map<string, Role>;
  channelIds: Set<string>;
  members: Map<string, Member>;
  membersLoaded: boolean;
}

/**
 * The loaded window of a channel's history: a bounded run of consecutive messages (docs/web.md#the-history-window).
 * At the present it ends with the channel's newest message and live messages join it; scrolled far back it does
 * not, and live messages only move the channel's last message id until the person comes back to the present.
 */
export interface ChannelHistory {
  items: Message[];
  reachedStart: boolean;
  /** The window ends with the channel's newest message (live messages are appended). */
  atPresent: boolean;
  loading: boolean;
  /** Bumped whenever the window is replaced as a whole: an answer to an older request is then dropped. */
  generation: number;
  /** Bumped when the window is reloaded at the present on request (the list then scrolls to its bottom). */
  presentLoads: number;
  /**
   * Live messages that came while a request that may reach the present was on its way and the window was not
   * at the present: joined to the window if the answer reaches the present (the answer may predate them).
   */
  arrivals: Message[] | null;
}

/** A message being sent: shown greyed until the server's copy (same nonce) replaces it. */
export interface PendingMessage {
  nonce: string;
  content: string;
  failed: boolean;
  progress?: number;
  files?: string[];
}

const PAGE = 50;
/** Messages a channel's window holds at most; beyond it, the end away from the reading direction is dropped. */
export const WINDOW_MAX = 400;
/** What a jump loads around its target (half before, half after). */
const AROUND = 100;
const TYPING_MS = 9000;
/** History windows kept in memory (and caught up after a reconnect). */
const KEPT_WINDOWS = 12;

export interface BotModal {
  id: string;
  channel_id: string;
  custom_id: string;
  title: string;
  components: Component[];
  application: { id: string; name: string };
}

interface PresencePayload {
  /** `{id}`, plus the changed fields when the user changed their name or avatar. */
  user: { id: string } & Partial<PartialUser>;
  status: string;
}

interface ReadyPayload {
  presences?: PresencePayload[];
  notes?: Record<string, string>;
  user_settings?: { guild_positions?: string[]; guild_folders?: GuildFolder[] };
  user: PartialUser;
  guilds: Guild[];
  private_channels: Channel[];
  read_state?: {
    version: number;
    partial: boolean;
    entries: { id: string; last_message_id: string | null; mention_count?: number }[];
  };
  relationships?: Relationship[];
  user_guild_settings?: { version: number; partial: boolean; entries: GuildNotificationSettings[] };
}

/**
 * The chat state of the tab: filled from READY and kept current from dispatches; message history is fetched
 * per channel and caught up after every (re)connection, so a network cut or a server restart neither loses
 * nor duplicates a message (messages are kept by id, sorted by id). Components read it through `useChat`.
 */
export class ChatStore {
  version = 0;
  /** Moves with `version` and also when only a history window changed (`historyChanged`). */
  historyVersion = 0;
  /** Bumped by every change that is not a message, reaction or typing event (names, roles, members…). */
  metaVersion = 0;
  me = '';
  ready = false;
  connected = false;
  readonly guilds = new Map<string, GuildState>();
  readonly channels = new Map<string, Channel>();
  readonly users = new Map<string, PartialUser>();
  readonly history = new Map<string, ChannelHistory>();
  readonly pending = new Map<string, PendingMessage[]>();
  readonly typing = new Map<string, Map<string, number>>();
  readonly relationships = new Map<string, Relationship>();
  /** Last read message per channel (server read states when present, else this browser's memory). */
  readonly readStates = new Map<string, string>();
  readonly mentions = new Map<string, number>();
  /** Known statuses (online, idle, dnd; offline when absent) from READY, guild payloads and PRESENCE_UPDATE. */
  readonly presences = new Map<string, string>();
  /** Private notes about people (READY `notes`, USER_NOTE_UPDATE). */
  readonly notes = new Map<string, string>();
  /**
   * The person's notification settings by guild (READY `user_guild_settings`, USER_GUILD_SETTINGS_UPDATE): kept on
   * the server, so a mute follows the account to every tab and device. The direct conversations' entry (the
   * server's `guild_id` null) is kept under `PRIVATE_SETTINGS` ('@me').
   */
  readonly guildSettings = new Map<string, GuildNotificationSettings>();
  /** The person's own order of guilds (READY `user_settings.guild_positions`, USER_SETTINGS_UPDATE). */
  guildPositions: string[] = [];
  /** The person's folders of guilds (READY `user_settings.guild_folders`, USER_SETTINGS_UPDATE). */
  guildFolders: GuildFolder[] = [];
  /** A bot's form waiting for the person (INTERACTION_MODAL_CREATE), shown as a dialog. */
  modal: BotModal | null = null;
  /**
   * Autocomplete answers (APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE) by the nonce of the request they answer;
   * the gateway names the interaction by id, which INTERACTION_CREATE pairs with the nonce.
   */
  readonly autocompleteChoices = new Map<string, CommandChoice[]>();
  private readonly interactionNonces = new Map<string, string>();
  /** Answers that came before their INTERACTION_CREATE, by interaction id. */
  private readonly earlyChoices = new Map<string, CommandChoice[]>();
  /**
   * Guild channels that went away this session (CHANNEL_DELETE: deleted, or the person lost sight of them), by id,
   * with their names: a view still on one leaves it at once and says why.
   */
  readonly goneChannels = new Map<string, string>();
  /** The channel on screen, which counts as read while the tab is visible. */
  activeChannelId: string | null = null;
  /** Messages from others as they arrive, for the live region and notifications. */
  onIncoming: ((message: Message) => void) | null = null;
  private readonly listeners = new Set<() => void>();
  /** Listeners of history windows only (the message list), told also of every other change. */
  private readonly historyListeners = new Set<() => void>();
  private unsubscribe: (() => void) | undefined;
  /**
   * Large guilds whose member presences this gateway session follows (op 14), oldest first: the server keeps
   * at most 100 per session and forgets the oldest, and so does this set (docs/gateway.md#large-guilds).
   */
  private readonly followedGuilds = new Set<string>();
  /** The guild on screen (its presences are followed again after a new session). */
  private viewedGuildId: string | null = null;
  private typingTimer: number | undefined;
  private stopWatchingScheme: (() => void) | undefined;

  constructor(
    readonly api: ChatApi,
    private readonly hub: GatewayHub,
  ) {}

  start(): void {
    this.unsubscribe = this.hub.subscribe((type, data) => this.dispatch(type, data), { replay: true });
    this.connected = this.hub.connected;
    void this.loadRelationships();
    this.typingTimer = window.setInterval(() => this.expireTyping(), 1000);
    window.addEventListener('pagehide', this.flushAcks);
    // Role colours are adjusted to the theme: a switch of scheme redraws them (and the message rows).
    this.stopWatchingScheme = watchScheme(() => {
      this.metaVersion++;
      this.changed();
    });
  }

  stop(): void {
    window.removeEventListener('pagehide', this.flushAcks);
    this.flushAcks();
    this.unsubscribe?.();
    this.stopWatchingScheme?.();
    window.clearInterval(this.typingTimer);
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = (): number => this.version;

  /** For the message list: told of every change, and of a page of history loaded while scrolling. */
  subscribeHistory = (listener: () => void): (() => void) => {
    this.historyListeners.add(listener);
    return () => this.historyListeners.delete(listener);
  };

  getHistoryVersion = (): number => this.historyVersion;

  changed(): void {
    this.version++;
    this.historyVersion++;
    for (const listener of this.listeners) listener();
    for (const listener of this.historyListeners) listener();
  }

  /**
   * A history window changed and nothing else did (a page loaded while scrolling back or down): only the
   * message list re-renders, not the sidebar, the member list or the guild rail (docs/web.md#the-history-window).
   */
  private historyChanged(): void {
    this.historyVersion++;
    for (const listener of this.historyListeners) listener();
  }

  // ---- reading -------------------------------------------------------------------------------------------

  guildChannels(guildId: string): Channel[] {
    const state = this.guilds.get(guildId);
    if (!state) return [];
    const out: Channel[] = [];
    for (const id of state.channelIds) {
      const channel = this.channels.get(id);
      if (channel && this.canView(channel)) out.push(channel);
    }
    return out.sort((a, b) => (a.position ?? 0) - (b.position ?? 0) || compareIds(a.id, b.id));
  }

  /** Guilds in the person's own order (settings), then the others by when they were joined (id). */
  orderedGuilds(): GuildState[] {
    const rank = new Map(this.guildPositions.map((id, index) => [id, index]));
    return [...this.guilds.values()].sort(
      (a, b) =>
        (rank.get(a.guild.id) ?? Number.MAX_SAFE_INTEGER) - (rank.get(b.guild.id) ?? Number.MAX_SAFE_INTEGER) ||
        compareIds(a.guild.id, b.guild.id),
    );
  }

  /**
   * The rail's items: guilds and folders of guilds (settings `guild_folders`, entries with an id), in the order of
   * `guild_positions` (a folder where its first guild is), then the guilds not placed there by id.
   */
  railItems(): RailItem[] {
    const rank = new Map(this.guildPositions.map((id, index) => [id, index]));
    const placed = new Set<string>();
    const items: RailItem[] = [];
    for (const folder of this.guildFolders) {
      if (folder.id === null || folder.id === undefined) continue;
      const guilds: GuildState[] = [];
      for (const id of folder.guild_ids) {
        const state = this.guilds.get(id);
        if (state && !placed.has(id)) {
          placed.add(id);
          guilds.push(state);
        }
      }
      if (guilds.length)
        items.push({ kind: 'folder', id: folder.id, name: folder.name ?? null, color: folder.color ?? null, guilds });
    }
    for (const guild of this.orderedGuilds()) if (!placed.has(guild.guild.id)) items.push({ kind: 'guild', guild });
    const first = (item: RailItem) => (item.kind === 'guild' ? [item.guild] : item.guilds);
    const key = (item: RailItem) =>
      Math.min(...first(item).map((g) => rank.get(g.guild.id) ?? Number.MAX_SAFE_INTEGER));
    return items.sort(
      (a, b) => key(a) - key(b) || compareIds(first(a)[0]?.guild.id ?? '0', first(b)[0]?.guild.id ?? '0'),
    );
  }

  /**
   * Saves a new rail: `guild_folders` (a guild outside a folder as Discord's clients write it, `{id: null,
   * guild_ids: [id]}`) and the same order as `guild_positions`. Shown at once; the other sessions follow through
   * USER_SETTINGS_UPDATE. Refused, the rail goes back as it was.
   */
  async saveRail(folders: GuildFolder[]): Promise<void> {
    const before = { folders: this.guildFolders, positions: this.guildPositions };
    this.guildFolders = folders;
    this.guildPositions = folders.flatMap((folder) => folder.guild_ids);
    this.changed();
    try {
      await this.api.updateSettings({ guild_positions: this.guildPositions, guild_folders: this.guildFolders });
    } catch (error) {
      // Refused: the rail as it was (unless a later change came meanwhile).
      if (this.guildFolders === folders) {
        this.guildFolders = before.folders;
        this.guildPositions = before.positions;
        this.changed();
      }
      throw error;
    }
  }

  /**
   * Changes the person's notification settings of a guild: shown at once, then as the server answers; the other
   * sessions follow through USER_GUILD_SETTINGS_UPDATE. Refused, they go back as they were.
   */
  async saveGuildSettings(guildId: string, changes: GuildSettingsChanges): Promise<void> {
    // '@me': the direct conversations' entry (PATCH /users/@me/guilds/@me/settings).
    const before = this.guildSettings.get(guildId);
    const shown = mergeGuildSettings(before ?? defaultGuildSettings(guildId), changes);
    this.guildSettings.set(guildId, shown);
    this.changed();
    try {
      this.putGuildSettings(await this.api.updateGuildSettings(guildId, changes));
    } catch (error) {
      if (this.guildSettings.get(guildId) === shown) {
        if (before) this.guildSettings.set(guildId, before);
        else this.guildSettings.delete(guildId);
        this.changed();
      }
      throw error;
    }
    this.changed();
  }

  /** Keeps the newer of two versions (an answer and its event can come in either order). */
  private putGuildSettings(settings: GuildNotificationSettings): void {
    const key = settings.guild_id ?? PRIVATE_SETTINGS;
    const known = this.guildSettings.get(key);
    if (known && known.version > settings.version) return;
    this.guildSettings.set(key, settings);
  }

  privateChannels(): Channel[] {
    return [...this.channels.values()]
      .filter((c) => c.type === ChannelType.DM || c.type === ChannelType.GroupDM)
      .sort((a, b) => compareIds(b.last_message_id ?? b.id, a.last_message_id ?? a.id));
  }

  permissions(channel: Channel | undefined, guildId?: string): bigint {
    const gid = channel?.guild_id ?? guildId;
    if (!gid) {
      // DM recipients hold a fixed set (docs/chat.md).
      return (
        P.VIEW_CHANNEL | P.SEND_MESSAGES | P.READ_MESSAGE_HISTORY | P.ADD_REACTIONS | P.ATTACH_FILES | P.PIN_MESSAGES
      );
    }
    const state = this.guilds.get(gid);
    if (!state) return 0n;
    return channelPermissions(state.guild, state.roles, state.members.get(this.me), this.me, channel);
  }

  canView(channel: Channel): boolean {
    if (!channel.guild_id) return true;
    if (channel.type === ChannelType.Category) return true;
    return (this.permissions(channel) & P.VIEW_CHANNEL) !== 0n;
  }

  isUnread(channel: Channel): boolean {
    if (!channel.last_message_id || channel.type === ChannelType.Category) return false;
    const read = this.readStates.get(channel.id);
    return !read || compareIds(channel.last_message_id, read) > 0;
  }

  guildUnread(guildId: string): { unread: boolean; mentions: number } {
    let unread = false;
    let mentions = 0;
    for (const channel of this.guildChannels(guildId)) {
      if (this.isUnread(channel)) unread = true;
      mentions += this.mentions.get(channel.id) ?? 0;
    }
    return { unread, mentions };
  }

  displayName(userId: string, guildId?: string): string {
    const member = guildId ? this.guilds.get(guildId)?.members.get(userId) : undefined;
    const user = this.users.get(userId) ?? member?.user;
    return member?.nick ?? user?.global_name ?? user?.username ?? userId;
  }

  /**
   * The picture someone shows here: their per-guild avatar in a guild when they set one, else their account's,
   * as last heard of (a change arrives as GUILD_MEMBER_UPDATE, PRESENCE_UPDATE or, for oneself, USER_UPDATE).
   * `seen`: the copies a message or search hit carried, used when the store has not heard of the person.
   */
  avatarOf(userId: string, guildId?: string, seen?: { user?: PartialUser; member?: Member }): ImageSource | null {
    const member = (guildId ? this.guilds.get(guildId)?.members.get(userId) : undefined) ?? seen?.member;
    return userAvatar(this.users.get(userId) ?? member?.user ?? seen?.user, member, guildId);
  }

  /** The other person of a one-to-one conversation, as last heard of; undefined for any other channel. */
  dmPartner(channel: Channel): PartialUser | undefined {
    const other = channel.type === ChannelType.DM ? channel.recipients?.[0] : undefined;
    return other ? (this.users.get(other.id) ?? other) : undefined;
  }

  channelLabel(channel: Channel): string {
    if (channel.type === ChannelType.DM || channel.type === ChannelType.GroupDM) {
      if (channel.name) return channel.name;
      // The names as last heard of (a recipient's rename arrives as PRESENCE_UPDATE or GUILD_MEMBER_UPDATE).
      return (
        (channel.recipients ?? [])
          .map((u) => this.users.get(u.id) ?? u)
          .map((u) => u.global_name ?? u.username)
          .join(', ') || '—'
      );
    }
    return channel.name ?? '';
  }

  roleColor(guildId: string | undefined, userId: string): string | undefined {
    if (!guildId) return undefined;
    const state = this.guilds.get(guildId);
    const member = state?.members.get(userId);
    if (!state || !member) return undefined;
    let best: Role | undefined;
    for (const id of member.roles) {
      const role = state.roles.get(id);
      if (role?.color && (!best || role.position > best.position)) best = role;
    }
    // Adjusted to read on the theme's backgrounds (4.5:1), keeping the hue.
    return best ? readableRoleColor(best.color, prefersDark()) : undefined;
  }

  typingIn(channelId: string): string[] {
    const map = this.typing.get(channelId);
    if (!map) return [];
    return [...map.keys()].filter((id) => id !== this.me);
  }

  totalUnreadMentions(): number {
    let total = 0;
    for (const count of this.mentions.values()) total += count;
    return total;
  }

  // ---- history --------------------------------------------------------------------------------------------

  historyOf(channelId: string): ChannelHistory {
    let h = this.history.get(channelId);
    if (!h) {
      h = {
        items: [],
        reachedStart: false,
        atPresent: true,
        loading: false,
        generation: 0,
        presentLoads: 0,
        arrivals: null,
      };
      this.history.set(channelId, h);
    }
    return h;
  }

  /** Channels whose history is kept, most recent last; older windows are dropped (and refetched if reopened). */
  private readonly recent: string[] = [];
  /** Counts gateway (re)connections (READY or RESUMED). */
  private connections = 0;
  /** Counts RELATIONSHIP_* events, so a list fetched while one arrived is fetched again. */
  private relationshipEvents = 0;

  private touch(channelId: string): void {
    const index = this.recent.indexOf(channelId);
    if (index >= 0) this.recent.splice(index, 1);
    this.recent.push(channelId);
    while (this.recent.length > KEPT_WINDOWS) {
      const evicted = this.recent.shift();
      if (evicted) this.history.delete(evicted);
    }
  }

  /** First load of a channel: the newest page (a window left scrolled far back starts again at the present). */
  async open(channelId: string): Promise<void> {
    this.touch(channelId);
    const h = this.historyOf(channelId);
    if (!h.atPresent && !h.loading) {
      this.replaceWindow(h);
      h.atPresent = true;
    }
    if (h.items.length > 0 || h.loading || h.reachedStart) {
      if (h.items.length > 0) await this.catchUp(channelId);
      return;
    }
    h.loading = true;
    this.changed();
    const connection = this.connections;
    const generation = h.generation;
    try {
      const page = await this.api.messages(channelId, { limit: PAGE });
      if (h.generation !== generation) return;
      this.merge(channelId, page);
      if (page.length < PAGE) h.reachedStart = true;
    } finally {
      if (h.generation === generation) h.loading = false;
      this.changed();
    }
    // The gateway (re)connected while the page was on its way: messages dispatched before it was ready may be
    // missing from the page, and the reconnect's catch-up skipped this window because it was still loading.
    if (this.connections !== connection) await this.catchUp(channelId);
  }

  /** Empties a window to load it again elsewhere; requests still on their way for the old one are ignored. */
  private replaceWindow(h: ChannelHistory): void {
    h.items = [];
    h.reachedStart = false;
    h.loading = false;
    h.arrivals = null;
    h.generation++;
  }

  /**
   * Older messages, for scrolling back. Past WINDOW_MAX the newest end is dropped, and the window is then no
   * longer at the present.
   */
  async loadOlder(channelId: string, limit = PAGE): Promise<void> {
    const h = this.historyOf(channelId);
    const oldest = h.items[0];
    if (h.loading || h.reachedStart || !oldest) return;
    h.loading = true;
    this.historyChanged();
    const generation = h.generation;
    try {
      const page = await this.api.messages(channelId, { before: oldest.id, limit });
      if (h.generation !== generation) return;
      this.merge(channelId, page);
      if (page.length < limit) h.reachedStart = true;
      if (h.items.length > WINDOW_MAX) {
        h.items = h.items.slice(0, WINDOW_MAX);
        h.atPresent = false;
      }
    } finally {
      if (h.generation === generation) h.loading = false;
      this.historyChanged();
    }
  }

  /**
   * Newer messages, for scrolling down a window that is not at the present: `after=` pages; past WINDOW_MAX the
   * oldest end is dropped. A short page means the present is reached: live messages join the window again.
   */
  async loadNewer(channelId: string): Promise<void> {
    const h = this.historyOf(channelId);
    const newest = h.items.at(-1);
    if (h.loading || h.atPresent || !newest) return;
    h.loading = true;
    h.arrivals = [];
    this.historyChanged();
    const generation = h.generation;
    const connection = this.connections;
    try {
      const page = await this.api.messages(channelId, { after: newest.id, limit: PAGE });
      if (h.generation !== generation) return;
      this.merge(channelId, page);
      if (page.length < PAGE) this.reachPresent(channelId, h);
      if (h.items.length > WINDOW_MAX) {
        h.items = h.items.slice(h.items.length - WINDOW_MAX);
        h.reachedStart = false;
      }
    } finally {
      if (h.generation === generation) {
        h.loading = false;
        h.arrivals = null;
      }
      // Back at the present, live messages that arrived meanwhile joined (and the channel's newest may move).
      if (h.atPresent) this.changed();
      else this.historyChanged();
    }
    if (h.atPresent && this.connections !== connection) await this.catchUp(channelId);
  }

  /** A request reached the newest message: what arrived live meanwhile joins, and so will what comes next. */
  private reachPresent(channelId: string, h: ChannelHistory): void {
    h.atPresent = true;
    const arrivals = h.arrivals ?? [];
    h.arrivals = null;
    if (arrivals.length > 0) this.merge(channelId, arrivals);
  }

  /** Whether a channel's window holds a message. */
  holds(channelId: string, messageId: string): boolean {
    return this.history.get(channelId)?.items.some((m) => m.id === messageId) ?? false;
  }

  /**
   * A jump to a message (a reply, a search result, a link, the first unread): unless the window holds it, the
   * window is replaced by the messages around it (`around=`), at the present if that reaches the newest one.
   */
  async loadAround(channelId: string, messageId: string): Promise<void> {
    if (this.holds(channelId, messageId)) return;
    const h = this.historyOf(channelId);
    this.replaceWindow(h);
    h.atPresent = false;
    h.loading = true;
    h.arrivals = [];
    this.changed();
    const generation = h.generation;
    const connection = this.connections;
    try {
      const page = await this.api.messages(channelId, { around: messageId, limit: AROUND });
      if (h.generation !== generation) return;
      const half = Math.ceil(AROUND / 2);
      this.merge(channelId, page);
      h.reachedStart = page.filter((m) => compareIds(m.id, messageId) <= 0).length < half;
      if (page.filter((m) => compareIds(m.id, messageId) > 0).length < AROUND - half) this.reachPresent(channelId, h);
    } finally {
      if (h.generation === generation) {
        h.loading = false;
        h.arrivals = null;
      }
      this.changed();
    }
    if (h.atPresent && this.connections !== connection) await this.catchUp(channelId);
  }

  /** "Jump to present": the window is replaced by the newest page (nothing to do when it already ends there). */
  async loadPresent(channelId: string): Promise<void> {
    const h = this.historyOf(channelId);
    if (h.atPresent) return;
    this.replaceWindow(h);
    h.atPresent = true;
    h.loading = true;
    h.presentLoads++;
    this.changed();
    const generation = h.generation;
    const connection = this.connections;
    try {
      // At the present from the start, so live messages that come meanwhile join (the page may predate them).
      const page = await this.api.messages(channelId, { limit: PAGE });
      if (h.generation !== generation) return;
      this.merge(channelId, page);
      if (page.length < PAGE) h.reachedStart = true;
    } finally {
      if (h.generation === generation) h.loading = false;
      this.changed();
    }
    if (this.connections !== connection) await this.catchUp(channelId);
  }

  /** Everything after the newest message held (after a reconnect), page by page; only for a window at the present. */
  async catchUp(channelId: string): Promise<void> {
    const h = this.history.get(channelId);
    if (!h?.atPresent) return;
    const generation = h.generation;
    if (h.items.length === 0) {
      // An empty channel was opened before the gateway was ready: whatever was posted since is its newest page.
      const page = await this.api.messages(channelId, { limit: PAGE });
      if (h.generation !== generation || !h.atPresent) return;
      this.merge(channelId, page);
      this.changed();
      return;
    }
    for (let round = 0; round < 10; round++) {
      const newest = h.items.at(-1);
      if (!newest) return;
      const page = await this.api.messages(channelId, { after: newest.id, limit: 100 });
      if (h.generation !== generation || !h.atPresent) return;
      this.merge(channelId, page);
      if (page.length < 100) {
        this.trimOldest(h);
        this.changed();
        return;
      }
    }
    // More than a thousand behind: start again from the newest page rather than fetch the whole gap.
    const latest = await this.api.messages(channelId, { limit: PAGE });
    if (h.generation !== generation || !h.atPresent) return;
    this.replaceWindow(h);
    h.atPresent = true;
    h.reachedStart = latest.length < PAGE;
    this.merge(channelId, latest);
    this.changed();
  }

  /**
   * A window at the present grows with live messages; past twice its bound the oldest end goes (scrolling back
   * fetches it again), so a busy channel left open does not grow without end.
   */
  private trimOldest(h: ChannelHistory): void {
    if (h.items.length <= 2 * WINDOW_MAX) return;
    h.items = h.items.slice(h.items.length - WINDOW_MAX);
    h.reachedStart = false;
  }

  /** Adds messages (any order) to a channel's window, replacing ones already held. */
  private merge(channelId: string, messages: Message[]): void {
    const h = this.historyOf(channelId);
    const byId = new Map(h.items.map((m) => [m.id, m]));
    for (const message of messages) {
      byId.set(message.id, message);
      this.rememberUser(message.author);
      this.clearPending(channelId, message.nonce);
    }
    h.items = [...byId.values()].sort((a, b) => compareIds(a.id, b.id));
    const channel = this.channels.get(channelId);
    const last = h.items.at(-1);
    if (channel && last) channel.last_message_id = maxId(channel.last_message_id, last.id);
  }

  // ---- sending --------------------------------------------------------------------------------------------

  async send(channelId: string, content: string, options: { replyTo?: string; files?: File[] } = {}): Promise<void> {
    const nonce = `${Date.now()}${Math.floor(Math.random() * 1e6)}`.slice(0, 25);
    const pending: PendingMessage = {
      nonce,
      content,
      failed: false,
      ...(options.files?.length ? { progress: 0, files: options.files.map((f) => f.name) } : {}),
    };
    this.pending.set(channelId, [...(this.pending.get(channelId) ?? []), pending]);
    this.changed();
    // Sending from far back in the history brings the person back to the present, where the message appears.
    if (!this.historyOf(channelId).atPresent) void this.loadPresent(channelId).catch(() => undefined);
    const body = {
      content,
      nonce,
      ...(options.replyTo ? { message_reference: { message_id: options.replyTo } } : {}),
    };
    try {
      const message = options.files?.length
        ? await this.api.sendWithFiles(channelId, body, options.files, (sent, total) => {
            pending.progress = total ? sent / total : 0;
            this.changed();
          })
        : await this.api.send(channelId, body);
      this.addMessage(message);
    } catch (error) {
      pending.failed = true;
      this.changed();
      throw error;
    }
  }

  private clearPending(channelId: string, nonce: unknown): void {
    if (nonce === undefined || nonce === null) return;
    const list = this.pending.get(channelId);
    if (!list) return;
    const rest = list.filter((p) => p.nonce !== String(nonce));
    if (rest.length !== list.length) this.pending.set(channelId, rest);
  }

  dismissPending(channelId: string, nonce: string): void {
    this.clearPending(channelId, nonce);
    this.changed();
  }

  /** An ephemeral message (flag 64) lives only in this tab: dismissing it drops it here, the server keeps none. */
  dismissEphemeral(channelId: string, messageId: string): void {
    this.removeMessages(channelId, [messageId]);
    this.changed();
  }

  private addMessage(message: Message): void {
    const h = this.history.get(message.channel_id);
    // A channel never opened keeps no window (its first open fetches the newest page). A window whose first
    // page is on its way takes the message too: the page may have been read before the message was posted.
    // A window scrolled far back does not (it would sit after a gap), unless a request on its way may reach the
    // present: it is then held aside and joins if the answer does (docs/web.md#the-history-window).
    if (h?.atPresent && (h.items.length > 0 || h.reachedStart || h.loading)) {
      this.merge(message.channel_id, [message]);
      this.trimOldest(h);
    } else {
      if (h && !h.atPresent && h.arrivals) h.arrivals.push(message);
      this.clearPending(message.channel_id, message.nonce);
    }
    const channel = this.channels.get(message.channel_id);
    if (channel) channel.last_message_id = maxId(channel.last_message_id, message.id);
    if (message.author.id === this.me) this.markRead(message.channel_id, message.id, false);
    this.changed();
  }

  // ---- read state -----------------------------------------------------------------------------------------

  markRead(channelId: string, messageId?: string | null, tellServer = true): void {
    const channel = this.channels.get(channelId);
    const target = messageId ?? channel?.last_message_id;
    if (!target) return;
    const current = this.readStates.get(channelId);
    const hadMentions = (this.mentions.get(channelId) ?? 0) > 0;
    if (current && compareIds(current, target) >= 0 && !hadMentions) return;
    this.readStates.set(channelId, maxId(current, target) ?? target);
    this.mentions.delete(channelId);
    this.saveLocalReads();
    this.changed();
    if (tellServer) this.scheduleAck(channelId);
  }

  /**
   * "Mark as read" of the rail's menu: every channel of these guilds the person sees that is unread or counts
   * mentions, read up to its newest message (acked through the same debounced ack as reading it). The newest is
   * asked for, one message per channel: READY's `last_message_id` of a guild channel can be older than the
   * channel (measured: the join message, with a mention after it), and an ack of that older message would leave
   * the mention counted.
   */
  async markGuildsRead(guildIds: string[]): Promise<void> {
    const channels = guildIds
      .flatMap((guildId) => this.guildChannels(guildId))
      .filter((channel) => this.isUnread(channel) || (this.mentions.get(channel.id) ?? 0) > 0);
    await Promise.all(
      channels.map(async (channel) => {
        const newest = await this.api.messages(channel.id, { limit: 1 }).catch(() => []);
        const id = maxId(channel.last_message_id, newest[0]?.id);
        if (!id) return;
        channel.last_message_id = id;
        this.markRead(channel.id, id);
      }),
    );
  }

  private readonly ackTimers = new Map<string, number>();

  /** Acks go out at most once a second per channel (the newest read message), not once per message. */
  private scheduleAck(channelId: string): void {
    if (this.ackTimers.has(channelId)) return;
    this.ackTimers.set(
      channelId,
      window.setTimeout(() => {
        this.ackTimers.delete(channelId);
        const read = this.readStates.get(channelId);
        if (read) void this.api.ack(channelId, read).catch(() => undefined);
      }, 1000),
    );
  }

  /**
   * Sends every ack still waiting for its second, at once and as `keepalive` (the request outlives the page): a
   * channel read just before the tab closes, reloads or signs out stays read on the server and in other tabs.
   */
  private readonly flushAcks = (): void => {
    for (const [channelId, timer] of this.ackTimers) {
      window.clearTimeout(timer);
      const read = this.readStates.get(channelId);
      if (read) void this.api.ack(channelId, read, true).catch(() => undefined);
    }
    this.ackTimers.clear();
  };

  private localReadsKey(): string {
    return `hearth.reads.${this.me}`;
  }

  private saveLocalReads(): void {
    try {
      window.localStorage.setItem(this.localReadsKey(), JSON.stringify(Object.fromEntries(this.readStates)));
    } catch {
      // storage full or disabled: read state stays in memory
    }
  }

  private loadLocalReads(): void {
    try {
      const raw = window.localStorage.getItem(this.localReadsKey());
      if (!raw) return;
      for (const [id, mid] of Object.entries(JSON.parse(raw) as Record<string, string>)) {
        this.readStates.set(id, maxId(this.readStates.get(id), mid) ?? mid);
      }
    } catch {
      // ignore a damaged entry
    }
  }

  // ---- gateway --------------------------------------------------------------------------------------------

  private rememberUser(user: PartialUser | undefined): void {
    if (!user?.id) return;
    this.users.set(user.id, { ...this.users.get(user.id), ...user });
    // The friends list shows the relationship's own copy of the user.
    const relationship = this.relationships.get(user.id);
    if (relationship?.user) relationship.user = { ...relationship.user, ...user };
  }

  private setPresence(presence: PresencePayload): void {
    if (!presence.user?.id) return;
    if (presence.status === 'offline' || presence.status === 'invisible') this.presences.delete(presence.user.id);
    else this.presences.set(presence.user.id, presence.status);
  }

  private putGuild(guild: Guild): void {
    const previous = this.guilds.get(guild.id);
    for (const id of previous?.channelIds ?? []) this.channels.delete(id);
    const state: GuildState = {
      guild,
      roles: new Map((guild.roles ?? []).map((r) => [r.id, r])),
      channelIds: new Set(),
      members: previous?.members ?? new Map(),
      membersLoaded: previous?.membersLoaded ?? false,
    };
    for (const channel of guild.channels ?? []) {
      this.channels.set(channel.id, { ...channel, guild_id: guild.id });
      state.channelIds.add(channel.id);
    }
    for (const presence of (guild as Guild & { presences?: PresencePayload[] }).presences ?? []) {
      this.setPresence(presence);
    }
    for (const member of guild.members ?? []) {
      const id = member.user?.id;
      if (id) state.members.set(id, { ...state.members.get(id), ...member });
    }
    this.guilds.set(guild.id, state);
  }

  private loadReady(ready: ReadyPayload): void {
    this.me = ready.user.id;
    this.rememberUser(ready.user);
    const seen = new Set<string>();
    for (const guild of ready.guilds) {
      if (guild.unavailable) continue;
      this.putGuild(guild);
      seen.add(guild.id);
    }
    for (const id of [...this.guilds.keys()]) if (!seen.has(id)) this.guilds.delete(id);
    for (const channel of ready.private_channels) {
      this.channels.set(channel.id, channel);
      for (const user of channel.recipients ?? []) this.rememberUser(user);
    }
    for (const state of ready.read_state?.entries ?? []) {
      // "0": the channel was never acked (a mention made the entry).
      if (state.last_message_id && state.last_message_id !== '0') this.readStates.set(state.id, state.last_message_id);
      if (state.mention_count) this.mentions.set(state.id, state.mention_count);
    }
    this.guildSettings.clear();
    for (const settings of ready.user_guild_settings?.entries ?? [])
      this.guildSettings.set(settings.guild_id ?? PRIVATE_SETTINGS, settings);
    for (const presence of ready.presences ?? []) this.setPresence(presence);
    for (const [id, note] of Object.entries(ready.notes ?? {})) this.notes.set(id, note);
    this.guildPositions = ready.user_settings?.guild_positions ?? [];
    this.guildFolders = ready.user_settings?.guild_folders ?? [];
    this.loadLocalReads();
    this.ready = true;
    this.metaVersion++;
    this.changed();
  }

  /** The guild on screen changed: a large one's member statuses are followed from now on (and kept when left). */
  viewGuild(guildId: string | null): void {
    this.viewedGuildId = guildId;
    if (guildId) this.followPresences(guildId);
  }

  /**
   * Op 14 for a large guild not followed yet in this session, then op 8 `presences: true` once for the statuses
   * of now (the guild payload of a large guild has none; for the first 1,000 members).
   */
  private followPresences(guildId: string): void {
    if (!this.guilds.get(guildId)?.guild.large || this.followedGuilds.has(guildId) || !this.hub.connected) return;
    this.followedGuilds.add(guildId);
    if (this.followedGuilds.size > 100) this.followedGuilds.delete(this.followedGuilds.values().next().value as string);
    this.hub.send(14, { guild_id: guildId, typing: true, threads: true, activities: true });
    this.hub.send(8, { guild_id: guildId, query: '', limit: 0, presences: true });
  }

  async loadMembers(guildId: string): Promise<void> {
    const state = this.guilds.get(guildId);
    if (!state || state.membersLoaded) return;
    state.membersLoaded = true;
    let after: string | undefined;
    for (let round = 0; round < 10; round++) {
      const page = await this.api.members(guildId, after);
      for (const member of page) {
        if (!member.user) continue;
        this.rememberUser(member.user);
        state.members.set(member.user.id, member);
      }
      if (page.length < 1000) break;
      after = page.at(-1)?.user?.id;
    }
    this.metaVersion++;
    this.changed();
  }

  async loadRelationships(): Promise<void> {
    try {
      // A RELATIONSHIP_* event that arrives while the list is on its way may be newer than the list (a request
      // sent just after the server read it): the list is only taken when no event came in meanwhile.
      let list: Relationship[] = [];
      for (let attempt = 0; attempt < 5; attempt++) {
        const seen = this.relationshipEvents;
        list = await this.api.relationships();
        if (this.relationshipEvents === seen) break;
      }
      this.relationships.clear();
      for (const r of list) {
        this.relationships.set(r.id, r);
        this.rememberUser(r.user);
      }
      this.changed();
    } catch {
      // shown as empty; the next RELATIONSHIP_* event or reconnect fills it
    }
  }

  /** After a (re)connection: fetch whatever the open windows missed. */
  private async resync(): Promise<void> {
    // Every window loaded so far, empty ones included (a message may have come before the gateway was ready).
    const open = [...this.history.entries()]
      .filter(([, h]) => h.atPresent && (h.items.length > 0 || (h.reachedStart && !h.loading)))
      .map(([id]) => id);
    await Promise.all(open.map((id) => this.catchUp(id).catch(() => undefined)));
    void this.loadRelationships();
  }

  /**
   * Whether a message pings the person: by name, or by @everyone / @here or a role of theirs unless the guild's
   * settings suppress those (`suppress_everyone`, `suppress_roles`).
   */
  mentionsMe(message: Message): boolean {
    if (message.mentions.some((u) => u.id === this.me)) return true;
    const settings = message.guild_id ? this.guildSettings.get(message.guild_id) : undefined;
    if (message.mention_everyone && !settings?.suppress_everyone) return true;
    if (settings?.suppress_roles) return false;
    const member = message.guild_id ? this.guilds.get(message.guild_id)?.members.get(this.me) : undefined;
    return !!member && message.mention_roles.some((r) => member.roles.includes(r));
  }

  private updateMessage(channelId: string, id: string, change: (m: Message) => Message): void {
    const h = this.history.get(channelId);
    if (!h) return;
    const index = h.items.findIndex((m) => m.id === id);
    const current = h.items[index];
    if (index < 0 || !current) return;
    h.items = [...h.items];
    h.items[index] = change(current);
  }

  private react(
    data: { channel_id: string; message_id: string; user_id?: string; emoji?: Reaction['emoji'] },
    delta: 1 | -1,
  ) {
    const key = (e: Reaction['emoji']) => e.id ?? e.name;
    this.updateMessage(data.channel_id, data.message_id, (m) => {
      const emoji = data.emoji;
      if (!emoji) return m;
      const reactions = [...(m.reactions ?? [])];
      const index = reactions.findIndex((r) => key(r.emoji) === key(emoji));
      const mine = data.user_id === this.me;
      const existing = reactions[index];
      if (existing) {
        const count = existing.count + delta;
        if (count <= 0) reactions.splice(index, 1);
        else reactions[index] = { ...existing, count, me: mine ? delta > 0 : existing.me };
      } else if (delta > 0) {
        reactions.push({ emoji, count: 1, me: mine });
      }
      return { ...m, reactions };
    });
  }

  private dispatch(type: string, data: unknown): void {
    const d = data as Record<string, unknown>;
    switch (type) {
      case 'READY':
        // A new session follows nothing yet.
        this.followedGuilds.clear();
        this.loadReady(data as ReadyPayload);
        if (this.viewedGuildId) this.followPresences(this.viewedGuildId);
        return;
      case '@connected':
        this.connections++;
        this.connected = true;
        this.changed();
        void this.resync();
        return;
      case 'RESUMED':
        // The session kept what it followed; a guild opened while the socket was down is followed now.
        if (this.viewedGuildId) this.followPresences(this.viewedGuildId);
        return;
      case 'GUILD_MEMBERS_CHUNK':
        for (const presence of (d.presences as PresencePayload[] | undefined) ?? []) this.setPresence(presence);
        break;
      case '@disconnected':
        this.connected = false;
        this.changed();
        return;
      case 'GUILD_CREATE':
        this.putGuild(data as Guild);
        break;
      case 'GUILD_UPDATE': {
        const state = this.guilds.get(d.id as string);
        if (state) {
          state.guild = { ...state.guild, ...(data as Guild) };
          if (Array.isArray(d.roles)) state.roles = new Map((d.roles as Role[]).map((r) => [r.id, r]));
        }
        break;
      }
      case 'GUILD_EMOJIS_UPDATE': {
        const state = this.guilds.get(d.guild_id as string);
        if (state) state.guild = { ...state.guild, emojis: d.emojis as Emoji[] };
        break;
      }
      case 'GUILD_DELETE': {
        const state = this.guilds.get(d.id as string);
        for (const id of state?.channelIds ?? []) this.channels.delete(id);
        this.guilds.delete(d.id as string);
        // Left (or gone): the server dropped the settings with the membership; a rejoin starts from the defaults.
        if (!d.unavailable) this.guildSettings.delete(d.id as string);
        break;
      }
      case 'GUILD_ROLE_CREATE':
      case 'GUILD_ROLE_UPDATE': {
        const role = d.role as Role;
        this.guilds.get(d.guild_id as string)?.roles.set(role.id, role);
        break;
      }
      case 'GUILD_ROLE_UPDATE_BULK':
        for (const role of d.roles as Role[]) this.guilds.get(d.guild_id as string)?.roles.set(role.id, role);
        break;
      case 'GUILD_ROLE_DELETE':
        this.guilds.get(d.guild_id as string)?.roles.delete(d.role_id as string);
        break;
      case 'GUILD_MEMBER_ADD':
      case 'GUILD_MEMBER_UPDATE': {
        const member = data as Member & { guild_id: string };
        const state = this.guilds.get(member.guild_id);
        if (state && member.user) {
          this.rememberUser(member.user);
          state.members.set(member.user.id, { ...state.members.get(member.user.id), ...member });
        }
        break;
      }
      case 'GUILD_MEMBER_REMOVE': {
        const user = d.user as PartialUser;
        this.guilds.get(d.guild_id as string)?.members.delete(user.id);
        break;
      }
      case 'CHANNEL_CREATE':
      case 'CHANNEL_UPDATE': {
        const channel = data as Channel;
        const previous = this.channels.get(channel.id);
        this.channels.set(channel.id, {
          ...channel,
          last_message_id: maxId(previous?.last_message_id, channel.last_message_id),
        });
        if (channel.guild_id) this.guilds.get(channel.guild_id)?.channelIds.add(channel.id);
        for (const user of channel.recipients ?? []) this.rememberUser(user);
        this.goneChannels.delete(channel.id);
        break;
      }
      case 'CHANNEL_DELETE': {
        // Also what a member gets who can no longer view the channel (an overwrite or a role changed).
        const channel = data as Channel;
        const known = this.channels.get(channel.id);
        if (channel.guild_id) this.goneChannels.set(channel.id, known?.name ?? channel.name ?? '');
        this.channels.delete(channel.id);
        if (channel.guild_id) this.guilds.get(channel.guild_id)?.channelIds.delete(channel.id);
        break;
      }
      case 'MESSAGE_CREATE': {
        const message = data as Message;
        if (message.guild_id && message.member) {
          const state = this.guilds.get(message.guild_id);
          state?.members.set(message.author.id, {
            ...state.members.get(message.author.id),
            ...message.member,
            user: message.author,
          });
        }
        this.typing.get(message.channel_id)?.delete(message.author.id);
        const fresh = !this.history.get(message.channel_id)?.items.some((m) => m.id === message.id);
        this.addMessage(message);
        if (fresh && message.author.id !== this.me) {
          const visible = this.activeChannelId === message.channel_id && document.visibilityState === 'visible';
          if (!visible && this.mentionsMe(message)) {
            this.mentions.set(message.channel_id, (this.mentions.get(message.channel_id) ?? 0) + 1);
          }
          const channel = this.channels.get(message.channel_id);
          if (!visible && channel && !channel.guild_id) {
            this.mentions.set(message.channel_id, (this.mentions.get(message.channel_id) ?? 0) + 1);
          }
          this.onIncoming?.(message);
        }
        return;
      }
      case 'MESSAGE_UPDATE': {
        const message = data as Message;
        this.updateMessage(message.channel_id, message.id, (m) => ({ ...m, ...message }));
        break;
      }
      case 'MESSAGE_DELETE':
        this.removeMessages(d.channel_id as string, [d.id as string]);
        break;
      case 'MESSAGE_DELETE_BULK':
        this.removeMessages(d.channel_id as string, d.ids as string[]);
        break;
      case 'MESSAGE_REACTION_ADD':
        this.react(data as never, 1);
        break;
      case 'MESSAGE_REACTION_REMOVE':
        this.react(data as never, -1);
        break;
      case 'MESSAGE_REACTION_REMOVE_ALL':
      case 'MESSAGE_REACTION_REMOVE_EMOJI': {
        const emoji = d.emoji as Reaction['emoji'] | undefined;
        this.updateMessage(d.channel_id as string, d.message_id as string, (m) => ({
          ...m,
          reactions: emoji
            ? (m.reactions ?? []).filter((r) => (r.emoji.id ?? r.emoji.name) !== (emoji.id ?? emoji.name))
            : [],
        }));
        break;
      }
      case 'MESSAGE_ACK':
        if (d.manual === true) {
          // Marked unread in another tab: the marker moves back and keeps the mentions given.
          this.readStates.set(d.channel_id as string, d.message_id as string);
          if (typeof d.mention_count === 'number' && d.mention_count > 0)
            this.mentions.set(d.channel_id as string, d.mention_count);
          else this.mentions.delete(d.channel_id as string);
          this.saveLocalReads();
          break;
        }
        this.markRead(d.channel_id as string, d.message_id as string, false);
        return;
      case 'TYPING_START': {
        const userId = d.user_id as string;
        if (d.member && d.guild_id) {
          const member = d.member as Member;
          this.rememberUser(member.user);
        }
        const map = this.typing.get(d.channel_id as string) ?? new Map<string, number>();
        map.set(userId, Date.now() + TYPING_MS);
        this.typing.set(d.channel_id as string, map);
        break;
      }
      case 'RELATIONSHIP_ADD':
      case 'RELATIONSHIP_UPDATE': {
        this.relationshipEvents++;
        // UPDATE: a row changed type (a request accepted); it carries the whole relationship like ADD.
        const r = data as Relationship;
        this.relationships.set(r.id, r);
        this.rememberUser(r.user);
        break;
      }
      case 'USER_UPDATE': {
        // One's own account changed (in another tab too): only what others see of it is kept here.
        const user = data as PartialUser;
        this.rememberUser({
          id: user.id,
          username: user.username,
          discriminator: user.discriminator,
          global_name: user.global_name,
          avatar: user.avatar,
        });
        break;
      }
      case 'USER_NOTE_UPDATE':
        if (d.note) this.notes.set(d.id as string, d.note as string);
        else this.notes.delete(d.id as string);
        break;
      case 'USER_GUILD_SETTINGS_UPDATE':
        this.putGuildSettings(data as GuildNotificationSettings);
        break;
      case 'USER_SETTINGS_UPDATE':
        if (Array.isArray(d.guild_positions)) this.guildPositions = d.guild_positions as string[];
        if (Array.isArray(d.guild_folders)) this.guildFolders = d.guild_folders as GuildFolder[];
        break;
      case 'INTERACTION_MODAL_CREATE':
        this.modal = data as BotModal;
        break;
      case 'INTERACTION_CREATE': {
        if (typeof d.nonce !== 'string') return;
        const early = this.earlyChoices.get(d.id as string);
        if (early) {
          this.earlyChoices.delete(d.id as string);
          keepRecent(this.autocompleteChoices, d.nonce, early);
        } else keepRecent(this.interactionNonces, d.id as string, d.nonce);
        break;
      }
      case 'APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE': {
        const choices = Array.isArray(d.choices) ? (d.choices as CommandChoice[]) : [];
        const nonce = this.interactionNonces.get(d.id as string);
        if (nonce) {
          this.interactionNonces.delete(d.id as string);
          keepRecent(this.autocompleteChoices, nonce, choices);
        } else keepRecent(this.earlyChoices, d.id as string, choices);
        break;
      }
      case 'PRESENCE_UPDATE': {
        const presence = data as PresencePayload;
        // A rename or a new avatar comes with the changed fields of the user (docs/gateway.md#user-changes).
        if (presence.user && Object.keys(presence.user).length > 1) this.rememberUser(presence.user as PartialUser);
        this.setPresence(presence);
        break;
      }
      case 'RELATIONSHIP_REMOVE':
        this.relationshipEvents++;
        this.relationships.delete(d.id as string);
        break;
      case 'CHANNEL_RECIPIENT_ADD':
      case 'CHANNEL_RECIPIENT_REMOVE': {
        const channel = this.channels.get(d.channel_id as string);
        const user = d.user as PartialUser;
        if (channel) {
          const others = (channel.recipients ?? []).filter((u) => u.id !== user.id);
          channel.recipients = type === 'CHANNEL_RECIPIENT_ADD' ? [...others, user] : others;
        }
        break;
      }
      default:
        return;
    }
    if (!type.startsWith('MESSAGE_') && type !== 'TYPING_START') this.metaVersion++;
    this.changed();
  }

  private removeMessages(channelId: string, ids: string[]): void {
    const h = this.history.get(channelId);
    if (!h) return;
    const gone = new Set(ids);
    // A reply to a deleted message says so ("Original message was deleted"), as the server's `referenced_message:
    // null` does after a reload; a new object, since rows re-render when their own message changes.
    h.items = h.items
      .filter((m) => !gone.has(m.id))
      .map((m) => (m.referenced_message && gone.has(m.referenced_message.id) ? { ...m, referenced_message: null } : m));
  }

  private expireTyping(): void {
    const now = Date.now();
    let changed = false;
    for (const map of this.typing.values()) {
      for (const [userId, until] of map) {
        if (until < now) {
          map.delete(userId);
          changed = true;
        }
      }
    }
    if (changed) this.changed();
  }
}

/** Sets `key` in a map kept to its 50 newest entries (autocomplete bookkeeping). */
function keepRecent<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  for (const old of map.keys()) {
    if (map.size <= 50) break;
    map.delete(old);
  }
}

/** The key of the direct conversations' settings in `ChatStore.guildSettings` (the server's `guild_id` null). */
export const PRIVATE_SETTINGS = '@me';

/** A guild's settings (or, for `PRIVATE_SETTINGS`, the conversations') before the person changed any. */
export function defaultGuildSettings(guildId: string): GuildNotificationSettings {
  return {
    guild_id: guildId === PRIVATE_SETTINGS ? null : guildId,
    muted: false,
    mute_config: null,
    message_notifications: 3,
    suppress_everyone: false,
    suppress_roles: false,
    channel_overrides: [],
    version: 0,
  };
}

/** `changes` applied as the server applies them, to show a change before its answer comes. */
function mergeGuildSettings(
  settings: GuildNotificationSettings,
  changes: GuildSettingsChanges,
): GuildNotificationSettings {
  const overrides = new Map(settings.channel_overrides.map((o) => [o.channel_id, o]));
  for (const [channelId, change] of Object.entries(changes.channel_overrides ?? {})) {
    const known = overrides.get(channelId) ?? {
      channel_id: channelId,
      muted: false,
      mute_config: null,
      message_notifications: 3,
      collapsed: false,
    };
    overrides.set(channelId, { ...known, ...change });
  }
  const { channel_overrides: _, ...rest } = changes;
  return { ...settings, ...rest, channel_overrides: [...overrides.values()] };
}
