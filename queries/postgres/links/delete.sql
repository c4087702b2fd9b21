-- delete: marks a link deleted (its ref then answers 410 and is not given out again). Answers
-- the ref when a link that was not deleted is now.
-- Parameters: :ref, :deleted_at_ms. Idempotent: yes.
UPDATE lp_links SET deleted_at_ms = :deleted_at_ms WHERE ref = :ref AND deleted_at_ms IS NULL
RETURNING ref
