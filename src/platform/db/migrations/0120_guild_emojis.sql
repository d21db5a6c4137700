-- Custom guild emojis (Discord's emoji object). The image lives in the object store at `emojis/<id>` and is
-- served by the media proxy at `/emojis/<id>.<ext>`; `roles` restricts who may use the emoji (empty = everyone).
CREATE TABLE guild_emojis (
  id bigint PRIMARY KEY,
  guild_id bigint NOT NULL REFERENCES guilds (id) ON DELETE CASCADE,
  name text NOT NULL,
  roles bigint[] NOT NULL DEFAULT '{}',
  user_id bigint REFERENCES users (id) ON DELETE SET NULL,
  animated boolean NOT NULL DEFAULT false,
  available boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX guild_emojis_guild_idx ON guild_emojis (guild_id, id);
