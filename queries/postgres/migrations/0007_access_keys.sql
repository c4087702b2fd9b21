-- Migration 0007 (PostgreSQL): access keys, as in the SQLite events database, shared by every
-- daemon on the database. Only a keyed hash of each secret is kept (digest: HMAC-SHA256 with
-- the installation's hashing secret); a revoked key keeps its row. Times are UTC ms.
CREATE TABLE lp_access_keys (
    id              text   PRIMARY KEY,
    name            text   NOT NULL,
    kind            text   NOT NULL CHECK (kind IN ('ingest', 'read', 'admin')),
    digest          text   NOT NULL UNIQUE,
    created_at_ms   bigint NOT NULL,
    last_used_at_ms bigint,
    revoked_at_ms   bigint
);
