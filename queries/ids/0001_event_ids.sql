-- Schema of the id index file (data/linkpulse-ids.sqlite): event id keys → event seq.
-- It is derived data: rebuilt from the events table whenever it is missing, belongs to another
-- database, or claims more than the events table holds.

-- id_key may repeat (two ids can share a 64-bit key), so the key is (id_key, seq); the writer
-- confirms a match by comparing event_id in the events table.
CREATE TABLE event_ids (
    id_key INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    PRIMARY KEY (id_key, seq)
) WITHOUT ROWID;

-- indexed_through_seq: every event with seq ≤ this is in event_ids. database_id: the
-- installation.database_id of the events database this index belongs to.
CREATE TABLE index_state (
    singleton           INTEGER PRIMARY KEY CHECK (singleton = 1),
    database_id         TEXT    NOT NULL,
    indexed_through_seq INTEGER NOT NULL
);
