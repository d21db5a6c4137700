-- The notification settings of a user's direct conversations (DMs and group DMs; issue 18): the established
-- platform's entry with `guild_id: null`, written by `PATCH /users/@me/guilds/@me/settings`. One row per user, not
-- per channel: the entry carries the guild-level members too (accepted and stored as the platform does, though only
-- `channel_overrides` decide anything for a conversation). It cannot share user_guild_settings, whose rows belong
-- to a membership (a foreign key on `members`); this one belongs to the account. An override of a conversation the
-- user has left is kept in the JSON but left out of every answer and READY (the reader checks `dm_recipients`)
-- and dropped at the next PATCH, as an override of a deleted guild channel is.
CREATE TABLE user_private_channel_settings (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  muted boolean NOT NULL DEFAULT false,
  mute_end_time timestamptz,
  mute_window integer,
  message_notifications smallint NOT NULL DEFAULT 3,
  suppress_everyone boolean NOT NULL DEFAULT false,
  suppress_roles boolean NOT NULL DEFAULT false,
  mobile_push boolean NOT NULL DEFAULT true,
  hide_muted_channels boolean NOT NULL DEFAULT false,
  notify_highlights smallint NOT NULL DEFAULT 0,
  flags integer NOT NULL DEFAULT 0,
  -- {channel_id: {muted, mute_config, message_notifications, collapsed}}
  channel_overrides jsonb NOT NULL DEFAULT '{}'::jsonb,
  version bigint NOT NULL DEFAULT 0
);
