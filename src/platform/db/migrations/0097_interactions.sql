-- Bots as they are written today (docs/bots.md): message components and interaction metadata on messages,
-- application commands with their per-guild permissions, and interactions with their response tokens.
ALTER TABLE messages ADD COLUMN extras jsonb;

CREATE TABLE application_commands (
  id bigint PRIMARY KEY,
  application_id bigint NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  -- No foreign key: a guild command lives with its application, and guilds may live on another shard.
  guild_id bigint,
  type smallint NOT NULL,
  name text NOT NULL,
  body jsonb NOT NULL,
  version bigint NOT NULL
);
CREATE UNIQUE INDEX application_commands_name_idx
  ON application_commands (application_id, COALESCE(guild_id, 0), type, name);
CREATE INDEX application_commands_guild_idx ON application_commands (guild_id) WHERE guild_id IS NOT NULL;

CREATE TABLE application_command_permissions (
  application_id bigint NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  guild_id bigint NOT NULL,
  command_id bigint NOT NULL,
  permissions jsonb NOT NULL,
  PRIMARY KEY (application_id, guild_id, command_id)
);

CREATE TABLE interactions (
  id bigint PRIMARY KEY,
  application_id bigint NOT NULL REFERENCES applications (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  type smallint NOT NULL,
  user_id bigint NOT NULL,
  channel_id bigint NOT NULL,
  guild_id bigint,
  message_id bigint,
  responded_at timestamptz,
  response_type smallint,
  original_message_id bigint,
  -- An ephemeral original response is never stored with the channel's messages, only here.
  ephemeral_message jsonb,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX interactions_expires_idx ON interactions (expires_at);
-- The modal an interaction answered with: its submission (type 5) must name one the person was shown.
ALTER TABLE interactions ADD COLUMN modal_custom_id text;
-- The invoked command's name, for the interaction metadata of its responses.
ALTER TABLE interactions ADD COLUMN command_name text;
