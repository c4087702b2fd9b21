-- durability_normal: a commit survives kill -9; the last ones before a power loss may be lost
-- (--durability normal, and every derived file, which is rebuilt if need be).
-- Parameters: none. Idempotent: yes.
PRAGMA synchronous = NORMAL
