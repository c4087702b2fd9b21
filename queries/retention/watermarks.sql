-- watermarks: how far the rollups and the attribution have come (seq), read together on a
-- reader of the events database (rollup file attached as agg, attribution file as attr), and
-- the seq a running backup asked retention to stay below (NULL when none, or expired).
-- Retention deletes only events below all of them (and below the id index's watermark), so
-- each derived file's watermark event stays, by which it recognises the database at start.
-- Parameters: now_ms. Idempotent: yes (read-only).
SELECT coalesce((SELECT rolled_through_seq FROM agg.rollup_state), 0) AS rolled_through_seq,
       coalesce((SELECT attributed_through_seq FROM attr.attribution_state), 0) AS attributed_through_seq,
       (SELECT CAST(s.value AS INTEGER) FROM installation s, installation u
        WHERE s.name = 'retention_hold_seq' AND u.name = 'retention_hold_until_ms' AND CAST(u.value AS INTEGER) > :now_ms) AS hold_seq
