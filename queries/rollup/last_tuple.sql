-- last_tuple: the highest link tuple id (0 when none): a pass counted elsewhere is written only
-- if no tuple was added since it read them. Parameters: none. Idempotent: yes (read-only).
SELECT coalesce(max(id), 0) FROM link_tuples
