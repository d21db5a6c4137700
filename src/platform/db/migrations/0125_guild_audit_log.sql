-- The guild audit log (Discord's audit log entries): who changed what in a guild, and why (`X-Audit-Log-Reason`).
-- `id` is a snowflake, so its order is time order and the before/after cursors of the route. `user_id` and
-- `target_id` are kept without foreign keys: an entry outlives the user, channel or role it names.
CREATE TABLE guild_audit_log (
  id bigint PRIMARY KEY,
  guild_id bigint NOT NULL REFERENCES guilds (id) ON DELETE CASCADE,
  user_id bigint,
  target_id bigint,
  action_type integer NOT NULL,
  -- [{key, old_value?, new_value?}] as sent.
  changes jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- Discord's optional entry info (values are strings), or null.
  options jsonb,
  reason text
);
CREATE INDEX guild_audit_log_guild_idx ON guild_audit_log (guild_id, id DESC);
