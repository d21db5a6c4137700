-- OAuth2 authorisation codes (docs/oauth2.md#oauth2-provider). A code hangs off the user+app grant that consent creates, so
-- revoking the authorisation (or a reused refresh token revoking the grant) also kills codes not yet redeemed.
-- Like every other secret, the code is stored only as its SHA-256 digest.
CREATE TABLE oauth2_codes (
  code_hash text PRIMARY KEY,
  grant_id bigint NOT NULL REFERENCES oauth2_grants (id) ON DELETE CASCADE,
  redirect_uri text NOT NULL,
  scopes text[] NOT NULL,
  code_challenge text,
  expires_at timestamptz NOT NULL,
  consumed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth2_codes_grant_idx ON oauth2_codes (grant_id);
CREATE INDEX oauth2_grants_application_idx ON oauth2_grants (application_id);
