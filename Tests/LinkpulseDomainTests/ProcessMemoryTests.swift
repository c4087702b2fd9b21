import Foundation
import LinkpulseDomain
import Testing

@Suite struct ProcessMemoryTests {
    /// Lines as a Linux 6 kernel writes them (tabs, then spaces to align the counts).
    static let status = """
        Name:\tlinkpulse
        Umask:\t0022
        State:\tS (sleeping)
        VmPeak:\t 1346672 kB
        VmSize:\t 1280912 kB
        VmLck:\t       0 kB
        VmHWM:\t  164524 kB
        VmRSS:\t  150292 kB
        RssAnon:\t  108916 kB
        RssFile:\t   41144 kB
        RssShmem:\t     232 kB
        VmData:\t  330884 kB
        Threads:\t27
        voluntary_ctxt_switches:\t153
        """

    @Test func readsTheResidentSetAndItsHalvesInBytes() throws {
        let memory = try #require(ProcessMemory(status: Self.status))
        #expect(memory == ProcessMemory(
            residentBytes: 150_292 * 1024, peakResidentBytes: 164_524 * 1024, virtualBytes: 1_280_912 * 1024,
            anonymousBytes: 108_916 * 1024, fileBytes: 41_144 * 1024, sharedBytes: 232 * 1024))
        // The kernel's resident set is the sum of its three parts.
        #expect(memory.residentBytes == memory.anonymousBytes + memory.fileBytes + memory.sharedBytes)
    }

    @Test func aStatusWithoutTheSplitOrWithAnotherUnitIsNotRead() {
        let withoutSplit = Self.status.split(separator: "\n").filter { !$0.hasPrefix("RssAnon") }.joined(separator: "\n")
        #expect(ProcessMemory(status: withoutSplit) == nil)
        #expect(ProcessMemory(status: Self.status.replacingOccurrences(of: "150292 kB", with: "150292 MB")) == nil)
        #expect(ProcessMemory(status: Self.status.replacingOccurrences(of: "  150292 kB", with: "  -1 kB")) == nil)
        #expect(ProcessMemory(status: "") == nil)
    }
}
