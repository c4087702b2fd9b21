-- vacuum: rewrites the rollup file without its free pages, right after `reset_rollups` emptied
-- it (then it holds little more than the link tuples, so this takes a moment). Without it a
-- recount would keep the old rollups' pages as free space, and a file whose rows got smaller
-- (migration 0010) would never shrink. Not in a transaction. Parameters: none.
-- Idempotent: yes.
VACUUM main
