-- set_attribution_window: records the attribution window in force (for the notice at open
-- when it changes). Parameters (positional): window_ms. Idempotent: yes.
UPDATE rollup_state SET attribution_window_ms = ?
