-- delete_old_quarantine: deletes up to :batch quarantined events received before :before_ms (UTC ms), oldest
-- first (--quarantine-retention-days), and says how many; run until that is fewer than :batch.
WITH deleted AS (
    DELETE FROM lp_quarantine
    WHERE id IN (SELECT id FROM lp_quarantine WHERE received_at_ms < :before_ms ORDER BY received_at_ms LIMIT :batch)
    RETURNING 1
)
SELECT count(*) FROM deleted
