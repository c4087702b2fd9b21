-- link_id: the id of a (ref, campaign, source, medium) in event_links, if it is there (IS:
-- NULL matches NULL). Parameters (positional): ref, campaign, source, medium.
-- Idempotent: yes (read-only).
SELECT id FROM event_links WHERE ref IS ?1 AND campaign IS ?2 AND source IS ?3 AND medium IS ?4
ORDER BY id LIMIT 1
