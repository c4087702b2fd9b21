-- notify: tells every daemon listening on the derived-work channel (each one's derived-work
-- connection does) something about attribution, delivered when the transaction that sends it
-- commits: 'resolve' from an ingest commit that stored a /v1/resolve event (an app waits for
-- its answer: the leader runs a round now), or the seq through which a round has attributed
-- every event (the daemons wake the requests waiting for it).
SELECT pg_notify('linkpulse_derived', :payload)
