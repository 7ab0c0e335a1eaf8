import NIOCore
import NIOPosix
import OrientationCore
import OrientationProtocol

/// Something the daemon said (an event, or the goodbye before it closes the connection).
public struct OrientationEvent: Sendable {
    /// The event's topic; nil for the goodbye (and for a topic newer than this library).
    public let topic: Topic?
    /// The daemon is closing the connection (``message`` has its `reason`).
    public let isGoodbye: Bool
    public let seq: Int
    /// Monotonic seconds on the daemon's clock.
    public let time: Double
    /// The daemon's whole state after the change (nil for goodbye).
    public let state: DaemonState?
    /// The whole message, for topic fields (`from`, `to`, `rotationDegrees`, …).
    public let message: JSONValue

    /// `from` and `to` as text: a name, a number (the hinge's degrees) or "null".
    public var from: String? { Self.text(message["from"]) }
    public var to: String? { Self.text(message["to"]) }

    /// A `motion` event's sample (nil for other topics, or a malformed one).
    public var motion: MotionSample? {
        guard topic == .motion, let gravity = Self.vector(message["gravity"]),
            let user = Self.vector(message["userAcceleration"])
        else { return nil }
        var attitude: Quaternion?
        if case .array(let parts)? = message["attitude"], parts.count == 4 {
            let numbers = parts.compactMap { if case .number(let n) = $0 { n } else { nil } }
            if numbers.count == 4 { attitude = Quaternion(w: numbers[0], x: numbers[1], y: numbers[2], z: numbers[3]) }
        }
        return MotionSample(
            time: time, gravity: gravity, userAcceleration: user, rotationRate: Self.vector(message["rotationRate"]),
            attitude: attitude)
    }

    private static func vector(_ value: JSONValue?) -> Vector3? {
        guard case .array(let parts)? = value, parts.count == 3 else { return nil }
        let numbers = parts.compactMap { if case .number(let n) = $0 { n } else { nil } }
        return numbers.count == 3 ? Vector3(numbers[0], numbers[1], numbers[2]) : nil
    }

    private static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let name)?: name
        case .number, .null: value!.serialized
        default: nil
        }
    }
}

/// Why a client call failed.
public enum OrientationClientError: Error, Sendable, CustomStringConvertible {
    /// The socket could not be reached (the daemon is not running, or permissions).
    case cannotConnect(path: String, reason: String)
    /// The daemon answered with `ok: false`.
    case rejected(ProtocolError)
    /// The connection ended before the answer came.
    case disconnected
    /// The daemon sent something that is not protocol v1.
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .cannotConnect(let path, let reason): "cannot connect to \(path): \(reason)"
        case .rejected(let error): "\(error.code): \(error.message)"
        case .disconnected: "the daemon closed the connection"
        case .protocolViolation(let detail): "unexpected message from the daemon: \(detail)"
        }
    }
}

