-- keep_installation_value: stores :value under the key :key unless the key holds a value already
-- (the first daemon to start generates the keys and the hashing secret; the others keep
-- theirs to themselves and read the stored ones).
INSERT INTO lp_installation (key, value) VALUES (:key, :value) ON CONFLICT (key) DO NOTHING
