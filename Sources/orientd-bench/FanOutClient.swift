#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CLinux
import Glibc
import OrientationCore
import OrientationProtocol
import SensorCore
import Synchronization

/// `orientd-bench fanout-client SOCKET COUNT [--stalled] [--churn RATE]`: the client side of the
/// fan-out benchmark (bench/comparison.py drives the daemon and this process).
///
/// It opens COUNT connections subscribed to `device` (and with `--stalled` one more that subscribes
/// to everything and never reads), prints `ready`, then for every pose name read from standard
/// input waits until every connection has that device event and prints one line: the latency of
/// each connection in milliseconds (receipt − the event's `time`, both CLOCK_MONOTONIC). With
/// `--churn RATE`, a second thread meanwhile connects and disconnects RATE times a second (every
/// third connection subscribes to every topic first); at the end of input it prints `churn N`,
/// the cycles done.
///
/// Why a compiled client: with one Python process reading 1000 sockets, the reader's own time per
/// socket (tens of microseconds) was most of the figure being measured. Here the receipt time is
/// taken once per `epoll_wait` return, before anything is parsed, and parsing waits until every
/// connection has its event.
enum FanOutClient {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The request of the stalled client and of every third churning one.
    static let subscribeToEverything = subscribeRequest(Topic.subscribable)
    static let subscribeToDevice = subscribeRequest([.device])

    static func subscribeRequest(_ topics: [Topic]) -> String {
        JSONValue.object([
            ("id", .number(1)), ("op", .string(Operation.subscribe.rawValue)),
            ("topics", .array(topics.map { .string($0.rawValue) })),
        ]).serialized + "\n"
    }

