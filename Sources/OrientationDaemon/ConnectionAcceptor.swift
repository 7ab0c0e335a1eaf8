import CLinux
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import OrientationProtocol
import SensorCore

#if canImport(Glibc)
import Glibc
#endif

/// Accepts clients on the listening socket, on a thread of its own, and hands each connection to
/// SwiftNIO on the hub's loop together with its peer credentials and a ``SocketWriter`` on a
/// duplicate of its descriptor.
///
/// Why not SwiftNIO's ServerBootstrap: a channel it accepts never shows its descriptor, and the
/// direct writes need one (see ``SocketWriter``). The thread does nothing but accept: it waits in
/// poll(2) on the listening socket and on an eventfd that ``stop()`` signals, so stopping does not
/// touch the listening socket (with socket activation it is systemd's, and must keep working for
/// the next start).
final class ConnectionAcceptor: Sendable {
    private let listening: Int32
    private let ownsListeningSocket: Bool
    private let wakeUp: Int32
    private let thread: WorkerThread
    private let stopped = NIOLockedValueBox(false)

    /// Starts accepting on `listening` (a bound, listening stream socket), which this object closes
    /// at ``stop()`` when `ownsListeningSocket`.
    init(listening: Int32, ownsListeningSocket: Bool, hub: OrientationHub) throws(SocketSetupError) {
        let wakeUp = eventfd(0, O_CLOEXEC | O_NONBLOCK)
        guard wakeUp >= 0 else { throw SocketSetupError(description: "eventfd: \(String(cString: strerror(errno)))") }
        _ = fcntl(listening, F_SETFL, fcntl(listening, F_GETFL) | O_NONBLOCK)
        self.listening = listening
        self.ownsListeningSocket = ownsListeningSocket
        self.wakeUp = wakeUp
        let handOff = HandOff(hub: hub, eventLoop: hub.eventLoop, logger: hub.socketLogger)
        thread = WorkerThread(name: "orientd-accept") { Self.acceptLoop(listening: listening, wakeUp: wakeUp, handOff: handOff) }
    }

    /// Stops accepting and returns when the thread has ended; connections already handed over stay.
    func stop() {
        let first = stopped.withLockedValue { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var one: UInt64 = 1
        _ = write(wakeUp, &one, MemoryLayout<UInt64>.size)
        thread.join()
        close(wakeUp)
        if ownsListeningSocket { close(listening) }
    }

    /// What a new connection needs on the loop.
    private struct HandOff: Sendable {
        /// Used on its loop only (the channel initializer runs there).
        let hub: OrientationHub
        let eventLoop: any EventLoop
        let logger: Logger

        /// Hands `client` to the loop with a writer on `duplicate`; the future completes once its
        /// channel is registered there (or has failed to be).
        func serve(_ client: Int32, duplicate: Int32) -> EventLoopFuture<Void> {
            let writer = SocketWriter(descriptor: duplicate)
            let credentials = Authorization.peerCredentials(of: client)
            let hub = hub
            return ClientBootstrap(group: eventLoop)
                .channelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 64 * 1024))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder()))
                        try channel.pipeline.syncOperations.addHandler(ConnectionHandler(hub: hub, credentials: credentials, writer: writer))
                    }
                }
                .withConnectedSocket(client)
                .map { _ in }
                .recover { [logger] error in
                    logger.warning("client dropped: its connection could not be set up", metadata: ["error": "\(error)"])
                }
        }
    }

    /// Connections handed to the loop and not yet registered there, at most: the thread accepts
    /// no faster than the loop takes connections on, so a connect storm waits in the kernel's
    /// backlog instead of as open descriptors here.
    static let handOffWindow = 64

    private static func acceptLoop(listening: Int32, wakeUp: Int32, handOff: HandOff) {
        var registering: [EventLoopFuture<Void>] = []
        var failures = FailureLog(logger: handOff.logger)
        /// A client accepted when no descriptor was left for its duplicate: it waits here, as the
        /// others wait in the backlog, until one is.
        var accepted: Int32?
        defer { if let accepted { close(accepted) } }
        while true {
            var watched = [pollfd(fd: listening, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)]
            if failures.pausing { watched.removeFirst() }  // the backlog is still there: wait out the pause instead
            let ready = poll(&watched, nfds_t(watched.count), failures.pausing ? 100 : -1)
            if ready < 0, errno == EINTR { continue }
            if watched.last!.revents != 0 { return }
            if accepted == nil {
                let client = accept4(listening, nil, nil, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
                guard client >= 0 else {
                    switch errno {
                    case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO:
                        continue  // nothing (left) to accept, or a client that gave up while queued
                    case let code:
                        // Out of descriptors or memory: every retry would fail at once, so pause
                        // 100 ms between tries.
                        failures.failed(code)
                        continue
                    }
                }
                accepted = client
            }
            guard let client = accepted else { continue }
            let duplicate = fcntl(client, F_DUPFD_CLOEXEC, 0)
            guard duplicate >= 0 else {
                failures.failed(errno)
                continue
            }
            accepted = nil
            failures.succeeded()
            if registering.count == handOffWindow { try? registering.removeFirst().wait() }
            registering.append(handOff.serve(client, duplicate: duplicate))
        }
    }

    /// Failed accepts, said once when they start, then at most every 10 s with how many there were.
    private struct FailureLog {
        let logger: Logger
        private(set) var pausing = false
        private var lastLogged: Double?
        private var unreported = 0

        init(logger: Logger) {
            self.logger = logger
        }

        mutating func failed(_ code: Int32) {
            pausing = true
            unreported += 1
            let now = MonotonicClock.now()
            if let lastLogged, now - lastLogged < 10 { return }
            logger.error("cannot accept clients: pausing 100 ms between tries", metadata: [
                "error": "\(String(cString: strerror(code)))", "failures": "\(unreported)",
            ])
            lastLogged = now
            unreported = 0
        }

        mutating func succeeded() {
            pausing = false
        }
    }
}
