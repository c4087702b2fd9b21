-- insert_link: adds a (ref, campaign, source, medium) to event_links; its id is
-- lastInsertedRowID. Parameters (positional): ref, campaign, source, medium.
-- Idempotent: no (the writer looks it up first, link_id.sql).
INSERT INTO event_links (ref, campaign, source, medium) VALUES (?, ?, ?, ?)
