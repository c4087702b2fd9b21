-- try_lead: takes the derived-work lock for this connection's session if no other session holds
-- it; true when this session holds it (now or already). Released when the session ends, which a
-- daemon that dies ends with it: another daemon takes over at its next try.
SELECT pg_try_advisory_lock(hashtext('linkpulse:derived-work'))
