-- Links between a provider identity (issuer + subject) and a Hearth account. One subject maps to exactly
-- one account; an account holds at most one link per issuer, so a second subject cannot take it over.
CREATE TABLE sso_identities (
  provider_issuer text NOT NULL,
  subject text NOT NULL,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_login_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider_issuer, subject)
);
CREATE UNIQUE INDEX sso_identities_user_issuer_key ON sso_identities (user_id, provider_issuer);
