-- progress: how far the rollups are behind the stored events: the newest stored seq, the
-- rollup watermark, when the oldest event not yet counted was received (NULL when every
-- stored event is counted), and the attribution watermark. Run on a reader connection
-- (rollup file attached as agg, attribution file as attr). Parameters: none. Idempotent: yes
-- (read-only).
SELECT (SELECT coalesce(max(seq), 0) FROM event_rows), r.rolled_through_seq,
       (SELECT occurred_at_ms + received_delta FROM event_rows WHERE seq > r.rolled_through_seq ORDER BY seq LIMIT 1),
       (SELECT coalesce(max(attributed_through_seq), 0) FROM attr.attribution_state)
FROM agg.rollup_state r
