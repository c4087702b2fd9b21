-- delete_old_quarantine: deletes up to $2 quarantined events received before $1 (UTC ms), oldest
-- first (--quarantine-retention-days), and says how many; run until that is fewer than $2.
WITH deleted AS (
    DELETE FROM lp_quarantine
    WHERE id IN (SELECT id FROM lp_quarantine WHERE received_at_ms < $1 ORDER BY received_at_ms LIMIT $2)
    RETURNING 1
)
SELECT count(*) FROM deleted
