-- stored_seq: the seq of the event stored under exactly the id :event_id, if any.
SELECT seq FROM lp_event_ids WHERE event_id = :event_id
