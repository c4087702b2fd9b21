-- forget_installation_value: deletes the value under the key :key (the access keys that older
-- versions kept in clear, once they are stored as keyed hashes in lp_access_keys).
DELETE FROM lp_installation WHERE key = :key
