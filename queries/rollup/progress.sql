-- progress: how far the rollups are behind the stored events: the newest stored seq, the
-- rollup watermark, when the oldest event not yet counted was received (NULL when every
-- stored event is counted), and the attribution watermark. Run on a reader connection
-- (rollup file attached as agg, attribution file as attr). Parameters: none. Idempotent: yes
-- (read-only).
-- Sealed events (event_blocks, event_archive) count as stored (after a rebuild they are not
-- counted yet).
SELECT max(coalesce((SELECT max(seq) FROM event_rows), 0), coalesce((SELECT max(last_seq) FROM event_blocks), 0)),
       r.rolled_through_seq,
       (SELECT at FROM (SELECT seq, occurred_at_ms + received_delta AS at FROM event_rows WHERE seq > r.rolled_through_seq
                        UNION ALL
                        SELECT seq, occurred_at_ms + received_delta FROM event_archive WHERE seq > r.rolled_through_seq
                        ORDER BY 1 LIMIT 1)),
       (SELECT coalesce(max(attributed_through_seq), 0) FROM attr.attribution_state)
FROM agg.rollup_state r
