-- Migration 0014 (PostgreSQL): the counting rules of CountingRules version 3, as on SQLite: the
-- rollups count by audience.
-- lp_rollups gains rows of six more dimensions (country, device, os, browser, referrer host,
-- language: RollupCells.Dimension codes 5 to 10), an attributed install or open counted under
-- its click's audience. No column changes.

-- The rollups are counted again from the raw events by the next rounds, unless retention has
-- deleted raw events (a raw horizon is recorded): the rollups are the only counts of those and
-- stay as counted (without audience rows); what is counted from now on has them.
DELETE FROM lp_rollups WHERE NOT EXISTS (SELECT 1 FROM lp_installation WHERE key = 'raw_horizon_ms');
UPDATE lp_derived_state SET through_seq = 0, updated_at = now()
WHERE job = 'rollups' AND NOT EXISTS (SELECT 1 FROM lp_installation WHERE key = 'raw_horizon_ms');
