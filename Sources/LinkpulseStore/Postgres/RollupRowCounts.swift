import LinkpulseDomain

extension ConversionCounts {
    /// How many counts a row of `lp_rollups` holds (`row`): the layout of `RollupCells` on
    /// PostgreSQL.
    static let rowColumnCount = rowColumns.count
    /// The names of `row`'s columns, in its order (those of `lp_rollups`).
    static let rowColumns = [
        "events", "clicks", "fallbacks", "installs_click_id", "installs_ref", "installs_fingerprint", "installs_organic", "opens",
        "deferred_opens", "installs_install_referrer", "opens_install_referrer", "opens_click_id", "opens_ref", "opens_fingerprint",
        "opens_organic",
    ]

    /// The counts as a row of `lp_rollups` holds them, in its column order (`events` …
    /// `installs_install_referrer`, then the five opens by match type): what
    /// `rollups/cells.sql` and `stats/rollup_counts.sql` read and `rollups/upsert.sql` writes.
    var row: [Int64] {
        [events, clicks, fallbacks, installsClickId, installsRef, installsFingerprint, installsOrganic, opens, deferredOpens,
         installsInstallReferrer, opensInstallReferrer, opensClickId, opensRef, opensFingerprint, opensOrganic].map(Int64.init)
    }

    /// The counts of a row's columns in `row` order, each times `sign`.
    init(row v: [Int64], sign: Int = 1) {
        self.init()
        let n = v.map { sign * Int($0) }
        (events, clicks, fallbacks, installsClickId, installsRef) = (n[0], n[1], n[2], n[3], n[4])
        (installsFingerprint, installsOrganic, opens, deferredOpens, installsInstallReferrer) = (n[5], n[6], n[7], n[8], n[9])
        (opensInstallReferrer, opensClickId, opensRef, opensFingerprint, opensOrganic) = (n[10], n[11], n[12], n[13], n[14])
    }
}
