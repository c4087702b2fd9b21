-- insert_events: stores the events of one commit that are not stored yet, in one statement.
-- :events: the events as a JSON array of objects whose members are the columns named below
--     (absent or null for NULL), "ordinal" numbering them from 0 with no repeated event_id;
-- :first_seq: the first seq of this commit (lock_seq). An event gets seq :first_seq + ordinal, so seqs have
--     gaps where an event was a duplicate.
-- Yields the seqs stored. An id stored before, by any daemon, is skipped (ON CONFLICT): when
-- another transaction is storing the same id, this one waits for it to end and then skips the
-- id if it committed.
WITH batch AS (
    SELECT * FROM json_to_recordset(:events::json) AS b(
        ordinal bigint, event_id text, type smallint, platform smallint, bot boolean,
        occurred_at_ms bigint, received_at_ms bigint, sent_at_ms bigint,
        ref text, campaign text, source text, medium text, deferred boolean,
        visitor_id text, ip_hash text, device_id text, click_id text, click_id_source smallint,
        resolve boolean, url text, referrer text, user_agent text, os_version text,
        app_version text, bot_reason text, properties text, install_referrer text, audience text)
), fresh AS (
    INSERT INTO lp_event_ids (event_id, seq)
    SELECT event_id, :first_seq::bigint + ordinal FROM batch ORDER BY ordinal
    ON CONFLICT (event_id) DO NOTHING
    RETURNING event_id, seq
), stored AS (
    INSERT INTO lp_events (
        seq, event_id, type, platform, bot, occurred_at_ms, received_at_ms, sent_at_ms,
        ref, campaign, source, medium, deferred, visitor_id, ip_hash, device_id, click_id,
        click_id_source, resolve, url, referrer, user_agent, os_version, app_version,
        bot_reason, properties, install_referrer, audience)
    SELECT f.seq, b.event_id, b.type, b.platform, b.bot, b.occurred_at_ms, b.received_at_ms, b.sent_at_ms,
           b.ref, b.campaign, b.source, b.medium, b.deferred, b.visitor_id, b.ip_hash, b.device_id, b.click_id,
           b.click_id_source, coalesce(b.resolve, false), b.url, b.referrer, b.user_agent, b.os_version, b.app_version,
           b.bot_reason, b.properties, b.install_referrer, b.audience
    FROM batch b JOIN fresh f ON f.event_id = b.event_id
    ORDER BY f.seq
    RETURNING seq
)
SELECT seq FROM stored
