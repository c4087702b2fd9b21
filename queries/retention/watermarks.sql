-- watermarks: how far the rollups and the attribution have come (seq), read together on a
-- reader of the events database (rollup file attached as agg, attribution file as attr).
-- Retention deletes only events below both (and below the id index's watermark), so each
-- derived file's watermark event stays, by which it recognises the database at start.
-- Parameters: none. Idempotent: yes (read-only).
SELECT coalesce((SELECT rolled_through_seq FROM agg.rollup_state), 0),
       coalesce((SELECT attributed_through_seq FROM attr.attribution_state), 0)
