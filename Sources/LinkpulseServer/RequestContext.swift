import Hummingbird
import NIOCore

/// The request context of every Linkpulse route: Hummingbird's core storage plus the socket
/// peer's address (nil in router tests, where there is no socket).
public struct LinkpulseRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }
}
