-- vacuum: rewrites the attribution file without its free pages, right after `reset` emptied it
-- (it then holds nothing, so this takes a moment). Without it a replay would keep every page of
-- the old answers and click indexes as free space, and a file whose click indexes got smaller
-- (0004_fingerprint_horizon) would never shrink. Not in a transaction. Parameters: none.
-- Idempotent: yes.
VACUUM main
