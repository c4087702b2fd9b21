-- Migration 0007: access keys an operator creates and revokes while the daemon runs.
--
-- Only a keyed hash of each secret is kept (digest: HMAC-SHA256 with the installation's
-- hashing secret, 64 hex digits); the secret itself is shown once, when the key is created.
-- A key is never deleted: a revoked one keeps its row (revoked_at_ms set) so the list says
-- when it stopped working. Times are UTC ms; last_used_at_ms is written at most once a
-- minute per key and daemon.
CREATE TABLE access_keys (
    id              TEXT    PRIMARY KEY,
    name            TEXT    NOT NULL,
    kind            TEXT    NOT NULL CHECK (kind IN ('ingest', 'read', 'admin')),
    digest          TEXT    NOT NULL UNIQUE,
    created_at_ms   INTEGER NOT NULL,
    last_used_at_ms INTEGER,
    revoked_at_ms   INTEGER
) WITHOUT ROWID;
