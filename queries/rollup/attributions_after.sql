-- attributions_after: the attribution the follower stored for the events a rollup pass reads
-- (events_after.sql, the same two parameters), in seq order: the pass reads both side by side
-- and pairs them by seq, where a join looked each event's row up in the table's B-tree.
-- Parameters: after (the rollup watermark), through (the attribution watermark).
-- Idempotent: yes (read-only).
SELECT seq, match_type, matched_click_seq
FROM attr.attribution
WHERE seq > :after_seq AND seq <= :through_seq
ORDER BY seq
