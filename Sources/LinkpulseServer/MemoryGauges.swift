import Foundation
import LinkpulseDomain
import LinkpulseStore
import Metrics

/// At each scrape of `/metrics`, the daemon's memory as it is then, split so that an operator
/// can tell the daemon's own memory from the pages of its binary and libraries (see
/// `ProcessMemory`), beside the sizes of what the store keeps in memory and bounds:
/// - `process_resident_memory_bytes`, `process_virtual_memory_bytes` (Prometheus's standard
///   names), `process_open_fds`;
/// - `linkpulse_memory_resident_bytes{kind="anonymous"|"file"|"shared"}`, and
///   `linkpulse_memory_peak_resident_bytes` (the largest resident set since the start);
/// - `linkpulse_attribution_recent_click_entries` and `…_capacity`: the memory half of the
///   click indexes and its bound (`SQLiteTuning.recentClickEntries`);
/// - `linkpulse_rollup_link_tuples`: the link tuples known, which grow with the distinct
///   (ref, campaign, source, medium) the events name;
/// - `linkpulse_ingest_id_tail_ids`: the ids stored since the last merge into the id index.
///
/// The process figures come from `/proc/self` (the kernel's own figures, read without touching a
/// disk); where there is none (not Linux), those gauges are not recorded. Read at the scrape
/// rather than by a timer: every figure is one reading, taken when somebody looks.
struct MemoryGauges: Sendable {
    let store: @Sendable () -> StoreMemoryReport?
    let resident = Gauge(label: "process_resident_memory_bytes")
    let virtual = Gauge(label: "process_virtual_memory_bytes")
    let openFiles = Gauge(label: "process_open_fds")
    let peakResident = Gauge(label: "linkpulse_memory_peak_resident_bytes")
    let anonymous = Gauge(label: "linkpulse_memory_resident_bytes", dimensions: [("kind", "anonymous")])
    let fileBacked = Gauge(label: "linkpulse_memory_resident_bytes", dimensions: [("kind", "file")])
    let shared = Gauge(label: "linkpulse_memory_resident_bytes", dimensions: [("kind", "shared")])
    let recentClickEntries = Gauge(label: "linkpulse_attribution_recent_click_entries")
    let recentClickCapacity = Gauge(label: "linkpulse_attribution_recent_click_capacity")
    let linkTuples = Gauge(label: "linkpulse_rollup_link_tuples")
    let idTail = Gauge(label: "linkpulse_ingest_id_tail_ids")

    /// - Parameter store: what the store keeps in memory now (the SQLite store's parts); nil
    ///   reports the process alone (the PostgreSQL store).
    init(store: @escaping @Sendable () -> StoreMemoryReport?) {
        self.store = store
    }

    /// Records the gauges from one reading of the process and of the store.
    func record() {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8), let memory = ProcessMemory(status: status) {
            resident.record(Double(memory.residentBytes))
            virtual.record(Double(memory.virtualBytes))
            peakResident.record(Double(memory.peakResidentBytes))
            anonymous.record(Double(memory.anonymousBytes))
            fileBacked.record(Double(memory.fileBytes))
            shared.record(Double(memory.sharedBytes))
        }
        if let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            // The listing's own descriptor is among them.
            openFiles.record(Double(max(descriptors.count - 1, 0)))
        }
        guard let report = store() else { return }
        recentClickEntries.record(Double(report.recentClickEntries))
        recentClickCapacity.record(Double(report.recentClickCapacity))
        linkTuples.record(Double(report.linkTuples))
        idTail.record(Double(report.idTail))
    }
}
