import Logging
import NIOCore
import OrientationCore
import OrientationProtocol
import SensorCore

/// The Unix socket as a front end of the hub: each connection is a listener; its lines become
/// ``ClientRequest``s for the hub, and the hub's events and replies become lines (protocol v1,
/// docs/protocol.md). The only part of the daemon that knows the wire format.
///
/// Lives on the hub's event loop (its state is bound to it, checked at every access).
final class SocketFrontEnd: Sendable {
    /// The hub owns the front end.
    private unowned let hub: OrientationHub
    let serverName: String
    /// `orientd.socket` (connections).
    let logger = Logger(label: "orientd.socket")
    private let loopState: NIOLoopBoundBox<LoopState>

    private final class LoopState {
        var connections: [ListenerID: Connection] = [:]
        var helloCache: (seq: Int, state: DaemonState, line: ByteBuffer)?
    }

    /// The one door to the loop's state: SwiftNIO checks that the caller is on the loop.
    private var onLoop: LoopState { loopState.value }

    init(hub: OrientationHub, serverName: String) {
        self.hub = hub
        self.serverName = serverName
        loopState = NIOLoopBoundBox.makeBoxSendingValue(LoopState(), eventLoop: hub.eventLoop)
    }

    var eventLoop: any EventLoop { hub.eventLoop }

    /// A connection is up: it becomes a listener (the caller keeps it, then calls ``greet(_:)``), or,
    /// beyond the maximum, hears the refusal and is closed.
    func accept(channel: any Channel, credentials: PeerCredentials?, writer: SocketWriter) -> Connection? {
        let isPrivileged =
            credentials.map { Authorization.isPrivileged($0, controlGroup: hub.configuration.controlGroup) } ?? false
        do throws(ProtocolError) {
            let listener = try hub.connect(isPrivileged: isPrivileged)
            let connection = Connection(
                channel: channel, listener: listener, credentials: credentials, writer: writer,
                stallTimeout: hub.configuration.stallTimeout, logger: logger)
            onLoop.connections[listener] = connection
            return connection
        } catch {
            let refused = Connection(
                channel: channel, listener: nil, credentials: credentials, writer: writer, stallTimeout: 0,
                logger: logger)
            refused.send(ServerMessage.reply(id: .null, error: error))
            logger.warning("client refused: too many clients", metadata: ["clients": "\(onLoop.connections.count)"])
            refused.close()
            return nil
        }
    }

    /// The hello. Separate from ``accept(channel:credentials:writer:)`` because a write that finds
    /// the client gone closes the channel at once, and whoever handles its closing must already
    /// hold the connection.
    func greet(_ connection: Connection) {
        connection.send(line: helloLine())
    }

    /// The connection closed: the hub forgets its listener.
    func remove(_ connection: Connection) {
        guard let listener = connection.listener, onLoop.connections.removeValue(forKey: listener) != nil else {
            return
        }
        hub.disconnect(listener)
    }

    /// One line from a client: a request answered in order, or an error reply naming the problem.
    func received(_ line: ByteBuffer, from connection: Connection) {
        guard let listener = connection.listener else { return }
        let request: Request
        switch Request.parse(line) {
        case .success(let parsed): request = parsed
        case .failure(let rejection):
            connection.send(ServerMessage.reply(id: rejection.id, error: rejection.error))
            return
        }
        let reply = request.decode().flatMap { hub.handle($0, from: listener) }
        if case .failure(let error) = reply, error.code == .permissionDenied {
            hub.logger.notice(
                "privileged op refused",
                metadata: ["peer.uid": "\(connection.credentials?.uid.description ?? "?")", "op": "\(request.op)"])
        }
        connection.send(ServerMessage.reply(id: request.id, reply))
    }

    /// An event for some of this front end's listeners: serialized once, shared by all of them.
    func deliver(_ event: Event, to listeners: [ListenerID]) {
        guard !listeners.isEmpty else { return }
        let line = Connection.line(ServerMessage.event(event))
        let state = onLoop  // checked once, not per listener
        for listener in listeners {
            state.connections[listener]?.sendEvent(line: line, topic: event.topic)
        }
    }

    /// A new stall timeout (SIGHUP) for every connection.
    func setStallTimeout(_ seconds: Double) {
        for connection in onLoop.connections.values { connection.stallTimeout = seconds }
    }

    /// Says goodbye to every client and ends each connection gracefully (see
    /// ``Connection/finish(goodbye:linger:)``); completes when all are closed, at most `linger` later.
    func closeAll(reason: String, linger: TimeAmount) -> EventLoopFuture<Void> {
        let goodbye = ServerMessage.goodbye(reason: reason)
        let closed = onLoop.connections.values.map { $0.finish(goodbye: goodbye, linger: linger) }
        onLoop.connections.removeAll()
        return EventLoopFuture.andAllComplete(closed, on: eventLoop)
    }

    /// The hello for a new client: serialized once for each state it describes (connections come
    /// much more often than changes when clients connect in a loop).
    private func helloLine() -> ByteBuffer {
        let (seq, state) = (hub.seq, hub.state)
        if let cached = onLoop.helloCache, cached.seq == seq, cached.state == state { return cached.line }
        let line = Connection.line(ServerMessage.hello(server: serverName, state: state, seq: seq))
        onLoop.helloCache = (seq, state, line)
        return line
    }
}

/// Decoded lines → the front end; connection life → the front end.
final class ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let frontEnd: SocketFrontEnd
    private let credentials: PeerCredentials?
    private let writer: SocketWriter
    private var connection: Connection?

    init(frontEnd: SocketFrontEnd, credentials: PeerCredentials?, writer: SocketWriter) {
        self.frontEnd = frontEnd
        self.credentials = credentials
        self.writer = writer
    }

    func channelActive(context: ChannelHandlerContext) {
        connection = frontEnd.accept(channel: context.channel, credentials: credentials, writer: writer)
        if let connection { frontEnd.greet(connection) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let connection, !connection.isClosed else { return }
        frontEnd.received(unwrapInboundIn(data), from: connection)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        connection?.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is LineFrameDecoder.LineTooLongError {
            connection?.send(ServerMessage.reply(id: .null, error: .lineTooLong))
        }
        connection?.close()
        if connection == nil { context.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let connection {
            frontEnd.remove(connection)
            connection.channelClosed()
        }
        writer.close()  // also when the client was refused
        connection = nil
        context.fireChannelInactive()
    }
}
