-- installation_values: every stored installation value (keys, hashing secret, database id).
SELECT key, value FROM lp_installation
