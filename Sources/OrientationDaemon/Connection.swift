import NIOCore
import OrientationCore
import OrientationProtocol
import SensorCore

#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a connection (SO_PEERCRED).
public struct PeerCredentials: Sendable, Hashable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
}

/// One client: its subscriptions and claims, its resolver session, and its outbound queue.
///
/// Lives on the hub's event loop. Lines go straight to the socket through ``SocketWriter`` while
/// SwiftNIO has nothing queued for the client, and through SwiftNIO otherwise (what the socket did
/// not take, and everything after it until that is written), so they arrive in order. Replies are
/// always written; while the client does not read (the channel is not writable) its events are
/// coalesced to the newest per topic, reading its requests pauses, and after `stallTimeout` it is
/// disconnected, so it can neither delay others nor make the daemon's memory grow.
final class Connection {
    let channel: any Channel
    unowned let hub: OrientationHub
    let credentials: PeerCredentials?
    let isPrivileged: Bool
    /// Nested subscriptions per topic (each subscribe adds one, each unsubscribe removes one).
    var topicCounts: [String: Int] = [:]
    var session: InterfaceOrientationResolver?
    private var sessionSeq = 0
    private let writer: SocketWriter
    /// Writes handed to SwiftNIO and not yet completed; while there are any, lines go after them.
    private var queuedWrites = 0
    private var skipped: [(topic: String, line: ByteBuffer)] = []
    private var stallTask: Scheduled<Void>?
    private var closed = false

    /// - Parameter writer: the client's socket for direct writes (a duplicate of the channel's).
    init(channel: any Channel, hub: OrientationHub, credentials: PeerCredentials?, isPrivileged: Bool, writer: SocketWriter) {
        self.channel = channel
        self.hub = hub
        self.credentials = credentials
        self.isPrivileged = isPrivileged
        self.writer = writer
    }

    /// Claims held: subscriptions to device and interface count, nestably.
    var claimCount: Int { OrientationProtocol.claimingTopics.reduce(0) { $0 + (topicCounts[$1] ?? 0) } }
    var subscribedTopics: [String] { OrientationProtocol.topics.filter { topicCounts[$0] != nil } }

    // MARK: - Output

