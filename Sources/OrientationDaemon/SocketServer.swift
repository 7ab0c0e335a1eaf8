import Logging
import NIOCore
import NIOPosix
import OrientationCore
import OrientationProtocol
import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// Why the socket could not be set up; the message names the path.
public struct SocketSetupError: Error, CustomStringConvertible {
    public let description: String
}

/// The Unix stream socket clients connect to.
enum SocketServer {
    /// Binds `path` (replacing a stale socket file, refusing a live one), applies mode and group, and
    /// serves connections on the hub's event loop.
    static func bind(hub: OrientationHub, configuration: DaemonConfiguration, activated descriptor: Int32? = nil) async throws -> any Channel {
        let path = configuration.socketPath
        if descriptor == nil {
            let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            var status = stat()
            if !directory.isEmpty, stat(directory, &status) != 0 || status.st_mode & S_IFMT != S_IFDIR {
                throw SocketSetupError(description: "cannot listen on \(path): the directory \(directory) does not exist (create it, or choose another --socket)")
            }
            try removeStaleSocket(at: path, logger: hub.socketLogger)
        }
        let bootstrap = ServerBootstrap(group: hub.eventLoop)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 64 * 1024))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = ConnectionHandler(hub: hub)
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        let channel: any Channel
        if let descriptor {
            // Socket activation: systemd bound the socket and set its mode and group.
            do {
                return try await bootstrap.withBoundSocket(descriptor).get()
            } catch {
                throw SocketSetupError(description: "cannot use the socket systemd passed (descriptor \(descriptor)): \(error)")
            }
        }
        do {
            channel = try await bootstrap.bind(unixDomainSocketPath: path).get()
        } catch {
            let reason = (error as? IOError).map { String(cString: strerror($0.errnoCode)) } ?? "\(error)"
            throw SocketSetupError(description: "cannot listen on \(path): \(reason)")
        }
        if chmod(path, mode_t(configuration.socketMode)) != 0 {
            throw SocketSetupError(description: "cannot set mode \(String(configuration.socketMode, radix: 8)) on \(path): \(String(cString: strerror(errno)))")
        }
        if let group = configuration.socketGroup {
            guard let gid = Authorization.groupID(named: group) else { throw SocketSetupError(description: "socket group \"\(group)\" does not exist") }
            if chown(path, uid_t.max, gid) != 0 {
                throw SocketSetupError(description: "cannot give \(path) to group \(group): \(String(cString: strerror(errno)))")
            }
        }
        return channel
    }

    /// A socket file whose listener is gone (a crashed run) is removed; one that accepts connections
    /// belongs to a running orientd and is left alone; anything else is not ours to delete.
    static func removeStaleSocket(at path: String, logger: Logger) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw SocketSetupError(description: "\(path) exists and is not a socket; not replacing it")
        }
        if canConnect(to: path) {
            throw SocketSetupError(description: "another orientd is listening on \(path)")
        }
        logger.info("replacing stale socket", metadata: ["socket.path": "\(path)"])
        unlink(path)
    }

    static func canConnect(to path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
    }
}

/// Decoded lines → requests for the hub; connection life → the hub.
final class ConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    private let hub: OrientationHub
    private var connection: Connection?

    init(hub: OrientationHub) {
        self.hub = hub
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        // On the channel's own loop the option future is already complete: the callback runs now.
        Authorization.peerCredentials(of: channel).whenComplete { [self] result in
            setUp(channel: channel, credentials: try? result.get())
        }
        context.fireChannelActive()
    }

    private func setUp(channel: any Channel, credentials: PeerCredentials?) {
        let privileged = credentials.map { Authorization.isPrivileged($0, controlGroup: hub.configuration.controlGroup) } ?? false
        let connection = Connection(channel: channel, hub: hub, credentials: credentials, isPrivileged: privileged)
        if hub.connectionCount >= hub.configuration.maximumClients {
            connection.send(ServerMessage.reply(id: .null, error: ProtocolError("too-many-clients", "the daemon serves at most \(hub.configuration.maximumClients) clients")))
            hub.socketLogger.warning("client refused: too many clients", metadata: ["clients": "\(hub.connectionCount)"])
            connection.close()
            return
        }
        self.connection = connection
        hub.add(connection)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let connection, !connection.isClosed else { return }
        switch Request.parse(unwrapInboundIn(data)) {
        case .success(let request): hub.handle(request, from: connection)
        case .failure(let rejection): connection.send(ServerMessage.reply(id: rejection.id, error: rejection.error))
        }
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
        if let connection { hub.remove(connection) }
        connection = nil
        context.fireChannelInactive()
    }
}

/// Peer credentials and the privilege they carry.
enum Authorization {
    /// SO_PEERCRED of a Unix socket: the pid, uid and gid of the process that connected.
    static func peerCredentials(of channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(SocketSetupError(description: "no socket options"))
        }
        let future: EventLoopFuture<orientd_peer_credentials> = provider.unsafeGetSocketOption(level: .socket, name: .init(rawValue: SO_PEERCRED))
        return future.map { PeerCredentials(pid: $0.pid, uid: $0.uid, gid: $0.gid) }
    }

    /// Root, or a member (primary or supplementary) of the control group.
    static func isPrivileged(_ credentials: PeerCredentials, controlGroup: String?) -> Bool {
        if credentials.uid == 0 { return true }
        guard let controlGroup, let controlGID = groupID(named: controlGroup) else { return false }
        if credentials.gid == controlGID { return true }
        guard let user = userName(of: credentials.uid) else { return false }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(user, credentials.gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            _ = getgrouplist(user, credentials.gid, &groups, &count)
        }
        return groups.prefix(Int(max(0, count))).contains(controlGID)
    }

    static func groupID(named name: String) -> gid_t? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getgrnam_r(name, &group, &buffer, buffer.count, &result) == 0, result != nil else {
            return UInt32(name).map { gid_t($0) }
        }
        return group.gr_gid
    }

    static func userName(of uid: UInt32) -> String? {
        var user = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &user, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return String(cString: user.pw_name)
    }
}
