import type { UserPresence } from '../../platform/state/presences.ts';

/**
 * A presence on the wire (docs/gateway.md, "Presence"): Discord's shape, with `afk`, `mobile` and
 * `custom_status` kept from Hearth's design. `guild_id` is set on guild-scoped PRESENCE_UPDATE only.
 */
export type PresenceView = {
  /** `{id}`; a PRESENCE_UPDATE announcing a profile change carries the changed public fields too. */
  user: { id: string } & Record<string, unknown>;
  status: UserPresence['status'] | 'offline';
  activities: UserPresence['activities'];
  client_status: UserPresence['client_status'];
  afk: boolean;
  mobile: boolean;
  custom_status: UserPresence['custom_status'];
  guild_id?: string;
};

export function presenceView(userId: string, presence: UserPresence, guildId?: string): PresenceView {
  const view: PresenceView = {
    user: { id: userId },
    status: presence.status,
    activities: presence.activities,
    client_status: presence.client_status,
    afk: presence.afk,
    mobile: presence.mobile,
    custom_status: presence.custom_status,
  };
  if (guildId !== undefined) view.guild_id = guildId;
  return view;
}

/** How an offline (or invisible) user is announced: nothing of what they were doing is kept. */
export function offlinePresenceView(userId: string, guildId?: string): PresenceView {
  const view: PresenceView = {
    user: { id: userId },
    status: 'offline',
    activities: [],
    client_status: {},
    afk: false,
    mobile: false,
    custom_status: null,
  };
  if (guildId !== undefined) view.guild_id = guildId;
  return view;
}
