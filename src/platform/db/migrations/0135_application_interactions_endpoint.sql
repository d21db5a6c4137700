-- Interactions delivered over HTTP (docs/bots.md): each application has an Ed25519 key pair, like Discord's.
-- `verify_key` is the hex of the raw 32-byte public key; the private key (PKCS #8) is stored sealed
-- (AES-256-GCM under a key derived from the MFA secret, bound to the application id). Applications from
-- before this migration have neither; they get their pair the first time it is needed.
ALTER TABLE applications ADD COLUMN verify_key text;
ALTER TABLE applications ADD COLUMN interactions_private_key text;
-- When set, interactions are POSTed here, signed, instead of INTERACTION_CREATE on the gateway.
ALTER TABLE applications ADD COLUMN interactions_endpoint_url text;
