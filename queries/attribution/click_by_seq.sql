-- click_by_seq: a stored click by seq: its event id, time and link dimensions. No row when
-- that seq is not a click. Run on an events reader (EventStore.attributionPage).
-- Parameters: seq. Idempotent: yes (read-only).
SELECT event_id, occurred_at_ms, ref, campaign, source, medium
FROM events WHERE seq = :seq AND type = 'click'
