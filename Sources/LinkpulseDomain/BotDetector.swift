/// Recognises bots, link-preview fetchers and automated clients by user agent, using the rules
/// in `Embedded/bot-user-agents.txt` (compiled into the binary). Pure and thread-safe.
public struct BotDetector: Sendable {
    struct Rule: Sendable {
        /// Lowercased byte patterns that must all occur in the user agent.
        let parts: [[UInt8]]
        let reason: String
    }

    let rules: [Rule]

    /// The detector with the built-in rules.
    public static let standard = BotDetector(rulesText: EmbeddedText.files["bot-user-agents.txt"] ?? "")

    /// Parses rules in the data file's format (`PATTERN<TAB>REASON` a line, `#` comments).
    public init(rulesText: String) {
        var rules: [Rule] = []
        for line in rulesText.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let columns = line.split(separator: "\t", omittingEmptySubsequences: true)
            guard columns.count == 2 else { continue }
            // A leading "+" is a literal (as in "+http"), not a separator.
            let pattern = columns[0].lowercased()
            let parts: [String] = pattern.hasPrefix("+")
                ? [pattern]
                : pattern.split(separator: "+").map(String.init)
            rules.append(Rule(parts: parts.map { Array($0.utf8) }, reason: String(columns[1])))
        }
        self.rules = rules
    }

    /// The reason a user agent is a bot (`preview:slack`, `tool:curl`…), or nil for a person's
    /// browser or app. A missing or empty user agent is not judged a bot.
    public func reason(userAgent: String?) -> String? {
        guard let userAgent, !userAgent.isEmpty else { return nil }
        let haystack = userAgent.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
        for rule in rules where rule.parts.allSatisfy({ Self.contains(haystack, $0) }) {
            return rule.reason
        }
        return nil
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
        let first = needle[0]
        var i = 0
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < needle.count, haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }
}
