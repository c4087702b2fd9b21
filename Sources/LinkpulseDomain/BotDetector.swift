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
        let lowered = userAgent.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
        return lowered.withUnsafeBytes { haystack in
            rules.first { rule in rule.parts.allSatisfy { ByteSearch.contains(haystack, $0) } }?.reason
        }
    }
}
