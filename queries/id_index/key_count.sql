-- key_count: how many keys each level of the id index holds (to size the filter and decide
-- when to fold): main, recent. Run on the id index file. Parameters: none. Idempotent: yes
-- (read-only).
SELECT (SELECT count(*) FROM event_ids), (SELECT count(*) FROM recent_event_ids)