    static func run(socketPath: String, count: Int, stalled: Bool, churnRate: Int?) throws {
        let sockets = try (0..<count).map { _ in try connect(socketPath) }
        var idle: Int32?
        if stalled {
            let socket = try connect(socketPath)
            var size: Int32 = 4096
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            try send(socket, subscribeToEverything)
            idle = socket
        }
        for socket in sockets { try send(socket, Self.subscribeToDevice) }
        for socket in sockets { try awaitLines(socket, count: 2) }  // hello and the reply
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw Failure(description: "epoll_create1: \(String(cString: strerror(errno)))") }
        for (index, socket) in sockets.enumerated() {
            _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = UInt64(index)
            guard epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) == 0 else {
                throw Failure(description: "epoll_ctl: \(String(cString: strerror(errno)))")
            }
        }
        let churn = churnRate.map { Churn(socketPath: socketPath, rate: $0) }
        print("ready")
        fflush(nil)

        var events = [epoll_event](repeating: epoll_event(), count: 1024)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while let pose = readLine() {
            var received: [(index: Int, time: Double, bytes: [UInt8])] = []
            var complete = [Bool](repeating: false, count: count)
            var remaining = count
            let deadline = monotonicNow() + 10
            while remaining > 0, monotonicNow() < deadline {
                let ready = epoll_wait(epoll, &events, Int32(events.count), 1000)
                let now = monotonicNow()  // one receipt time per wake-up, before any parsing
                guard ready > 0 else { continue }
                for event in events[0..<Int(ready)] {
                    let index = Int(event.data.u64)
                    while true {
                        let got = buffer.withUnsafeMutableBytes { recv(sockets[index], $0.baseAddress, $0.count, 0) }
                        guard got > 0 else { break }
                        received.append((index, now, Array(buffer[0..<got])))
                        if !complete[index], buffer[0..<got].contains(UInt8(ascii: "\n")) {
                            complete[index] = true
                            remaining -= 1
                        }
                    }
                }
            }
            guard remaining == 0 else {
                throw Failure(description: "\(remaining) clients missed the change to \(pose)")
            }
            var pending = [[UInt8]](repeating: [], count: count)
            var latencies = [Double?](repeating: nil, count: count)
            for (index, time, bytes) in received {
                pending[index] += bytes
                while let newline = pending[index].firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(pending[index][..<newline])
                    pending[index].removeSubrange(...newline)
                    let message = try JSONValue.parse(line)
                    if message["topic"] == .string(Topic.device.rawValue), message["to"] == .string(pose),
                        case .number(let sent)? = message["time"]
                    {
                        latencies[index] = time - sent
                    }
                }
            }
            let missing = latencies.filter { $0 == nil }.count
            guard missing == 0 else { throw Failure(description: "\(missing) clients got no device event to \(pose)") }
            print(latencies.map { String(format3($0! * 1000)) }.joined(separator: " "))
            fflush(nil)
        }
        sockets.forEach { close($0) }
        if let idle { close(idle) }
        if let churn {
            let cycles = try churn.stop()
            print("churn \(cycles)")
            fflush(nil)
        }
    }

    /// Connect/disconnect cycles at a steady rate on their own thread, as other clients come and go
    /// while the measured ones listen.
    final class Churn {
        /// What the churn thread and the main thread share.
        private final class State: Sendable {
            let stopping = Atomic<Bool>(false)
            let cycles = Atomic<Int>(0)
            let failure = Mutex<String?>(nil)
        }

        private let state = State()
        private var thread: WorkerThread?

        init(socketPath: String, rate: Int) {
            thread = WorkerThread(name: "churn") { [state] in
                Self.loop(socketPath: socketPath, rate: rate, state: state)
            }
        }

        private static func loop(socketPath: String, rate: Int, state: State) {
            let interval = 1 / Double(rate)
            var next = FanOutClient.monotonicNow()
            while !state.stopping.load(ordering: .relaxed) {
                do {
                    let socket = try FanOutClient.connect(socketPath)
                    if state.cycles.load(ordering: .relaxed) % 3 == 1 {
                        try FanOutClient.send(socket, FanOutClient.subscribeToEverything)
                    }
                    close(socket)
                    state.cycles.add(1, ordering: .relaxed)
                } catch {
                    state.failure.withLock { $0 = "\(error)" }
                    return
                }
                next += interval
                let wait = next - FanOutClient.monotonicNow()
                if wait > 0 { usleep(useconds_t(wait * 1e6)) }
            }
        }

        /// Stops the thread; the cycles done, or the error that ended them.
        func stop() throws -> Int {
            state.stopping.store(true, ordering: .relaxed)
            thread?.join()
            thread = nil
            if let message = state.failure.withLock({ $0 }) { throw Failure(description: "churn: \(message)") }
            return state.cycles.load(ordering: .relaxed)
        }
    }

    static func monotonicNow() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Milliseconds with microsecond resolution.
    static func format3(_ value: Double) -> String { "\((value * 1000).rounded() / 1000)" }

    static func connect(_ path: String) throws -> Int32 {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = try address(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw Failure(description: "connect \(path): \(String(cString: strerror(errno)))") }
        return socket
    }

    /// The address of a socket file; a path too long for `sun_path` is an error, not a truncation.
    static func address(_ path: String) throws -> sockaddr_un {
        guard let address = UnixSocketAddress.make(path) else {
            throw Failure(description: "socket path longer than \(UnixSocketAddress.maximumPathLength) bytes: \(path)")
        }
        return address
    }

    static func send(_ socket: Int32, _ text: String) throws {
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.send(socket, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            throw Failure(description: "send: \(String(cString: strerror(errno)))")
        }
    }

    /// Blocks until `count` lines have arrived on a (still blocking) socket.
    static func awaitLines(_ socket: Int32, count: Int) throws {
        var lines = 0
        var byte: UInt8 = 0
        while lines < count {
            guard recv(socket, &byte, 1, 0) == 1 else {
                throw Failure(description: "the daemon closed a connection before its reply")
            }
            if byte == UInt8(ascii: "\n") { lines += 1 }
        }
    }
}
