import LinkpulseDomain
import Testing

/// The rules of access keys, without a store: what each kind opens, how keys are hashed and
/// looked up, and how uses are noted.
@Suite struct AccessKeyTests {
    @Test func eachKindOpensExactlyItsRoutes() {
        let opens = AccessKind.allCases.map { kind in AccessKind.allCases.filter(kind.allows) }
        #expect(opens == [[.ingest], [.read], [.read, .admin]])
    }

    @Test func aDigestIsKeyedAndOfTheWholeSecret() {
        let hasher = AccessKeyHasher(secret: Array(repeating: 7, count: 32))
        let digest = hasher.digest(of: "lpr_abc")
        #expect(digest.count == 64 && digest.allSatisfy(\.isHexDigit))
        #expect(hasher.digest(of: "lpr_abc") == digest, "stable")
        #expect(hasher.digest(of: "lpr_abd") != digest && hasher.digest(of: "lpr_ab") != digest)
        #expect(AccessKeyHasher(secret: Array(repeating: 8, count: 32)).digest(of: "lpr_abc") != digest, "another installation's secret")
    }

    @Test func newKeysCarryTheirKindsPrefixAndRandomIds() {
        let hasher = AccessKeyHasher(secret: Array(repeating: 1, count: 32))
        let keys = AccessKind.allCases.map { NewAccessKey(kind: $0, name: "n", hasher: hasher, nowMs: 5) }
        #expect(keys.map { String($0.secret.prefix(4)) } == ["lpi_", "lpr_", "lpa_"])
        #expect(keys.allSatisfy { $0.secret.count == 36 && $0.record.id.count == 20 && $0.record.digest == hasher.digest(of: $0.secret) })
        #expect(Set(keys.map(\.record.id)).count == 3 && Set(keys.map(\.secret)).count == 3)
        #expect(keys.allSatisfy { $0.record.createdAtMs == 5 && $0.record.revokedAtMs == nil })
        // An adopted secret gets the same id wherever it is adopted.
        let first = NewAccessKey.adopted(secret: "lpi_old", kind: .ingest, name: "a", hasher: hasher, nowMs: 1)
        let second = NewAccessKey.adopted(secret: "lpi_old", kind: .ingest, name: "b", hasher: hasher, nowMs: 2)
        #expect(first.id == second.id && first.digest == second.digest)
    }

    @Test func namesAreShortAndPrintable() {
        #expect(NewAccessKey.isValidName("ios-app 7.2 · Zürich"))
        #expect(!NewAccessKey.isValidName(""))
        #expect(!NewAccessKey.isValidName(String(repeating: "x", count: 101)))
        #expect(!NewAccessKey.isValidName("a\nb") && !NewAccessKey.isValidName("a\u{7}"))
    }

    @Test func theTableAcceptsStoredKeysNotRevokedAndFlagKeys() {
        let stored = [
            AccessKeyRecord(id: "key_a", name: "app", kind: .ingest, digest: "d-a", createdAtMs: 1),
            AccessKeyRecord(id: "key_b", name: "old", kind: .read, digest: "d-b", createdAtMs: 1, revokedAtMs: 9),
            AccessKeyRecord(id: "key_c", name: "ops", kind: .admin, digest: "d-c", createdAtMs: 1),
        ]
        let table = AccessKeyTable(records: stored, configured: [(kind: .read, digest: "d-flag"), (kind: .read, digest: "d-c")])
        #expect(table.find(digest: "d-a") == AccessGrant(id: "key_a", name: "app", kind: .ingest, configured: false))
        #expect(table.find(digest: "d-b") == nil, "revoked")
        #expect(table.find(digest: "d-none") == nil)
        #expect(table.find(digest: "d-flag")?.configured == true && table.find(digest: "d-flag")?.id == "flag:read")
        #expect(table.find(digest: "d-c")?.kind == .read, "a flag names its kind, over a stored key with its secret")
        #expect(table.acceptedCounts == [.ingest: 1, .read: 2])
    }

    @Test func aUseIsNotedOnceAMinuteAndKeptUntilWritten() {
        var uses = AccessKeyUses()
        let noted = [uses.note("k", nowMs: 60_000), uses.note("k", nowMs: 119_999), uses.note("j", nowMs: 100_000)]
        #expect(noted == [true, false, true], "once in the same minute")
        let first = uses.drain(), second = uses.drain()
        #expect(first == ["k": 60_000, "j": 100_000] && second.isEmpty)
        let nextMinute = uses.note("k", nowMs: 120_000)
        #expect(nextMinute)
        // A failed write puts its uses back; a later one of the same key wins.
        uses.restore(["k": 90_000, "m": 5])
        let restored = uses.drain()
        #expect(restored == ["k": 120_000, "m": 5])
    }
}
