-- state: which events database the id index belongs to and how far it goes (no row: a new
-- file). Run on the id index file. Parameters: none. Idempotent: yes (read-only).
SELECT database_id, indexed_through_seq FROM index_state
