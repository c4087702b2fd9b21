-- delete: marks a link deleted (its ref then answers 410 and is not given out again); no row
-- changes for a ref that is unknown or deleted already.
-- Parameters: :ref, :deleted_at_ms. Idempotent: yes.
UPDATE links SET deleted_at_ms = :deleted_at_ms WHERE ref = :ref AND deleted_at_ms IS NULL
