-- hold_retention: asks the daemon's retention to delete no event at or above a seq until an
-- instant (UTC ms; a backup that dies leaves a hold that expires by itself). Run on the events
-- database. Parameters: seq, until_ms. Idempotent: yes.
INSERT OR REPLACE INTO installation (name, value)
VALUES ('retention_hold_seq', CAST(:seq AS INTEGER)), ('retention_hold_until_ms', CAST(:until_ms AS INTEGER))
