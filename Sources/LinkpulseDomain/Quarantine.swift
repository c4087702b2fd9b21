import Foundation

/// A rejected event on its way to the quarantine table: why, where in the request, and its raw
/// text (at most `maxRawBytes`, with every IP address replaced by its keyed hash).
public struct QuarantinedEvent: Sendable, Equatable {
    /// Largest raw text kept per rejected event.
    public static let maxRawBytes = 32 << 10

    public var receivedAtMs: Int64
    /// Position in the request (0-based), or nil when the whole body was rejected.
    public var index: Int?
    public var error: EventError
    public var rawText: String
    /// Whether `rawText` was cut at `maxRawBytes`.
    public var truncated: Bool
    public var userAgent: String?

    public init(receivedAtMs: Int64, index: Int?, error: EventError, rawText: String, truncated: Bool, userAgent: String?) {
        self.receivedAtMs = receivedAtMs; self.index = index; self.error = error
        self.rawText = rawText; self.truncated = truncated; self.userAgent = userAgent
    }

    /// Builds the quarantine record for raw event bytes: scrubs addresses first (so a cut never
    /// leaves half an address behind), then keeps at most `maxRawBytes` on a UTF-8 boundary.
    public static func make(
        raw: some Collection<UInt8>, index: Int?, error: EventError, request: RequestFacts,
        forwardedFor: [String], hasher: KeyedHasher
    ) -> QuarantinedEvent {
        let scrubbed = AddressScrubber.scrub(
            String(decoding: raw, as: UTF8.self),
            knownAddresses: ([request.clientIP].compactMap { $0 } + forwardedFor),
            hasher: hasher)
        var bytes = Array(scrubbed.utf8)
        let truncated = bytes.count > maxRawBytes
        if truncated {
            var cut = maxRawBytes
            // Step back over UTF-8 continuation bytes so the text stays valid.
            while cut > 0, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
            bytes.removeSubrange(cut...)
        }
        return QuarantinedEvent(
            receivedAtMs: request.receivedAtMs, index: index, error: error,
            rawText: String(decoding: bytes, as: UTF8.self), truncated: truncated,
            userAgent: request.userAgent)
    }
}

/// Removes IP addresses from raw text: the value of every `"ip"` member, and every occurrence
/// of the addresses the request itself revealed (peer, `X-Forwarded-For`), become their keyed hash.
public enum AddressScrubber {
    public static func scrub(_ text: String, knownAddresses: [String], hasher: KeyedHasher) -> String {
        var result = scrubIPMembers(text, hasher: hasher)
        for address in Set(knownAddresses) where !address.isEmpty && result.contains(address) {
            result = result.replacingOccurrences(of: address, with: "ip_hash:" + hasher.ipHash(address))
        }
        return result
    }

    /// Replaces the string value of each `"ip"` key (any whitespace around the colon).
    static func scrubIPMembers(_ text: String, hasher: KeyedHasher) -> String {
        guard text.contains("\"ip\"") else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let key = Array("\"ip\"".utf8)
        var i = 0
        while i < bytes.count {
            if bytes[i] == key[0], i + key.count <= bytes.count, Array(bytes[i..<(i + key.count)]) == key {
                var j = i + key.count
                while j < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[j]) { j += 1 }
                if j < bytes.count, bytes[j] == UInt8(ascii: ":") {
                    j += 1
                    while j < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[j]) { j += 1 }
                    if j < bytes.count, bytes[j] == UInt8(ascii: "\"") {
                        var end = j + 1
                        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                            end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
                        }
                        end = min(end, bytes.count)
                        let value = String(decoding: bytes[(j + 1)..<end], as: UTF8.self)
                        out.append(contentsOf: bytes[i...j])
                        out.append(contentsOf: Array(("ip_hash:" + hasher.ipHash(value)).utf8))
                        out.append(UInt8(ascii: "\""))
                        i = end + 1
                        continue
                    }
                }
            }
            out.append(bytes[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
