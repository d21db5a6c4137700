-- The janitor deletes rows long past their expiry in bounded batches; these indexes keep each batch
-- from scanning its table.
CREATE INDEX one_time_tokens_expires_idx ON one_time_tokens (expires_at);
CREATE INDEX oauth2_tokens_expires_idx ON oauth2_tokens (expires_at);
CREATE INDEX oauth2_codes_expires_idx ON oauth2_codes (expires_at);
CREATE INDEX pending_uploads_expires_idx ON pending_uploads (expires_at);
CREATE INDEX mfa_attempts_attempted_idx ON mfa_attempts (attempted_at);
