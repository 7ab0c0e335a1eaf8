import CLinux
import Glibc
import OrientationCore
import OrientationProtocol
import SensorCore

/// `orientd-bench floor-server SOCKET`: the least a fan-out can cost on this machine, measured by
/// the same client and cases as the daemon (bench/comparison.py), so the daemon's figures can be read
/// against it.
///
/// One thread on one epoll. It accepts connections on SOCKET, sends each a hello line, answers each
/// request line with a reply line, and for every pose name read from standard input writes one
/// device event (the daemon's format, serialized once with the time taken just before the writes)
/// to every connection that has sent a request: one nonblocking `send` each, and a connection that
/// cannot take the line loses it. No protocol, no policy, no queue, no per-client state but the
/// descriptor: what is left is the kernel's cost of the writes and of waking the readers, and the
/// machine's scheduling. It prints `ready` once listening, and ends at the end of standard input.
enum FloorServer {
    static func run(socketPath: String) throws {
        signal(SIGPIPE, SIG_IGN)
        let listener = try listen(at: socketPath)
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else {
            throw FanOutClient.Failure(description: "epoll_create1: \(String(cString: strerror(errno)))")
        }
        for descriptor in [listener, STDIN_FILENO] { try watch(descriptor, in: epoll) }
        print("ready")
        fflush(nil)

        let hello = line(for: ServerMessage.hello(server: "orientd-bench floor-server", state: DaemonState(), seq: 0))
        let reply = line(for: ServerMessage.reply(id: .number(1), .empty))
        var subscribers = Subscribers()
        var input: [UInt8] = []
        var seq = 0
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let ready = epoll_wait(epoll, &events, Int32(events.count), -1)
            if ready < 0, errno == EINTR { continue }
            guard ready >= 0 else {
                throw FanOutClient.Failure(description: "epoll_wait: \(String(cString: strerror(errno)))")
            }
            for event in events[0..<Int(ready)] {
                let descriptor = event.data.fd
                if descriptor == listener {
                    let connection = accept(listener, nil, nil)
                    guard connection >= 0 else { continue }
                    _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
                    try watch(connection, in: epoll)
                    write(hello, to: connection)
                    continue
                }
                let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if descriptor == STDIN_FILENO {
                    guard got > 0 else { return }
                    input += buffer[0..<got]
                    while let newline = input.firstIndex(of: UInt8(ascii: "\n")) {
                        let pose = String(decoding: input[..<newline], as: UTF8.self)
                        input.removeSubrange(...newline)
                        guard let device = DeviceOrientation(rawValue: pose) else {
                            throw FanOutClient.Failure(
                                description: "standard input: \"\(pose)\" is not a device orientation")
                        }
                        seq += 1
                        let state = DaemonState(
                            device: device, interface: .portrait, sensor: .active, sensorName: "stdin")
                        let event = line(
                            for: ServerMessage.event(
                                Event(
                                    seq: seq, time: MonotonicClock.now(), state: state,
                                    payload: .device(from: .unknown, to: device))))
                        for subscriber in subscribers.descriptors { write(event, to: subscriber) }
                    }
                } else if got > 0 {
                    for byte in buffer[0..<got] where byte == UInt8(ascii: "\n") {
                        write(reply, to: descriptor)
                        subscribers.insert(descriptor)
                    }
                } else if got == 0 || (errno != EAGAIN && errno != EINTR) {
                    subscribers.remove(descriptor)
                    close(descriptor)  // also leaves the epoll set
                }
            }
        }
    }

    /// The descriptors to write events to, in an array (the write loop walks it) with each one's
    /// position (so a disconnect removes it at once).
    struct Subscribers {
        private(set) var descriptors: [Int32] = []
        private var positions: [Int32: Int] = [:]

        mutating func insert(_ descriptor: Int32) {
            guard positions[descriptor] == nil else { return }
            positions[descriptor] = descriptors.count
            descriptors.append(descriptor)
        }

        mutating func remove(_ descriptor: Int32) {
            guard let position = positions.removeValue(forKey: descriptor) else { return }
            let last = descriptors.removeLast()
            if position < descriptors.count {
                descriptors[position] = last
                positions[last] = position
            }
        }
    }

    static func line(for message: JSONValue) -> [UInt8] {
        Array(message.serialized.utf8) + [UInt8(ascii: "\n")]
    }

    /// One nonblocking send; whatever does not fit is dropped (this server keeps no queue).
    static func write(_ line: [UInt8], to descriptor: Int32) {
        _ = line.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
    }

    static func watch(_ descriptor: Int32, in epoll: Int32) throws {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = descriptor
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0 else {
            throw FanOutClient.Failure(description: "epoll_ctl: \(String(cString: strerror(errno)))")
        }
    }

    static func listen(at path: String) throws -> Int32 {
        unlink(path)
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else {
            throw FanOutClient.Failure(description: "socket: \(String(cString: strerror(errno)))")
        }
        var address = try FanOutClient.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, Glibc.listen(socket, 4096) == 0 else {
            throw FanOutClient.Failure(description: "listen on \(path): \(String(cString: strerror(errno)))")
        }
        return socket
    }
}