/// A connection to orientd (protocol v1): requests with replies, and a stream of events.
public actor OrientationClient {
    /// The default socket: `$ORIENTD_SOCKET`, else /run/orientd/orientd.sock.
    public static func defaultSocketPath(environment: [String: String]) -> String {
        environment["ORIENTD_SOCKET"] ?? "/run/orientd/orientd.sock"
    }

    /// The state the daemon greeted with.
    public private(set) var helloState: DaemonState?
    public private(set) var server = ""
    /// Events in the order the daemon sent them; finishes when the connection ends.
    public nonisolated let events: AsyncStream<OrientationEvent>
    private let eventContinuation: AsyncStream<OrientationEvent>.Continuation
    private var outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>?
    private var pending: [Int: CheckedContinuation<JSONValue, any Error>] = [:]
    private var helloWaiter: CheckedContinuation<Void, any Error>?
    private var nextID = 1
    private var ended = false
    private var closeRequested = false

    private init() {
        (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Connects and waits for the daemon's hello.
    public static func connect(path: String) async throws -> OrientationClient {
        let client = OrientationClient()
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(LineFrameDecoder(maximumLength: 1 << 20)))
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch let error as IOError {
            throw OrientationClientError.cannotConnect(path: path, reason: String(cString: strerror(error.errnoCode)))
        } catch SocketAddressError.unixDomainSocketPathTooLong {
            throw OrientationClientError.cannotConnect(
                path: path, reason: "the path is longer than a socket address holds (107 bytes)")
        } catch let error as CustomStringConvertible {
            throw OrientationClientError.cannotConnect(path: path, reason: error.description)
        } catch {
            throw OrientationClientError.cannotConnect(path: path, reason: "the connection could not be set up")
        }
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            Task {
                await client.setHelloWaiter(waiter)
                do {
                    try await channel.executeThenClose { inbound, outbound in
                        await client.attach(outbound)
                        for try await line in inbound {
                            await client.receive(line)
                            if await client.closeRequested { break }
                        }
                    }
                } catch {}
                await client.connectionEnded()
            }
        }
        return client
    }

    private func setHelloWaiter(_ waiter: CheckedContinuation<Void, any Error>) { helloWaiter = waiter }
    private func attach(_ writer: NIOAsyncChannelOutboundWriter<ByteBuffer>) { outbound = writer }

    private func receive(_ line: ByteBuffer) {
        guard let value = try? JSONValue.parse(Array(line.readableBytesView)), case .string(let type)? = value["type"]
        else {
            return
        }
        switch type {
        case MessageType.hello.rawValue:
            helloState = try? DaemonState(json: JSONReader(value["state"] ?? .null))
            if case .string(let name)? = value["server"] { server = name }
            helloWaiter?.resume()
            helloWaiter = nil
        case MessageType.reply.rawValue:
            guard case .number(let number)? = value["id"], let continuation = pending.removeValue(forKey: Int(number))
            else { return }
            if value["ok"] == .bool(true) {
                continuation.resume(returning: value)
            } else {
                let error = value["error"]
                func text(_ key: String) -> String? { if case .string(let s)? = error?[key] { s } else { nil } }
                continuation.resume(
                    throwing: OrientationClientError.rejected(
                        ProtocolError(
                            ProtocolErrorCode(rawValue: text("code") ?? "unknown"), text("message") ?? "",
                            reason: text("reason"))))
            }
        case MessageType.event.rawValue:
            func number(_ key: String) -> Double { if case .number(let n)? = value[key] { n } else { 0 } }
            let topic = if case .string(let name)? = value["topic"] { Topic(rawValue: name) } else { Topic?.none }
            eventContinuation.yield(
                OrientationEvent(
                    topic: topic, isGoodbye: false, seq: Int(number("seq")), time: number("time"),
                    state: try? DaemonState(json: JSONReader(value["state"] ?? .null)), message: value))
        case MessageType.goodbye.rawValue:
            eventContinuation.yield(
                OrientationEvent(topic: nil, isGoodbye: true, seq: 0, time: 0, state: nil, message: value))
        default:
            break
        }
    }

    private func connectionEnded() {
        ended = true
        helloWaiter?.resume(throwing: OrientationClientError.disconnected)
        helloWaiter = nil
        for continuation in pending.values { continuation.resume(throwing: OrientationClientError.disconnected) }
        pending.removeAll()
        eventContinuation.finish()
    }

    /// Sends `{"id", "op", …fields}` and returns the reply; a rejection throws
    /// ``OrientationClientError/rejected(_:)``.
    @discardableResult
    public func request(_ op: Operation, _ fields: [(key: String, value: JSONValue)] = []) async throws -> JSONValue {
        guard !ended, let outbound else { throw OrientationClientError.disconnected }
        let id = nextID
        nextID += 1
        let message = JSONValue.object([("id", .number(Double(id))), ("op", .string(op.rawValue))] + fields)
        var buffer = ByteBuffer(string: message.serialized)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return try await withCheckedThrowingContinuation { continuation in
            pending[id] = continuation
            Task {
                do {
                    try await outbound.write(buffer)
                } catch {
                    self.fail(id)
                }
            }
        }
    }

    private func fail(_ id: Int) {
        pending.removeValue(forKey: id)?.resume(throwing: OrientationClientError.disconnected)
    }

    /// The daemon's current state.
    public func state() async throws -> DaemonState {
        let reply = try await request(.get)
        do {
            return try DaemonState(json: JSONReader(reply["state"] ?? .null))
        } catch {
            throw OrientationClientError.protocolViolation("\(error)")
        }
    }

    /// Subscribes to topics (`device`, `interface`, `sensor`, `lock`, `hinge`, `mode`); events arrive
    /// on ``events``. Subscribing to device, interface, hinge or mode keeps the sensors sampling.
    @discardableResult
    public func subscribe(_ topics: [Topic]) async throws -> DaemonState {
        let reply = try await request(.subscribe, [("topics", .array(topics.map { .string($0.rawValue) }))])
        return (try? DaemonState(json: JSONReader(reply["state"] ?? .null))) ?? helloState ?? DaemonState()
    }

    /// Subscribes to the `motion` topic at `rate` Hz (1–100; nil: the daemon's default, 20 Hz);
    /// returns the rate granted (at most 60 Hz unless root or the control group, and at most the
    /// sensor's). ``OrientationEvent/motion`` reads each event's sample.
    @discardableResult
    public func subscribeMotion(rate: Double? = nil) async throws -> Double? {
        let reply = try await request(
            .subscribe,
            [("topics", .array([.string(Topic.motion.rawValue)]))] + (rate.map { [("rate", .number($0))] } ?? []))
        if case .number(let granted)? = reply["rate"] { return granted }
        return nil
    }

    public func unsubscribe(_ topics: [Topic]) async throws {
        try await request(.unsubscribe, [("topics", .array(topics.map { .string($0.rawValue) }))])
    }

    /// Engages or releases the rotation lock (needs root or the control group).
    public func lock(_ on: Bool) async throws {
        try await request(.lock, [("on", .bool(on))])
    }

    /// Opens this connection's resolver session; `initial` is a state object as in resolver.md §1.
    @discardableResult
    public func openSession(initial: JSONValue? = nil) async throws -> JSONValue {
        try await request(.openSession, initial.map { [("initial", $0)] } ?? [])
    }

    /// A `scene.*` op on the session (``Operation/scenePresent``, ``Operation/scenePush``, …) with
    /// its action fields.
    @discardableResult
    public func scene(_ op: Operation, _ fields: [(key: String, value: JSONValue)] = []) async throws -> JSONValue {
        guard op.sceneActionType != nil else { throw OrientationClientError.rejected(.unknownOperation(op.rawValue)) }
        return try await request(op, fields)
    }

    /// Closes the connection; ``events`` finishes.
    public func close() async {
        closeRequested = true
        outbound?.finish()
    }
}

#if canImport(Glibc)
import Glibc
#endif
