import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// How much memory each connection may keep for reading from its socket.
///
/// NIO's defaults suit a few busy connections: a read buffer that grows to 64 KiB once reads
/// fill it, and up to four of them kept per connection (one per read of a wake-up) for reuse.
/// An ingest daemon holds many connections of SDKs and landing pages, each sending a request
/// now and then, and with the defaults each kept 45–57 KiB of buffers (about 60 MB of the heap
/// at 1,000 connections under `ops/bench/overload.sh`, heaptrack). One read of at most 16 KiB
/// per wake-up kept the overload's peak RSS 25–35 MB lower in five alternating runs, at the
/// same acknowledged rate (`ops/bench/overload.sh`, 2026-11-25). A large batch
/// takes more reads (a body of 1 MiB, about sixty).
struct ConnectionReadBuffers: Sendable, Equatable {
    /// The largest read buffer, bytes (NIO rounds it up to a power of two).
    var maximumBytes: Int
    /// Reads per wake-up of a connection, and so buffers kept for reuse.
    var readsPerWakeUp: UInt

    /// What the daemon uses.
    static let standard = ConnectionReadBuffers(maximumBytes: 16_384, readsPerWakeUp: 1)

    /// The server builder: Hummingbird's HTTP/1.1 channel with these buffers.
    func http1() -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            BoundedReadHTTP1Channel(http1: HTTP1Channel(responder: responder), buffers: self)
        }
    }
}

/// Hummingbird's HTTP/1.1 child channel, with the read buffers set before the pipeline is built.
struct BoundedReadHTTP1Channel: ServerChildChannel {
    let http1: HTTP1Channel
    let buffers: ConnectionReadBuffers

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        do {
            if let options = channel.syncOptions {
                try options.setOption(
                    ChannelOptions.recvAllocator,
                    value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: min(2_048, buffers.maximumBytes), maximum: buffers.maximumBytes))
                try options.setOption(ChannelOptions.maxMessagesPerRead, value: buffers.readsPerWakeUp)
            }
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return http1.setup(channel: channel, logger: logger)
    }

    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        await http1.handle(value: value, logger: logger)
    }
}
