-- no_autocheckpoint: the connection's commits never checkpoint; another connection does (the
-- events database, whose checkpoint job runs on a connection of its own, and the attribution
-- file, whose follower commits after every ingest commit: see EventStore and AttributionStore).
-- Parameters: none. Idempotent: yes.
PRAGMA wal_autocheckpoint = 0