    /// A message as one line of bytes.
    static func line(_ message: JSONValue) -> ByteBuffer {
        var buffer = ByteBuffer(string: message.serialized)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    /// Writes a message (hello, reply, goodbye) whatever the writability.
    func send(_ message: JSONValue) {
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
                return
            case .wrote(let count):
                rest.moveReaderIndex(forwardBy: count)
            case .failed:
                // The client is gone or has shut its reading side: as SwiftNIO does on a failed write.
                close()
                return
            }
        }
        queuedWrites += 1
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { [weak self] _ in self?.queuedWrites -= 1 }
        channel.writeAndFlush(rest, promise: written)
    }

    /// Writes an event line (serialized once by the hub for every subscriber), or keeps only the
    /// newest per topic while the client is not reading.
    func sendEvent(line: ByteBuffer, topic: String) {
        guard !closed else { return }
        // Nothing queued means writable; asking the channel costs a cache miss per subscriber.
        if skipped.isEmpty, queuedWrites == 0 || channel.isWritable {
            send(line: line)
            return
        }
        skipped.removeAll { $0.topic == topic }
        skipped.append((topic, line))
        startStallTimer()
    }

    func writabilityChanged() {
        guard !closed else { return }
        if channel.isWritable {
            stallTask?.cancel()
            stallTask = nil
            let pending = skipped
            skipped.removeAll()
            for (_, line) in pending { send(line: line) }
            channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
            channel.read()
        } else {
            channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
            startStallTimer()
        }
    }

    private func startStallTimer() {
        guard stallTask == nil else { return }
        stallTask = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(hub.configuration.stallTimeout * 1e9))) { [weak self] in
            guard let self, !channel.isWritable || !skipped.isEmpty else { return }
            hub.socketLogger.warning("client stalled: disconnecting", metadata: [
                "peer.pid": "\(credentials?.pid.description ?? "?")", "stall.seconds": "\(hub.configuration.stallTimeout)",
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
        writer.close()
        skipped.removeAll()
        channel.close(mode: .output, promise: nil)
        channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
        channel.read()
        let deadline = channel.eventLoop.scheduleTask(in: linger) { [channel] in channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in deadline.cancel() }
        return channel.closeFuture
    }

    // MARK: - Session

    static func sessionFields(_ state: ResolverState) -> [(key: String, value: JSONValue)] {
        [("interface", .string(state.interface.rawValue)), ("effectiveDevice", .string(state.effectiveDevice.rawValue)),
         ("decider", .string(state.decider.id))]
    }

    /// A device or lock change reaches the session; its interface change goes to this client only.
    func applyToSession(_ action: ResolverAction) {
        guard session != nil else { return }
        let outcome = session!.apply(action)
        if let change = outcome.interfaceChange { sendSessionEvent(change) }
        if let error = outcome.error {
            send(ServerMessage.event(topic: "session", seq: hub.seq, time: MonotonicClock.now(), state: hub.state,
                                     fields: [("error", ProtocolError(error.code.rawValue, "\(action.name) rejected", reason: error.reason.rawValue).json)]))
        }
    }

    private func sendSessionEvent(_ change: InterfaceOrientationChange) {
        sessionSeq += 1
        let event = ServerMessage.event(topic: "session", seq: hub.seq, time: MonotonicClock.now(), state: hub.state,
                                        fields: [("sessionSeq", .number(Double(sessionSeq)))] + change.protocolFields)
        sendEvent(line: Self.line(event), topic: "session")
    }

    /// The `scene.*` ops: resolver.md §1 actions (not deviceOrientation and setLock, which belong to
    /// the daemon) applied to this connection's session.
    static let sceneActions: [String: String] = [
        "scene.present": "present", "scene.dismiss": "dismiss", "scene.push": "push", "scene.pop": "pop",
        "scene.selectTab": "selectTab", "scene.update": "updateScene", "scene.setWindowMask": "setWindowMask",
        "scene.attemptRotation": "attemptRotation", "scene.forceRotation": "forceRotation",
        "scene.requestGeometryUpdate": "requestGeometryUpdate", "scene.updateSupportedOrientations": "updateSupportedOrientations",
        "scene.launch": "launch", "scene.beginDeviceNotifications": "beginDeviceNotifications",
        "scene.endDeviceNotifications": "endDeviceNotifications",
    ]

    func performSceneOp(_ request: Request) throws -> [(key: String, value: JSONValue)] {
        guard let type = Self.sceneActions[request.op] else { throw ProtocolError.unknownOperation(request.op) }
        guard session != nil else { throw ProtocolError("no-session", "\(request.op) needs a session; session.open first") }
        guard case .object(let members) = request.body.value else { throw ProtocolError.badRequest("the request is not an object") }
        // `id` is the request's; scene.update names its scene with `scene` (the action's `id`).
        var fields = members.filter { $0.key != "id" && $0.key != "op" && $0.key != "type" && $0.key != "scene" }
        if type == "updateScene" {
            guard case .string(let scene)? = request.body.value["scene"] else { throw ProtocolError.badRequest("scene.update: missing field scene (the scene's id)") }
            fields.append(("id", .string(scene)))
        }
        let actionObject = JSONValue.object([("type", .string(type))] + fields)
        let action = try ResolverJSON.action(JSONReader(actionObject))
        switch action {
        case .push(let node, _), .present(let node, _):
            if Self.nodeCount(session!.state) + Self.nodeCount(node) > hub.configuration.maximumSessionNodes {
                throw ProtocolError("limit-exceeded", "a session holds at most \(hub.configuration.maximumSessionNodes) nodes")
            }
        default:
            break
        }
        let outcome = session!.apply(action)
        if let error = outcome.error {
            throw ProtocolError(error.code.rawValue, "\(type) rejected: \(error.reason.rawValue)", reason: error.reason.rawValue)
        }
        if let change = outcome.interfaceChange { sendSessionEvent(change) }
        return Self.sessionFields(session!.state) + [("change", outcome.interfaceChange.map { ResolverJSON.json($0, complete: true) } ?? .null)]
    }

    func checkSessionSize(_ state: ResolverState) throws {
        if Self.nodeCount(state) > hub.configuration.maximumSessionNodes {
            throw ProtocolError("limit-exceeded", "a session holds at most \(hub.configuration.maximumSessionNodes) nodes")
        }
    }

    static func nodeCount(_ node: PresentationNode) -> Int { 1 + node.children.map(nodeCount).reduce(0, +) }
    static func nodeCount(_ state: ResolverState) -> Int { nodeCount(state.root) + state.presented.map { nodeCount($0.node) }.reduce(0, +) }
}
