-- delete: marks a link deleted (its ref then answers 410 and is not given out again). Answers
-- the ref when a link that was not deleted is now.
-- Parameters: $1 ref, $2 deleted_at_ms. Idempotent: yes.
UPDATE lp_links SET deleted_at_ms = $2 WHERE ref = $1 AND deleted_at_ms IS NULL
RETURNING ref
