import Logging
import NIOCore
import OrientationProtocol

/// Who is on the other end of a connection (SO_PEERCRED).
public struct PeerCredentials: Sendable, Hashable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
}

/// One client of the socket front end: who it is, and its outbound queue. (What it subscribed to,
/// claims and its session are the hub's, under its ``listener`` id.)
///
/// Lives on the hub's event loop. Lines go straight to the socket through ``SocketWriter`` while
/// SwiftNIO has nothing queued for the client, and through SwiftNIO otherwise (what the socket did
/// not take, and everything after it until that is written), so they arrive in order. Replies are
/// always written; while the client does not read (the channel is not writable) its events are
/// coalesced to the newest per topic and reading its requests pauses. The `motion` stream is held
/// tighter: the socket's own buffer holds seconds of a 100 Hz stream, so once the client has more
/// than ``motionBacklog`` unread, its newest sample is held (a newer one replaces it) and sent when
/// it has caught up: a slow reader gets the newest, never a backlog. If nothing reaches the
/// client's socket for `stallTimeout` while something waits for it, it is disconnected: it can
/// neither delay others nor make the daemon's memory grow. A client that reads, however slowly,
/// stays.
final class Connection {
    let channel: any Channel
    /// The hub's name for this client; nil for one refused at the door.
    let listener: ListenerID?
    let credentials: PeerCredentials?
    /// A client that cannot take events for this long is disconnected.
    var stallTimeout: Double
    /// The unread bytes (the kernel's count, 1,280 for one motion event's 430-byte line) past which
    /// a client is behind on the `motion` stream and its newest sample is held: about six events,
    /// 60 ms of a 100 Hz stream (a client late that long still misses nothing), 0.3 s at 20 Hz.
    static let motionBacklog = 8 * 1024
    /// How often a held sample looks whether its client has caught up.
    static let motionCheckInterval = 0.02
    private let logger: Logger
    private let writer: SocketWriter
    /// Writes handed to SwiftNIO and not yet completed; while there are any, lines go after them.
    private var queuedWrites = 0
    private var skipped: [(topic: Topic, line: ByteBuffer)] = []
    private var stallTask: Scheduled<Void>?
    /// Something reached the socket since the stall timer was armed: the client reads.
    private var progressed = false
    /// The newest `motion` line, held while the client is behind on the stream.
    private var heldMotion: ByteBuffer?
    private var motionCheck: Scheduled<Void>?
    private var closed = false

    /// - Parameter writer: the client's socket for direct writes (a duplicate of the channel's).
    init(
        channel: any Channel, listener: ListenerID?, credentials: PeerCredentials?, writer: SocketWriter,
        stallTimeout: Double, logger: Logger
    ) {
        self.channel = channel
        self.listener = listener
        self.credentials = credentials
        self.writer = writer
        self.stallTimeout = stallTimeout
        self.logger = logger
    }

    // MARK: - Output

