-- Public OAuth2 clients (RFC 6749 §2.1; native and single-page apps): they hold no secret, authenticate at
-- the token endpoint with their client_id alone (`token_endpoint_auth_method` "none") and must use PKCE S256.
ALTER TABLE applications ADD COLUMN public_client boolean NOT NULL DEFAULT false;
