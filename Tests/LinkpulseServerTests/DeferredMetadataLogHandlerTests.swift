import Foundation
import LinkpulseServer
import Logging
import Synchronization
import Testing

/// The daemon's log handler: metadata set on a logger reaches the written line, merged under
/// the message's own, and the line reads as `StreamLogHandler` writes it.
@Suite struct DeferredMetadataLogHandlerTests {
    /// Collects what a `StreamLogHandler` writes.
    final class Lines: TextOutputStream, @unchecked Sendable {
        let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
    }

    @Test func metadataSetOnTheLoggerIsWrittenWithTheMessage() {
        let lines = Lines()
        var logger = Logger(label: "test") { label in
            var handler = DeferredMetadataLogHandler(StreamLogHandler(label: label, stream: lines, metadataProvider: nil))
            handler.logLevel = .info
            return handler
        }
        logger[metadataKey: "request"] = "r-1"
        logger[metadataKey: "job"] = "hourly"
        #expect(logger[metadataKey: "request"] == "r-1")
        logger.debug("below the level")
        logger.info("stored", metadata: ["job": "daily", "events": "3"])
        logger[metadataKey: "job"] = nil
        logger.warning("behind")
        let written = lines.text.withLock { $0 }.split(separator: "\n")
        #expect(written.count == 2, "\(written)")
        // The message's own value wins over the logger's; keys sorted as StreamLogHandler sorts them.
        #expect(written.first?.hasSuffix(" info test: events=3 job=daily request=r-1 [LinkpulseServerTests] stored") == true, "\(written)")
        #expect(written.last?.hasSuffix(" warning test: request=r-1 [LinkpulseServerTests] behind") == true, "\(written)")
    }
}