    /// A message as one line of bytes.
    static func line(_ message: JSONValue) -> ByteBuffer {
        var buffer = ByteBuffer(string: message.serialized)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    /// Writes a message (hello, reply, goodbye) whatever the writability, after a `motion` sample
    /// held for a client that is behind: the sample came first (before an unsubscribe's reply, say).
    func send(_ message: JSONValue) {
        if let held = heldMotion {
            heldMotion = nil
            send(line: held)
        }
        send(line: Self.line(message))
    }

    /// Writes a line (perhaps one serialized once for many clients): to the socket directly when
    /// nothing is queued, the rest through SwiftNIO, which buffers it and says when the socket drains.
    func send(line: ByteBuffer) {
        guard !closed else { return }
        var rest = line
        if queuedWrites == 0 {
            switch writer.write(line) {
            case .wrote(let count) where count == line.readableBytes:
                progressed = true
                return
            case .wrote(let count):
                progressed = progressed || count > 0
                rest.moveReaderIndex(forwardBy: count)
            case .failed:
                // The client is gone or has shut its reading side: as SwiftNIO does on a failed write.
                close()
                return
            }
        }
        queuedWrites += 1
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { [weak self] _ in
            self?.queuedWrites -= 1
            self?.progressed = true
        }
        channel.writeAndFlush(rest, promise: written)
    }

    /// Writes an event line (serialized once by the front end for every subscriber), or keeps only the
    /// newest per topic while the client is not reading. A `motion` sample is held instead while the
    /// client is behind on the stream (``isBehindOnMotion``), and goes out once it has caught up,
    /// unless a newer one supersedes it.
    func sendEvent(line: ByteBuffer, topic: Topic) {
        guard !closed else { return }
        if topic == .motion {
            guard isBehindOnMotion else {
                heldMotion = nil
                send(line: line)
                return
            }
            heldMotion = line
            scheduleMotionCheck()
            startStallTimer()
            return
        }
        // A sample held came first: it goes before the event (whose state is newer), not after.
        if let held = heldMotion {
            heldMotion = nil
            enqueue(held, topic: .motion)
        }
        enqueue(line, topic: topic)
    }

    /// Writes an event line, or keeps only the newest per topic while the client is not reading.
    private func enqueue(_ line: ByteBuffer, topic: Topic) {
        // Nothing queued means writable; asking the channel costs a cache miss per subscriber.
        if skipped.isEmpty, queuedWrites == 0 || channel.isWritable {
            send(line: line)
            return
        }
        skipped.removeAll { $0.topic == topic }
        skipped.append((topic, line))
        startStallTimer()
    }

    /// The client has more than ``motionBacklog`` unread in its socket, or lines wait for the socket.
    private var isBehindOnMotion: Bool {
        queuedWrites > 0 || !skipped.isEmpty || (writer.unreadBytes ?? 0) > Self.motionBacklog
    }

    /// While a sample is held, looks every ``motionCheckInterval`` whether the client has caught up
    /// (the kernel says nothing when a socket that is not full drains).
    private func scheduleMotionCheck() {
        guard motionCheck == nil else { return }
        motionCheck = channel.eventLoop.scheduleTask(in: .milliseconds(Int64(Self.motionCheckInterval * 1000))) {
            [weak self] in
            guard let self else { return }
            motionCheck = nil
            guard !closed, let held = heldMotion else { return }
            if isBehindOnMotion {
                scheduleMotionCheck()
            } else {
                heldMotion = nil
                send(line: held)
            }
        }
    }

    func writabilityChanged() {
        guard !closed else { return }
        if channel.isWritable {
            stallTask?.cancel()
            stallTask = nil
            let pending = skipped
            skipped.removeAll()
            for (_, line) in pending { send(line: line) }
            if heldMotion != nil { startStallTimer() }  // still behind on the motion stream
            channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
            channel.read()
        } else {
            channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
            startStallTimer()
        }
    }

    /// Disconnects the client if for `stallTimeout` nothing more reaches its socket while something
    /// waits for it; a client that took something meanwhile (reading slowly) gets another
    /// `stallTimeout`.
    private func startStallTimer() {
        guard stallTask == nil else { return }
        progressed = false
        stallTask = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(stallTimeout * 1e9))) { [weak self] in
            guard let self else { return }
            stallTask = nil
            guard !closed, !channel.isWritable || !skipped.isEmpty || heldMotion != nil else { return }
            if progressed {
                startStallTimer()
                return
            }
            logger.warning(
                "client stalled: disconnecting",
                metadata: [
                    "peer.pid": "\(credentials?.pid.description ?? "?")", "stall.seconds": "\(stallTimeout)",
                ])
            close()
        }
    }

    func close() {
        guard !closed else { return }
        channelClosed()
        channel.close(promise: nil)
    }

    /// The channel closed (the hub forgets the connection): the duplicate descriptor goes too.
    func channelClosed() {
        closed = true
        stallTask?.cancel()
        motionCheck?.cancel()
        writer.close()
    }

    /// True once closing or finishing began: requests still arriving are not answered.
    var isClosed: Bool { closed }

    /// The graceful end at shutdown: the goodbye after everything already queued, then this side of
    /// the stream closed, so the client reads all of it and then end-of-file; what the client still
    /// sends is read and dropped until it closes too, or `linger` passes. (Closing at once while
    /// its requests lie unread would reset the connection, and the client would lose the goodbye
    /// and the replies still queued for it.)
    func finish(goodbye: JSONValue, linger: TimeAmount) -> EventLoopFuture<Void> {
        guard !closed else { return channel.closeFuture }
        send(goodbye)
        closed = true
        stallTask?.cancel()
        motionCheck?.cancel()
        writer.close()
        skipped.removeAll()
        channel.close(mode: .output, promise: nil)
        channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
        channel.read()
        let deadline = channel.eventLoop.scheduleTask(in: linger) { [channel] in channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in deadline.cancel() }
        return channel.closeFuture
    }
}
