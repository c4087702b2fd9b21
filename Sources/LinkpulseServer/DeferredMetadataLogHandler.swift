import Logging

/// A log handler that keeps the metadata set on a logger and hands it to `inner` only when a
/// message is written, merged under the message's own metadata.
///
/// `StreamLogHandler` formats its metadata into text every time it changes. Hummingbird sets a
/// request id on each request's logger, so at `warning` every request paid for formatting a
/// line that was never written (about 1% of the CPU of a flood of resolves).
public struct DeferredMetadataLogHandler<Inner: LogHandler>: LogHandler {
    /// Writes the messages; its own metadata stays empty.
    public var inner: Inner
    public var metadata: Logger.Metadata = [:]

    public init(_ inner: Inner) {
        self.inner = inner
    }

    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        inner.log(event: event)
    }
}
