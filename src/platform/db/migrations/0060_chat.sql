-- Chat core: guilds (communities), channels, roles, members, bans, invites, messages, reactions, DMs,
-- relationships and read states. Ids are snowflakes; permission bitfields are bigint.

CREATE TABLE guilds (
  id bigint PRIMARY KEY,
  name text NOT NULL,
  icon text,
  banner text,
  splash text,
  owner_id bigint NOT NULL REFERENCES users (id),
  system_channel_id bigint,
  system_channel_flags integer NOT NULL DEFAULT 0,
  rules_channel_id bigint,
  afk_channel_id bigint,
  afk_timeout integer NOT NULL DEFAULT 300,
  features text[] NOT NULL DEFAULT '{}',
  verification_level integer NOT NULL DEFAULT 0,
  mfa_level integer NOT NULL DEFAULT 0,
  nsfw_level integer NOT NULL DEFAULT 0,
  explicit_content_filter integer NOT NULL DEFAULT 0,
  default_message_notifications integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX guilds_owner_idx ON guilds (owner_id);

-- Guild channels and DM channels alike. `permission_overwrites` is a JSON array of
-- {id, type, allow, deny} (bitfields as decimal strings): read with the channel in one row.
-- `dm_key` ("<low id>:<high id>") makes 1:1 DM creation idempotent under concurrency.
CREATE TABLE channels (
  id bigint PRIMARY KEY,
  type smallint NOT NULL,
  guild_id bigint REFERENCES guilds (id) ON DELETE CASCADE,
  name text,
  topic text,
  position integer NOT NULL DEFAULT 0,
  parent_id bigint,
  nsfw boolean NOT NULL DEFAULT false,
  rate_limit_per_user integer NOT NULL DEFAULT 0,
  bitrate integer,
  user_limit integer,
  permission_overwrites jsonb NOT NULL DEFAULT '[]',
  last_message_id bigint,
  last_pin_timestamp timestamptz,
  owner_id bigint,
  icon text,
  dm_key text UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX channels_guild_idx ON channels (guild_id);

CREATE TABLE dm_recipients (
  channel_id bigint NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  PRIMARY KEY (channel_id, user_id)
);
CREATE INDEX dm_recipients_user_idx ON dm_recipients (user_id);

CREATE TABLE roles (
  id bigint PRIMARY KEY,
  guild_id bigint NOT NULL REFERENCES guilds (id) ON DELETE CASCADE,
  name text NOT NULL,
  color integer NOT NULL DEFAULT 0,
  position integer NOT NULL DEFAULT 0,
  permissions bigint NOT NULL DEFAULT 0,
  hoist boolean NOT NULL DEFAULT false,
  mentionable boolean NOT NULL DEFAULT false,
  managed boolean NOT NULL DEFAULT false,
  bot_user_id bigint,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX roles_guild_idx ON roles (guild_id);

-- `roles` never holds @everyone (its id is the guild id and every member has it).
CREATE TABLE members (
  guild_id bigint NOT NULL REFERENCES guilds (id) ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  nick text,
  avatar text,
  roles bigint[] NOT NULL DEFAULT '{}',
  joined_at timestamptz NOT NULL DEFAULT now(),
  mute boolean NOT NULL DEFAULT false,
  deaf boolean NOT NULL DEFAULT false,
  communication_disabled_until timestamptz,
  PRIMARY KEY (guild_id, user_id)
);
CREATE INDEX members_user_idx ON members (user_id);

CREATE TABLE bans (
  guild_id bigint NOT NULL REFERENCES guilds (id) ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  reason text,
  banned_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (guild_id, user_id)
);

-- Invite codes are public identifiers (listed to moderators, shown in invite links), not credentials,
-- so they are stored as they are.
CREATE TABLE invites (
  code text PRIMARY KEY,
  guild_id bigint NOT NULL REFERENCES guilds (id) ON DELETE CASCADE,
  channel_id bigint NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  inviter_id bigint REFERENCES users (id) ON DELETE SET NULL,
  max_age integer NOT NULL DEFAULT 0,
  max_uses integer NOT NULL DEFAULT 0,
  uses integer NOT NULL DEFAULT 0,
  temporary boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  expires_at timestamptz
);
CREATE INDEX invites_guild_idx ON invites (guild_id);
CREATE INDEX invites_channel_idx ON invites (channel_id);

-- The timestamp of a message is its id's; webhook messages carry the webhook's name and avatar.
CREATE TABLE messages (
  id bigint PRIMARY KEY,
  channel_id bigint NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  guild_id bigint,
  author_id bigint REFERENCES users (id) ON DELETE SET NULL,
  webhook_id bigint,
  webhook_name text,
  webhook_avatar text,
  type smallint NOT NULL DEFAULT 0,
  flags integer NOT NULL DEFAULT 0,
  content text NOT NULL DEFAULT '',
  edited_at timestamptz,
  pinned_at timestamptz,
  mention_everyone boolean NOT NULL DEFAULT false,
  tts boolean NOT NULL DEFAULT false,
  mentions bigint[] NOT NULL DEFAULT '{}',
  mention_roles bigint[] NOT NULL DEFAULT '{}',
  embeds jsonb NOT NULL DEFAULT '[]',
  attachments jsonb NOT NULL DEFAULT '[]',
  sticker_ids bigint[] NOT NULL DEFAULT '{}',
  reference_message_id bigint,
  reference_channel_id bigint,
  reference_guild_id bigint
);
CREATE INDEX messages_channel_idx ON messages (channel_id, id);
CREATE INDEX messages_pins_idx ON messages (channel_id, pinned_at) WHERE pinned_at IS NOT NULL;

-- `emoji_key` is the custom emoji id, or the unicode emoji itself.
CREATE TABLE reactions (
  message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  emoji_key text NOT NULL,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  emoji_id bigint,
  emoji_name text,
  animated boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (message_id, emoji_key, user_id)
);

-- One row per direction: (user, target) holds the relationship as `user` sees it.
CREATE TABLE relationships (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  target_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  type smallint NOT NULL,
  nickname text,
  since timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, target_id)
);

CREATE TABLE read_states (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  channel_id bigint NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  last_message_id bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, channel_id)
);
