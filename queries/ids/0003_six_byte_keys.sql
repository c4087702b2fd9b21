-- Keys of 48 bits (the first 6 bytes of the id's SHA-256, signed; EventIdKey): SQLite stores
-- them in 6 bytes instead of 8, a ninth of the file. Equal keys were always confirmed by the
-- ids themselves; with 48 bits, a lookup at a billion ids finds another id's key about once in
-- 280,000. Both levels are copied in key order with the key shifted (an arithmetic shift keeps
-- the order, so each copy appends), and the view over them is made again. The file's pages
-- freed here are given back when it is opened next (AppDatabase.compactIfLargelyFree).
DROP VIEW indexed_ids;

CREATE TABLE event_ids_48 (
    id_key INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    PRIMARY KEY (id_key, seq)
) WITHOUT ROWID;
INSERT OR IGNORE INTO event_ids_48 (id_key, seq) SELECT id_key >> 16, seq FROM event_ids ORDER BY id_key, seq;
DROP TABLE event_ids;
ALTER TABLE event_ids_48 RENAME TO event_ids;

CREATE TABLE recent_event_ids_48 (
    id_key INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    PRIMARY KEY (id_key, seq)
) WITHOUT ROWID;
INSERT OR IGNORE INTO recent_event_ids_48 (id_key, seq) SELECT id_key >> 16, seq FROM recent_event_ids ORDER BY id_key, seq;
DROP TABLE recent_event_ids;
ALTER TABLE recent_event_ids_48 RENAME TO recent_event_ids;

-- Both levels as one, for operators and tests (the store's statements read the tables).
CREATE VIEW indexed_ids AS
SELECT id_key, seq FROM event_ids
UNION ALL
SELECT id_key, seq FROM recent_event_ids;
