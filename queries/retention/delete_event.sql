-- delete_event: deletes one raw event (retention). Its id stays in the id index, so the same
-- id sent again is still a duplicate. Run on the events database. Parameters:
-- seq. Idempotent: yes.
DELETE FROM event_rows WHERE seq = :seq
