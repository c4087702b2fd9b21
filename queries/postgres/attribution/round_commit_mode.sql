-- round_commit_mode: a round's commit does not wait for its WAL to reach the disk. Nothing is
-- lost by it: a round only derives from raw events already durable, and the watermark commits
-- with it, so after a crash that loses a round, the next leader replays the same events from
-- the same watermark through the same rules and writes exactly the same answers (ingest
-- commits, which acknowledge events, keep synchronous_commit on).
SET LOCAL synchronous_commit TO off
