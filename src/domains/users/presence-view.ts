import type { UserPresence } from '../../platform/state/presences.ts';

/**
 * A presence on the wire (docs/gateway.md, "Presence"): Discord's shape, with `afk`, `mobile` and
 * `custom_status` kept from Hearth's design. `guild_id` is set on guild-scoped PRESENCE_UPDATE only.
 */
export function presenceView(userId: string, presence: UserPresence, guildId?: string): Record<string, unknown> {
  const view: Record<string, unknown> = {
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
export function offlinePresenceView(userId: string, guildId?: string): Record<string, unknown> {
  const view: Record<string, unknown> = {
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
