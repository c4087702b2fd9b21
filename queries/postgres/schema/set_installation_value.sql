-- set_installation_value: stores $2 under the key $1, replacing what was there (progress marks
-- of `linkpulse copy`, written in the transaction of what they cover).
INSERT INTO lp_installation (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value
