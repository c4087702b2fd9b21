/// The `# HELP` text of every metric the daemon exports. swift-metrics, through which the code
/// makes its metrics, carries no description, so `/metrics` adds these lines to the registry's
/// text; `MetricHelpTests` fails when a metric in `Sources/` has none here.
enum MetricHelp {
    static let texts: [String: String] = [
        "linkpulse_attribution_backlog_events": "Stored events not yet attributed.",
        "linkpulse_attribution_lag_seconds": "Age of the oldest stored event not yet attributed.",
        "linkpulse_attribution_recent_click_capacity": "Clicks the attribution keeps in memory at most (the recent clicks an install or open can match).",
        "linkpulse_attribution_recent_click_entries": "Clicks the attribution keeps in memory now.",
        "linkpulse_database_bytes": "Size of each database file (file: events, ids, attribution, rollups).",
        "linkpulse_disk_free_bytes": "Free space of the data directory's filesystem, for this process.",
        "linkpulse_disk_total_bytes": "Size of the data directory's filesystem.",
        "linkpulse_export_failures_total": "Scheduled CSV exports that failed (each is retried at its next run).",
        "linkpulse_export_files_total": "CSV files the scheduled exports wrote.",
        "linkpulse_ingest_bot_events_total": "Stored events flagged as bots.",
        "linkpulse_ingest_commit_duration_seconds": "Duration of each group commit of the ingest writer.",
        "linkpulse_ingest_commit_events": "Events in each group commit of the ingest writer.",
        "linkpulse_ingest_commit_failures_total": "Group commits that failed (their requests were answered 503).",
        "linkpulse_ingest_events_total": "Events received, by outcome (accepted, duplicate, rejected).",
        "linkpulse_ingest_id_tail_ids": "Event ids in the recent part of the id index, not yet merged into its sorted part.",
        "linkpulse_ingest_insufficient_storage_requests_total": "Ingest requests refused because the disk was short of space.",
        "linkpulse_ingest_overloaded_requests_total": "Ingest requests refused with 503 because the queue was full.",
        "linkpulse_ingest_paced_seconds_total": "Time commits were held by ingest pacing while the stats were behind.",
        "linkpulse_ingest_pacing": "1 while ingest pacing holds commits (the stats are behind and not catching up), else 0.",
        "linkpulse_ingest_queue_events": "Events waiting in the ingest queue when a commit starts.",
        "linkpulse_link_visits_total": "Visits of hosted links, by outcome (stored, continued, unstored).",
        "linkpulse_memory_peak_resident_bytes": "Highest resident memory of the process since it started.",
        "linkpulse_memory_resident_bytes": "Resident memory of the process, by kind (anonymous, file, shared).",
        "linkpulse_resolve_answers_total": "Answers of /v1/resolve, by match_type (install_referrer, click_id, ref, fingerprint, organic).",
        "linkpulse_resolve_pending_total": "Resolves answered before their attribution was ready (503 with Retry-After).",
        "linkpulse_resolve_rate_limited_total": "Resolves refused by the per-device rate limit.",
        "linkpulse_retention_deleted_total": "Raw events deleted by retention.",
        "linkpulse_retention_raw_horizon_seconds": "Unix time before which raw events are deleted (retention); 0 when everything is kept.",
        "linkpulse_retention_raw_run_duration_seconds": "Duration of each retention run over the raw events.",
        "linkpulse_rollup_backlog_events": "Attributed events not yet counted by the rollups.",
        "linkpulse_rollup_events_total": "Events the rollups have counted.",
        "linkpulse_rollup_lag_seconds": "How far the stats are behind: age of the oldest stored event not yet counted.",
        "linkpulse_rollup_link_tuples": "Distinct (ref, campaign, source, medium) combinations the rollups know.",
        "linkpulse_rollup_pass_duration_seconds": "Duration of each rollup pass.",
        "linkpulse_sealed_events_total": "Raw events moved into compressed sealed blocks.",
        "linkpulse_segment_messages_total": "Segment-compatible messages received, by outcome (stored, duplicate, ignored, rejected).",
        "linkpulse_store_checkpoint_duration_seconds": "Duration of each WAL checkpoint.",
        "linkpulse_store_id_merge_step_duration_seconds": "Duration of each step merging recent event ids into the id index.",
        "linkpulse_user_agent_cache_capacity": "User agents the classifier remembers at most (past it, it starts over).",
        "linkpulse_user_agent_cache_entries": "User agents the classifier remembers now (their device, system, browser and bot verdict).",
        "linkpulse_user_agent_lookups_total": "User agents classified, by answer (remembered: from memory; classified: by the rules).",
        "linkpulse_wal_bytes": "Size of each database's write-ahead log (file: events, ids, attribution, rollups).",
        "process_open_fds": "Open file descriptors of the process.",
        "process_resident_memory_bytes": "Resident memory of the process.",
        "process_virtual_memory_bytes": "Virtual memory of the process.",
    ]

    /// The registry's exposition with a `# HELP` line before each metric's `# TYPE` line.
    static func annotate(_ exposition: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(exposition.count + texts.count * 80)
        for line in exposition.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if line.starts(with: Array("# TYPE ".utf8)) {
                let name = String(decoding: line.dropFirst(7).prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self)
                if let help = texts[name] { out += Array("# HELP \(name) \(help)\n".utf8) }
            }
            out += line
            out.append(UInt8(ascii: "\n"))
        }
        out.removeLast()  // the split gave back the text's own last newline, and one more
        return out
    }
}
