import OrientationCore

/// Protocol v1 of the orientd socket (docs/protocol.md): UTF-8 JSON objects, one per line.
public enum OrientationProtocol {
    public static let version = 1
    /// Longest accepted line, newline excluded; a longer one closes the connection.
    public static let maximumLineLength = 65_536
    /// Topics a client can subscribe to.
    public static let topics = ["device", "interface", "sensor", "lock"]
    /// Subscribing to these claims the sensor (it samples while any claim is held).
    public static let claimingTopics: Set<String> = ["device", "interface"]
}

/// The sensor as clients see it.
public enum SensorStatus: String, Sendable, Hashable, CaseIterable {
    /// Present and sampling (someone claims it).
    case active
    /// Present, not sampling (nobody claims it).
    case idle
    /// No sensor: none found, removed, or unreachable.
    case absent
    /// Present but failing to deliver usable samples (see the daemon's log).
    case failed
}

/// The daemon's whole state, sent with every hello, reply to `get` and event.
public struct DaemonState: Sendable, Hashable {
    public var device: DeviceOrientation
    /// The system session's interface orientation.
    public var interface: InterfaceOrientation
    public var sensor: SensorStatus
    public var locked: Bool
    /// The sensor's identifier (`iio:device0`, `replay:FILE`), when there is one.
    public var sensorName: String?

    public init(device: DeviceOrientation = .unknown, interface: InterfaceOrientation = .unknown, sensor: SensorStatus = .absent,
                locked: Bool = false, sensorName: String? = nil) {
        self.device = device
        self.interface = interface
        self.sensor = sensor
        self.locked = locked
        self.sensorName = sensorName
    }

    public var json: JSONValue {
        .object([
            ("device", .string(device.rawValue)),
            ("interface", .string(interface.rawValue)),
            ("sensor", .string(sensor.rawValue)),
            ("locked", .bool(locked)),
            ("sensorName", sensorName.map { .string($0) } ?? .null),
        ])
    }

    /// Reads the `state` object of a message.
    public init(json reader: JSONReader) throws(JSONFieldError) {
        device = try reader.required("device").enumeration(DeviceOrientation.self)
        interface = try reader.required("interface").enumeration(InterfaceOrientation.self)
        sensor = try reader.required("sensor").enumeration(SensorStatus.self)
        locked = try reader.required("locked").bool()
        sensorName = try reader.optional("sensorName")?.string()
    }
}

/// An error a request can get (`"error": {"code", "message"}`); resolver rejections add `reason`.
public struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// kebab-case for protocol errors (`bad-request`); resolver.md §8's code for resolver rejections.
    public var code: String
    public var message: String
    /// resolver.md §8's reason, for resolver rejections.
    public var reason: String?

    public init(_ code: String, _ message: String, reason: String? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
    }

    public static func badRequest(_ message: String) -> ProtocolError { ProtocolError("bad-request", message) }
    public static func unknownOperation(_ op: String) -> ProtocolError { ProtocolError("unknown-op", "unknown op \"\(op)\"") }
    public static let permissionDenied = ProtocolError("permission-denied", "this op needs root or membership in the control group")
    public static let lineTooLong = ProtocolError("line-too-long", "lines are limited to \(OrientationProtocol.maximumLineLength) bytes; closing the connection")

    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("code", .string(code)), ("message", .string(message))]
        if let reason { members.append(("reason", .string(reason))) }
        return .object(members)
    }

    public var description: String { "\(code): \(message)" }
}

/// Builders for the server's messages, with keys in the documented order.
public enum ServerMessage {
    public static func hello(server: String, state: DaemonState, seq: Int) -> JSONValue {
        .object([("type", "hello"), ("protocol", .number(Double(OrientationProtocol.version))), ("server", .string(server)),
                 ("seq", .number(Double(seq))), ("state", state.json)])
    }

    public static func reply(id: JSONValue, fields: [(key: String, value: JSONValue)] = []) -> JSONValue {
        .object([("type", "reply"), ("id", id), ("ok", true)] + fields)
    }

    public static func reply(id: JSONValue, error: ProtocolError) -> JSONValue {
        .object([("type", "reply"), ("id", id), ("ok", false), ("error", error.json)])
    }

    public static func event(topic: String, seq: Int, time: Double, state: DaemonState, fields: [(key: String, value: JSONValue)]) -> JSONValue {
        .object([("type", "event"), ("topic", .string(topic)), ("seq", .number(Double(seq))), ("time", .number(time)), ("state", state.json)] + fields)
    }

    public static func goodbye(reason: String) -> JSONValue {
        .object([("type", "goodbye"), ("reason", .string(reason))])
    }
}

extension InterfaceOrientationChange {
    /// The topic fields of an interface event (resolver.md §7).
    public var protocolFields: [(key: String, value: JSONValue)] {
        guard case .object(let members) = ResolverJSON.json(self, complete: true) else { return [] }
        return members
    }
}
