-- adopt_counting_rules: records that what the rollups count from now on follows the counting
-- rules :counting_rules (CountingRules.version), without counting anything again (retention deleted raw
-- events: the rollups of those are the only counts left).
-- Parameters: counting_rules. Idempotent: yes.
UPDATE rollup_state SET counting_rules = :counting_rules
