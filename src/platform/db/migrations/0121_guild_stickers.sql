-- Custom guild stickers (Discord's sticker object, type 2 = guild). The image lives in the object store at
-- `stickers/<id>` and is served by the media proxy at `/stickers/<id>.<ext>`. Messages keep the ids they were
-- sent with in `messages.sticker_ids` (migration 0060).
CREATE TABLE guild_stickers (
  id bigint PRIMARY KEY,
  guild_id bigint NOT NULL REFERENCES guilds (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text,
  tags text NOT NULL,
  -- 1 PNG, 2 APNG, 4 GIF (3 Lottie is not accepted)
  format_type integer NOT NULL,
  available boolean NOT NULL DEFAULT true,
  user_id bigint REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX guild_stickers_guild_idx ON guild_stickers (guild_id, id);
