import Hummingbird
import LinkpulseDomain
import NIOCore

/// The request context of every Linkpulse route: Hummingbird's core storage plus the socket
/// peer's address (nil in router tests, where there is no socket), and the key the request
/// was let in with (set by `AccessKeyMiddleware`; nil on public routes).
public struct LinkpulseRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The key the route group's middleware accepted, if any.
    public var access: AccessGrant?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }
}
