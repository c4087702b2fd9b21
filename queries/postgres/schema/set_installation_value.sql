-- set_installation_value: stores :value under the key :key, replacing what was there (progress marks
-- of `linkpulse copy`, written in the transaction of what they cover).
INSERT INTO lp_installation (key, value) VALUES (:key, :value) ON CONFLICT (key) DO UPDATE SET value = excluded.value
