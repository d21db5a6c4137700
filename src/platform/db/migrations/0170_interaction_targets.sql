-- The invoked command's type and a context-menu command's target, for its responses: type 23 messages whose
-- interaction_metadata names the target user or message (docs/bots.md#user-and-message-commands).
ALTER TABLE interactions ADD COLUMN command_type smallint;
ALTER TABLE interactions ADD COLUMN target_id bigint;
