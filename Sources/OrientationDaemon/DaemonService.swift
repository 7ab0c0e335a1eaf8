import Logging
import NIOCore
import NIOPosix
import OrientationCore
import OrientationProtocol
import SensorCore
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The daemon as one service: it binds the socket, feeds sensor events to the hub, and on graceful
/// shutdown says goodbye to every client, removes the socket and releases the sensor.
public final class OrientationDaemonService: Service, @unchecked Sendable {
    private let configuration: DaemonConfiguration
    private let source: any AccelerometerSource
    private let logger: Logger
    private let serverName: String
    private let onListening: @Sendable () -> Void

    /// - Parameter onListening: called once the socket accepts connections (for readiness).
    public init(configuration: DaemonConfiguration, source: any AccelerometerSource, serverName: String, logger: Logger,
                onListening: @escaping @Sendable () -> Void = {}) {
        self.configuration = configuration
        self.source = source
        self.serverName = serverName
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        // One loop for the hub and every connection: ordering without locks.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let hub = OrientationHub(eventLoop: loop, configuration: configuration, source: source, serverName: serverName, logger: logger)
        // Every source states at once whether it has a sensor; that first event is handled before
        // the socket opens, so the first hello is already true (and readiness means something).
        let (firstEvent, firstEventSeen) = AsyncStream<Void>.makeStream()
        let events = source.events
        let feeder = Task {
            var first = true
            for await event in events {
                loop.execute { hub.handle(event) }
                if first {
                    try? await loop.submit {}.get()
                    firstEventSeen.yield()
                    first = false
                }
            }
            firstEventSeen.finish()
        }
        let timeout = Task {
            try? await Task.sleep(for: .seconds(2))
            firstEventSeen.finish()
        }
        for await _ in firstEvent { break }
        timeout.cancel()
        let server: any Channel
        do {
            server = try await SocketServer.bind(hub: hub, configuration: configuration)
        } catch {
            source.shutdown()
            await feeder.value
            try? await group.shutdownGracefully()
            throw error
        }
        logger.notice("listening", metadata: ["socket.path": "\(configuration.socketPath)", "server": "\(serverName)"])
        onListening()

        try? await gracefulShutdown()

        logger.notice("shutting down")
        try? await loop.submit { hub.closeAll(reason: "orientd is shutting down") }.get()
        try? await server.close()
        unlink(configuration.socketPath)
        source.shutdown()
        await feeder.value
        try? await group.shutdownGracefully()
    }
}
