-- indexed_seqs_for_key: the seqs of indexed events whose id has this 64-bit key, from both
-- levels of the id index. Parameters: id_key. Reads the attached id index (schema
-- "ids"). Idempotent: yes (read-only).
SELECT seq FROM ids.event_ids WHERE id_key = :id_key
UNION ALL
SELECT seq FROM ids.recent_event_ids WHERE id_key = :id_key
