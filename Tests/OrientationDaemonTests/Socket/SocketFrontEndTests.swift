import NIOCore
import NIOEmbedded
import OrientationCore
import SensorCore
import Testing

@testable import OrientationDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The socket front end on a real hub (on an embedded loop), each client a connection handler on an
/// embedded channel whose direct writes go to one end of a real socket pair.
@Suite("socket front end")
struct SocketFrontEndTests {
    let loop = EmbeddedEventLoop()
    let hub: OrientationHub

    init() {
        var configuration = DaemonConfiguration()
        configuration.socketPath = "/nonexistent/orientd.sock"
        hub = OrientationHub(
            eventLoop: loop, configuration: configuration, source: SilentSource(), serverName: "orientd test")
        hub.handle(.available(SensorDescription(identifier: "iio:device0", name: "test")))
    }

    /// A connected client subscribed to the device topic (or as `subscribe` asks): its channel, and
    /// the far end of its socket (what the client reads).
    private func subscribedClient(
        _ subscribe: String = #"{"id":1,"op":"subscribe","topics":["device"]}"#
    ) throws -> (channel: EmbeddedChannel, peer: Int32) {
        var descriptors: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0)
        let channel = EmbeddedChannel(
            handler: ConnectionHandler(
                frontEnd: hub.socket, credentials: nil, writer: SocketWriter(descriptor: descriptors[0])),
            loop: loop)
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/nonexistent/orientd.sock")).wait()
        try channel.writeInbound(ByteBuffer(string: subscribe))
        return (channel, descriptors[1])
    }

    /// Everything the client's socket holds now.
    private func received(_ peer: Int32) -> String {
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(peer, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { break }
            text += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        return text
    }

    @Test(
        """
        a client whose socket fails while an event is published is disconnected after the action list (no \
        nested perform), and the others get the event
        """
    )
    func failedWriteDuringPublish() throws {
        let gone = try subscribedClient(), staying = try subscribedClient()
        #expect(hub.statusLine.contains("2 clients"), "\(hub.statusLine)")
        close(gone.peer)  // the client vanished: the next direct write fails with EPIPE
        _ = received(staying.peer)
        hub.handle(
            .sample(SensorSample(time: 1, reading: Vector3(-9.81, 0, 0))),
            detection: .init(change: OrientationChange(time: 1, from: .unknown, to: .landscapeLeft)))
        #expect(!gone.channel.isActive, "the failed write closed the connection")
        #expect(hub.disconnectsDeferred == 1, "disconnected after the list, not inside it")
        #expect(hub.statusLine.contains("1 client;"), "\(hub.statusLine)")
        #expect(received(staying.peer).contains(#""to":"landscapeLeft""#))
        close(staying.peer)
        _ = try? staying.channel.finish()
    }

    @Test(
        """
        a motion sample held for a client behind on the stream goes before a later event, not after it: the \
        client reads seq and state in order
        """
    )
    func heldMotionKeepsTheOrder() throws {
        let (channel, peer) = try subscribedClient(#"{"id":1,"op":"subscribe","topics":["motion","device"],"rate":20}"#)
        var text = received(peer)
        // 20 samples a second, unread: past 8 KiB the newest is held.
        for step in 0..<20 {
            let time = 1 + Double(step) * 0.05
            let motion = MotionSample(time: time, gravity: Vector3(0, -9.81, 0), userAcceleration: .zero)
            hub.handle(
                .sample(SensorSample(time: time, reading: Vector3(0, -9.81, 0))), detection: .init(motion: motion))
        }
        hub.handle(
            .sample(SensorSample(time: 2, reading: Vector3(-9.81, 0, 0))),
            detection: .init(change: OrientationChange(time: 2, from: .unknown, to: .landscapeLeft)))
        text += received(peer)
        loop.advanceTime(by: .milliseconds(100))  // the held sample's checks, had it stayed held
        text += received(peer)
        let seqs = text.split(separator: "\n").compactMap { line -> Int? in
            guard line.contains(#""type":"event""#), let range = line.range(of: #""seq":"#) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(seqs.count >= 8, "\(seqs)")
        #expect(seqs == seqs.sorted(), "in order: \(seqs)")
        #expect(text.contains(#""to":"landscapeLeft""#))
        close(peer)
        _ = try? channel.finish()
    }
}
