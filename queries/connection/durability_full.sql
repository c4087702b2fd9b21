-- durability_full: an acknowledged commit survives kill -9 and power loss (--durability full).
-- Parameters: none. Idempotent: yes.
PRAGMA synchronous = FULL
