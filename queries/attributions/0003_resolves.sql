-- What the answers to apps (`POST /v1/resolve`) need beyond the match itself, derived like the
-- rest of this file (a replay in store order rebuilds it the same):
-- * attribution.candidates: for a fingerprint match, how many stored clicks fitted the rule
--   (the newest won); NULL for the other match types (1 with a click, 0 organic).
-- * resolve_devices: every device that resolved, with the seq of its first resolve (its first
--   session). The device is `device_id` when the app sent one, else the visitor id, in the
--   key form of `attribution/events_after.sql` and `answer/attributed_event.sql`.
ALTER TABLE attribution ADD COLUMN candidates INTEGER;

CREATE TABLE resolve_devices (
    device    TEXT    PRIMARY KEY,
    first_seq INTEGER NOT NULL
) WITHOUT ROWID;
