import type { PartialUser, PrivateUser } from '../../identity/user-record.ts';
import type { GuildPayloadView, UnavailableGuild } from '../chat/guild-payload.ts';
import type { GuildSettingsPayload } from '../chat/guild-settings-store.ts';
import type { ReadStatePayload } from '../chat/read-state-store.ts';
import type { RelationshipView } from '../chat/relationships.ts';
import type { PrivateChannelView } from '../chat/views.ts';
import type { PresenceView } from '../users/presence-view.ts';
import type { UserSettingsView } from '../users/settings.ts';

/** A bot's READY carries no settings: its `user_settings` is `{}`. */
export type NoSettings = Record<string, never>;

/**
 * READY (docs/gateway.md#ready-s-1) as the gateway's `SessionStarter.buildReady` assembles it from the domains'
 * views. It is defined here, beside the catalogue, rather than beside its builder in the gateway, because the
 * catalogue is a domain and a domain may not import the edge (docs/architecture.md#layers-and-folders). The members typed `[]`
 * are always empty in Hearth; a bot's READY has no guilds (they follow as GUILD_CREATE), no DMs' calls, no
 * relationships, presences, notes or settings.
 */
export type ReadyView = {
  v: 1;
  version: 1;
  session_id: string;
  resume_gateway_url: string;
  user: PrivateUser;
  /** A guild whose payload could not be read is `{id, unavailable: true}`. */
  guilds: (GuildPayloadView | UnavailableGuild)[];
  private_channels: PrivateChannelView[];
  relationships: RelationshipView[];
  /** The friends who are online, without `guild_id`. */
  presences: PresenceView[];
  /** Users READY refers to outside guilds (relationships, DM recipients), once each. */
  users: PartialUser[];
  sessions: [];
  read_state: ReadStatePayload;
  user_settings: UserSettingsView | NoSettings;
  /** Bots: `{version: 0, partial: false, entries: []}`. */
  user_guild_settings: GuildSettingsPayload;
  /** The user's notes by the id of the user each is about: an open map, one member per note. */
  notes: Record<string, string>;
  feature_flags: { disabled_gravity_surfaces: []; disabled_features: [] };
  pinned_dms: [];
  favorite_memes: [];
  webauthn_credentials: [];
  rtc_regions: [];
  country_code: string;
  /** A user session's: the digest of its session id (docs/gateway.md#ready-s-1). */
  auth_session_id_hash?: string;
  /** The `[shard_id, num_shards]` a bot identified with. */
  shard?: [number, number];
  /** A bot's application. */
  application?: { id: string; flags: number };
};
