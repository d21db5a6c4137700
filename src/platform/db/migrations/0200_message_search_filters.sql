-- Message search filters in the GIN index (issue 16, docs/performance.md#search): besides the words and the
-- `has:`/pinned markers of 0145, the search vector now holds one marker lexeme for the author ('from <id>')
-- and one for the channel ('in <id>'), so `author_id` and `channel_id` filters meet the words in one GIN
-- scan instead of a heap visit per candidate (or a bitmap of every message of the channel). Like the other
-- markers they contain a space, which no word of the content can. PostgreSQL 15 cannot change a generated
-- column's expression in place, so the column (and its index) is rebuilt: this migration rewrites the
-- messages table once.
ALTER TABLE messages DROP COLUMN search_vector;
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
      CASE WHEN pinned_at IS NOT NULL THEN 'is pinned' END,
      'from ' || author_id::text,
      'in ' || channel_id::text
    ]::text[], NULL))
  ) STORED;
CREATE INDEX messages_search_idx ON messages USING gin (search_vector);
