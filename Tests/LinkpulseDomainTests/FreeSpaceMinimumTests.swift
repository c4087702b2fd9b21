import LinkpulseDomain
import Testing

struct FreeSpaceMinimumTests {
    @Test func sizesSharesAndBothAreRead() {
        #expect(FreeSpaceMinimum(parsing: "1GiB") == FreeSpaceMinimum(bytes: 1 << 30, percent: nil))
        #expect(FreeSpaceMinimum(parsing: "500MB") == FreeSpaceMinimum(bytes: 500_000_000, percent: nil))
        #expect(FreeSpaceMinimum(parsing: "2g") == FreeSpaceMinimum(bytes: 2 << 30, percent: nil))
        #expect(FreeSpaceMinimum(parsing: "4096") == FreeSpaceMinimum(bytes: 4096, percent: nil))
        #expect(FreeSpaceMinimum(parsing: "5%") == FreeSpaceMinimum(bytes: nil, percent: 5))
        #expect(FreeSpaceMinimum(parsing: "1GiB,5%") == .standard)
        #expect(FreeSpaceMinimum(parsing: "5% , 1 GiB") == .standard)
        #expect(FreeSpaceMinimum(parsing: "0") == .off)
    }

    @Test func nonsenseIsRefused() {
        for text in ["", "abc", "1XB", "-1GiB", "101%", "5%,6%", "1GiB,2GiB", "1,2,3", "%", "1e30TB"] {
            #expect(FreeSpaceMinimum(parsing: text) == nil, "\(text)")
        }
    }

    @Test func theSmallerOfSizeAndShareApplies() {
        let gib: Int64 = 1 << 30
        // A 10 GiB disk keeps 5% (512 MiB); a 100 GiB disk keeps 1 GiB.
        #expect(FreeSpaceMinimum.standard.requiredBytes(totalBytes: 10 * gib) == gib / 2)
        #expect(FreeSpaceMinimum.standard.requiredBytes(totalBytes: 100 * gib) == gib)
        #expect(FreeSpaceMinimum.standard.isLow(freeBytes: gib - 1, totalBytes: 100 * gib))
        #expect(!FreeSpaceMinimum.standard.isLow(freeBytes: gib, totalBytes: 100 * gib))
        #expect(!FreeSpaceMinimum.off.isLow(freeBytes: 0, totalBytes: 100 * gib))
    }
}
