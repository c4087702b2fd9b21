-- Migration 0009 (PostgreSQL): the counting rules of CountingRules version 2, as on SQLite.
-- Opens are counted by match type (open_rate counts only the opens a link brought): five
-- columns of lp_rollups, 0 for what was counted before.
ALTER TABLE lp_rollups
    ADD COLUMN opens_install_referrer bigint NOT NULL DEFAULT 0,
    ADD COLUMN opens_click_id         bigint NOT NULL DEFAULT 0,
    ADD COLUMN opens_ref              bigint NOT NULL DEFAULT 0,
    ADD COLUMN opens_fingerprint      bigint NOT NULL DEFAULT 0,
    ADD COLUMN opens_organic          bigint NOT NULL DEFAULT 0;

-- An install or open no click brought keeps its own campaign (source and medium it kept
-- already): the stored attributions of such events take it back from the event.
UPDATE lp_attributions a SET campaign = e.campaign
FROM lp_events e
WHERE e.seq = a.seq AND a.match_type = 'organic' AND e.campaign IS NOT NULL AND a.campaign IS NULL;

-- The rollups are counted again from the raw events by the next rounds, unless retention has
-- deleted raw events (a raw horizon is recorded): the rollups are the only counts of those and
-- stay as counted; what is counted from now on follows the new rules.
DELETE FROM lp_rollups WHERE NOT EXISTS (SELECT 1 FROM lp_installation WHERE key = 'raw_horizon_ms');
UPDATE lp_derived_state SET through_seq = 0, updated_at = now()
WHERE job = 'rollups' AND NOT EXISTS (SELECT 1 FROM lp_installation WHERE key = 'raw_horizon_ms');
