-- keep_installation_value: stores $2 under the key $1 unless the key holds a value already
-- (the first daemon to start generates the keys and the hashing secret; the others keep
-- theirs to themselves and read the stored ones).
INSERT INTO lp_installation (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING
