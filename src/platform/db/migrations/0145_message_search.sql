-- Message search (issue 16): full-text search on message content with the language-neutral `simple`
-- configuration (lower-cased words, no stemming, no stop words), the same on PGlite and PostgreSQL.
-- The vector is a stored generated column, so an edit, a pin or an unpin re-indexes the message with no
-- code of ours. Besides the words it holds marker lexemes for the `has:` filters and pins ('has link',
-- 'has embed', 'has file', 'has image', 'has video', 'has sound', 'has sticker', 'is pinned'): they
-- contain a space, which no word of the content can, so one GIN index answers words and filters together.
ALTER TABLE messages
  ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('simple'::regconfig, content) || array_to_tsvector(array_remove(ARRAY[
      CASE WHEN content ~* 'https?://[^[:space:]]' THEN 'has link' END,
      CASE WHEN jsonb_array_length(embeds) > 0 THEN 'has embed' END,
      CASE WHEN jsonb_array_length(attachments) > 0 THEN 'has file' END,
      CASE WHEN jsonb_path_exists(attachments, '$[*] ? (@.content_type starts with "image/")')
             OR jsonb_path_exists(embeds, '$[*] ? (exists(@.image) || exists(@.thumbnail) || @.type == "image")')
           THEN 'has image' END,
      CASE WHEN jsonb_path_exists(attachments, '$[*] ? (@.content_type starts with "video/")')
             OR jsonb_path_exists(embeds, '$[*] ? (exists(@.video) || @.type == "video" || @.type == "gifv")')
           THEN 'has video' END,
      CASE WHEN jsonb_path_exists(attachments, '$[*] ? (@.content_type starts with "audio/")') THEN 'has sound' END,
      CASE WHEN cardinality(sticker_ids) > 0 THEN 'has sticker' END,
      CASE WHEN pinned_at IS NOT NULL THEN 'is pinned' END
    ]::text[], NULL))
  ) STORED;
CREATE INDEX messages_search_idx ON messages USING gin (search_vector);

-- Guild-scope searches newest first: walking a guild's messages by id serves the broad queries (a common
-- word, an author) that the GIN index alone would answer by sorting every match.
CREATE INDEX messages_guild_id_idx ON messages (guild_id, id) WHERE guild_id IS NOT NULL;
CREATE INDEX messages_author_idx ON messages (author_id, id) WHERE author_id IS NOT NULL;
