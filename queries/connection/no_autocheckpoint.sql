-- no_autocheckpoint: the connection's commits never checkpoint; another connection does (the
-- attribution file: its follower commits after every ingest commit, see AttributionStore).
-- Parameters: none. Idempotent: yes.
PRAGMA wal_autocheckpoint = 0
