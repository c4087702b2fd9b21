-- stored_seq: the seq of the event stored under exactly the id $1, if any.
SELECT seq FROM lp_event_ids WHERE event_id = $1
