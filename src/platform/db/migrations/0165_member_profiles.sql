-- Per-guild member profiles (issue 16): a banner and a bio besides the avatar and nick the member row already
-- has. Images are hashes of objects in the object store (`guild-avatars/…`, `guild-banners/…`).
ALTER TABLE members ADD COLUMN banner text;
ALTER TABLE members ADD COLUMN bio text;
