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
/// direct writes need one (see ``SocketWriter``); measured against ServerBootstrap and
/// `writeAndFlush`, they cost 2.3–2.7 times less CPU per subscriber at 1,000 (docs/benchmarks.md).
/// The thread does nothing but accept: it waits in poll(2) on the listening socket and on an
/// eventfd that ``stop()`` signals, so stopping does not touch the listening socket (with socket
/// activation it is systemd's, and must keep working for the next start).
final class ConnectionAcceptor: Sendable {
    private let listening: Int32
    private let ownsListeningSocket: Bool
    private let wakeUp: Int32
    private let thread: WorkerThread
    private let stopped = NIOLockedValueBox(false)
    private let window: HandOffWindow

    /// Starts accepting on `listening` (a bound, listening stream socket), which this object closes
    /// at ``stop()`` when `ownsListeningSocket`.
    init(listening: Int32, ownsListeningSocket: Bool, frontEnd: SocketFrontEnd) throws(SocketSetupError) {
        let wakeUp = eventfd(0, O_CLOEXEC | O_NONBLOCK)
        let room = eventfd(0, O_CLOEXEC | O_NONBLOCK)
        guard wakeUp >= 0, room >= 0 else {
            let reason = String(cString: strerror(errno))
            if wakeUp >= 0 { close(wakeUp) }
            if room >= 0 { close(room) }
            throw SocketSetupError(description: "eventfd: \(reason)")
        }
        _ = fcntl(listening, F_SETFL, fcntl(listening, F_GETFL) | O_NONBLOCK)
        self.listening = listening
        self.ownsListeningSocket = ownsListeningSocket
        self.wakeUp = wakeUp
        let window = HandOffWindow(room: room)
        self.window = window
        let handOff = HandOff(
            frontEnd: frontEnd, eventLoop: frontEnd.eventLoop, logger: frontEnd.logger, window: window)
        thread = WorkerThread(name: "orientd-accept") {
            Self.acceptLoop(listening: listening, wakeUp: wakeUp, handOff: handOff)
        }
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
        let frontEnd: SocketFrontEnd
        let eventLoop: any EventLoop
        let logger: Logger
        let window: HandOffWindow

        /// Hands `client` to the loop with a writer on `duplicate`; it leaves the window once its
        /// channel is registered there (or has failed to be).
        func serve(_ client: Int32, duplicate: Int32) {
            // Moved to the loop, the one place it is used (released wherever the box goes if the
            // channel never gets there, closing the duplicate).
            let writer = NIOLoopBoundBox.makeBoxSendingValue(SocketWriter(descriptor: duplicate), eventLoop: eventLoop)
            let credentials = Authorization.peerCredentials(of: client)
            ClientBootstrap(group: eventLoop)
                .channelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 64 * 1024))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder()))
                        try channel.pipeline.syncOperations.addHandler(
                            ConnectionHandler(frontEnd: frontEnd, credentials: credentials, writer: writer.value))
                    }
                }
                .withConnectedSocket(client)
                .whenComplete { [logger, window] result in
                    window.leave()
                    if case .failure(let error) = result {
                        logger.warning(
                            "client dropped: its connection could not be set up", metadata: ["error": "\(error)"])
                    }
                }
        }
    }

    /// Connections handed to the loop and not yet registered there: at most ``size``, so the thread
    /// accepts no faster than the loop takes connections on, and a connect storm waits in the
    /// kernel's backlog instead of as open descriptors here. The loop signals `room` (an eventfd the
    /// thread polls) when a full window gets a free place: waiting for each registration's future
    /// instead cost a round trip to the loop per connection and halved the connect rate.
    final class HandOffWindow: Sendable {
        static let size = 64
        let room: Int32
        private let pending = NIOLockedValueBox(0)

        /// Takes ownership of `room`: it is closed when the last registration still under way has
        /// given its place back (closing it at ``stop()`` could let a late one write to whatever
        /// descriptor reused the number).
        init(room: Int32) {
            self.room = room
        }

        deinit {
            close(room)
        }

        var isFull: Bool { pending.withLockedValue { $0 >= Self.size } }

        /// Takes a place, if there is one.
        func enter() -> Bool {
            pending.withLockedValue { pending in
                guard pending < Self.size else { return false }
                pending += 1
                return true
            }
        }

        /// Gives a place back (the loop, once a connection is registered or has failed to be).
        func leave() {
            let wasFull = pending.withLockedValue { pending in
                defer { pending -= 1 }
                return pending == Self.size
            }
            if wasFull {
                var one: UInt64 = 1
                _ = write(room, &one, MemoryLayout<UInt64>.size)
            }
        }

        /// Clears the signal before the thread looks at the window again.
        func drain() {
            var count: UInt64 = 0
            _ = read(room, &count, MemoryLayout<UInt64>.size)
        }
    }

    private static func acceptLoop(listening: Int32, wakeUp: Int32, handOff: HandOff) {
        var failures = FailureLog(logger: handOff.logger)
        /// A client accepted when no descriptor was left for its duplicate: it waits here, as the
        /// others wait in the backlog, until one is.
        var accepted: Int32?
        defer { if let accepted { close(accepted) } }
        while true {
            // Wait for the stop signal and for whatever can move: room in a full window, the end of
            // a pause after a failure, or a client in the backlog.
            let waitingForRoom = handOff.window.isFull
            var watched = [pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)]
            var timeout: Int32 = -1
            if waitingForRoom {
                watched.append(pollfd(fd: handOff.window.room, events: Int16(POLLIN), revents: 0))
            } else if failures.pausing {
                timeout = 100
            } else if accepted == nil {
                watched.append(pollfd(fd: listening, events: Int16(POLLIN), revents: 0))
            } else {
                timeout = 0
            }
            let ready = poll(&watched, nfds_t(watched.count), timeout)
            if ready < 0, errno == EINTR { continue }
            if watched[0].revents != 0 { return }
            if waitingForRoom {
                handOff.window.drain()
                continue
            }
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
            guard let client = accepted, handOff.window.enter() else { continue }
            let duplicate = fcntl(client, F_DUPFD_CLOEXEC, 0)
            guard duplicate >= 0 else {
                handOff.window.leave()
                failures.failed(errno)
                continue
            }
            accepted = nil
            failures.succeeded()
            handOff.serve(client, duplicate: duplicate)
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
            logger.error(
                "cannot accept clients: pausing 100 ms between tries",
                metadata: [
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
