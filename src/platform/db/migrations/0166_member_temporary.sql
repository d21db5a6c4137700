-- Temporary membership (issue 16): a member who joined through a `temporary` invite is removed when their
-- last gateway session goes away, unless they hold a role by then (then the membership becomes permanent).
-- The partial index finds a user's temporary memberships on each disconnect without touching the others.
ALTER TABLE members ADD COLUMN temporary boolean NOT NULL DEFAULT false;
CREATE INDEX members_temporary_idx ON members (user_id) WHERE temporary;
