import CLinux
import NIOCore
import NIOPosix
import OrientationProtocol

/// For the measurement of issue 14 only (make bench's fan-out with ORIENTD_PLAIN_NIO=1): SwiftNIO's
/// own ServerBootstrap on the same bound socket, SO_PEERCRED through `SocketOptionProvider`, and
/// every line written with `writeAndFlush` (a ``SocketWriter`` without a descriptor takes nothing).
final class PlainNIOAcceptor: Sendable {
    private let channel: any Channel

    init(listening: Int32, frontEnd: SocketFrontEnd) throws {
        channel = try ServerBootstrap(group: frontEnd.eventLoop)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 64 * 1024))
            .childChannelInitializer { channel in
                guard let options = channel as? any SocketOptionProvider else {
                    return channel.eventLoop.makeFailedFuture(SocketSetupError(description: "no socket options"))
                }
                let credentials: EventLoopFuture<orientd_peer_credentials> = options.unsafeGetSocketOption(level: .socket, name: .init(rawValue: SO_PEERCRED))
                return credentials.flatMapThrowing { credentials in
                    let peer = PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(ConnectionHandler(frontEnd: frontEnd, credentials: peer, writer: SocketWriter(descriptor: -1)))
                }
            }
            .withBoundSocket(listening).wait()
    }

    func stop() {
        try? channel.close().wait()
    }
}
