-- progress: how far the rollups are behind the stored events: the newest stored seq, the
-- rollup watermark, when the oldest event not yet counted was received (NULL when every
-- stored event is counted), and the attribution watermark. Run on a reader connection
-- (rollup file attached as agg, attribution file as attr). Parameters: none. Idempotent: yes
-- (read-only).
-- The newest seq is event_rows' (sealing never moves the newest row); events not yet counted
-- may be sealed (after a rebuild), so the oldest of them is looked for in event_archive too.
SELECT (SELECT coalesce(max(seq), 0) FROM event_rows) AS stored_through_seq,
       r.rolled_through_seq AS counted_through_seq,
       (SELECT at FROM (SELECT seq, occurred_at_ms + received_delta AS at FROM event_rows WHERE seq > r.rolled_through_seq
                        UNION ALL
                        SELECT seq, occurred_at_ms + received_delta FROM event_archive WHERE seq > r.rolled_through_seq
                        ORDER BY 1 LIMIT 1)) AS oldest_uncounted_received_at_ms,
       (SELECT coalesce(max(attributed_through_seq), 0) FROM attr.attribution_state) AS attributed_through_seq
FROM agg.rollup_state r
