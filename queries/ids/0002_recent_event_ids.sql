-- The id index in two levels. Merges of the writer's new ids used to insert into event_ids
-- directly: random keys, so a round of 100,000 ids rewrote most leaves of a table of tens of
-- millions (about 1 KB of page writes an id at 17 M ids). Merges now insert into the small
-- recent level below, whose leaves stay few; once it holds an eighth of the main level, it is
-- folded into event_ids in key-range slices (each slice one transaction: its keys inserted
-- there and deleted here), which rewrites the main level once per fold instead of once per
-- round. A lookup reads both levels; a key is always in one of them, or, after a merge redone
-- following a crash, in both (the writer confirms every match by the id itself anyway).
CREATE TABLE recent_event_ids (
    id_key INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    PRIMARY KEY (id_key, seq)
) WITHOUT ROWID;

-- Both levels as one, for operators and tests (the store's statements read the tables).
CREATE VIEW indexed_ids AS
SELECT id_key, seq FROM event_ids
UNION ALL
SELECT id_key, seq FROM recent_event_ids;
