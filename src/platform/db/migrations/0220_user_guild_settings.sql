-- Per-guild notification settings of a user (issues 16 and 18): mute, notification level, suppressions and the
-- channel overrides, kept on the server so they follow the account to every device and tab. The row belongs to
-- the membership: leaving, being kicked or banned, or the guild's deletion removes it (the foreign key), so a
-- person who joins again starts from the defaults, as on the established platform.
CREATE TABLE user_guild_settings (
  user_id bigint NOT NULL,
  guild_id bigint NOT NULL,
  muted boolean NOT NULL DEFAULT false,
  -- mute_config: null when both are null; end_time null = until unmuted.
  mute_end_time timestamptz,
  mute_window integer,
  -- 0 all messages, 1 only mentions, 2 nothing, 3 the guild's default.
  message_notifications smallint NOT NULL DEFAULT 3,
  suppress_everyone boolean NOT NULL DEFAULT false,
  suppress_roles boolean NOT NULL DEFAULT false,
  mobile_push boolean NOT NULL DEFAULT true,
  hide_muted_channels boolean NOT NULL DEFAULT false,
  notify_highlights smallint NOT NULL DEFAULT 0,
  flags integer NOT NULL DEFAULT 0,
  -- {channel_id: {muted, mute_config, message_notifications, collapsed}}
  channel_overrides jsonb NOT NULL DEFAULT '{}'::jsonb,
  version bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, guild_id),
  -- The primary key serves the cascade's lookups (both columns are given).
  FOREIGN KEY (guild_id, user_id) REFERENCES members (guild_id, user_id) ON DELETE CASCADE
);
