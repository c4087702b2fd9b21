-- release_retention: ends a backup's retention hold (hold_retention.sql). Run on the events
-- database. Parameters: none. Idempotent: yes.
DELETE FROM installation WHERE name IN ('retention_hold_seq', 'retention_hold_until_ms')
