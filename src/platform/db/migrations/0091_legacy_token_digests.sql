-- Tokens issued before keyed check parts existed (docs/accounts.md, "Token check"): their digests are kept so
-- they keep working; every token issued from now on carries a check part and is not listed here.
CREATE TABLE legacy_token_digests (token_hash text PRIMARY KEY);
INSERT INTO legacy_token_digests (token_hash)
  SELECT token_hash FROM sessions
  UNION SELECT bot_token_hash FROM applications WHERE bot_token_hash IS NOT NULL;
