-- delete_block: removes one sealed block (retention emptied it, or it was rewritten as a new
-- block without some of its events). Parameter: its id. Idempotent: yes.
DELETE FROM event_blocks WHERE id = :id
