-- A member who leaves a guild (leave, kick, ban) leaves its threads too, as on Discord, whichever path
-- removed the `members` row.
CREATE FUNCTION thread_members_on_member_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM thread_members tm
   USING threads t
   WHERE t.channel_id = tm.thread_id AND t.guild_id = OLD.guild_id AND tm.user_id = OLD.user_id;
  RETURN OLD;
END;
$$;

CREATE TRIGGER members_leave_threads
  AFTER DELETE ON members
  FOR EACH ROW EXECUTE FUNCTION thread_members_on_member_delete();
