import OrientationCore

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
    /// net.hadess.SensorProxy on the system bus: `serving`, `off`, or `not served: WHY`; nil from a
    /// server older than the field.
    public var dbus: String?
    /// A convertible's hinge angle in degrees (0 closed, 360 folded back); nil when unknown or on a
    /// device with one accelerometer.
    public var hinge: Double?
    /// A convertible's mode; nil when unknown or on a device with one accelerometer.
    public var mode: DeviceMode?
    /// The sensors of other kinds that are present (ambient light, proximity, compass).
    public var kinds: [SensorKind: KindSensorState] = [:]
    /// Hz at which the accelerometer is read now: its sampling rate, or the rest rate while the
    /// device rests; nil while it is not read (or a mock sensor plays recorded time).
    public var rate: Double?
    /// The accelerometer's faults that hold now, oldest first (empty unless `sensor` is `failed`).
    public var faults: [SensorFaultState] = []
    /// How far the screen leans from upright (the detector's classification, which
    /// net.hadess.SensorProxy serves as AccelerometerTilt); nil until a reading classifies it, and
    /// from a server older than the field.
    public var tilt: ScreenTilt?
    /// The gyroscope read with the accelerometer; nil without one (and from a server older than
    /// the field).
    public var gyroscope: GyroscopeState?

    public init(
        device: DeviceOrientation = .unknown, interface: InterfaceOrientation = .unknown,
        sensor: SensorStatus = .absent,
        locked: Bool = false, sensorName: String? = nil, dbus: String? = nil, hinge: Double? = nil,
        mode: DeviceMode? = nil
    ) {
        self.device = device
        self.interface = interface
        self.sensor = sensor
        self.locked = locked
        self.sensorName = sensorName
        self.dbus = dbus
        self.hinge = hinge
        self.mode = mode
    }

    public var json: JSONValue {
        // Typed step by step: Swift 6.2 (Debian's, which builds the arm64 package) gives up
        // type-checking the whole literal at once.
        let members: [(key: String, value: JSONValue)] = [
            ("device", .string(device.rawValue)),
            ("interface", .string(interface.rawValue)),
            ("sensor", .string(sensor.rawValue)),
            ("locked", .bool(locked)),
            ("sensorName", sensorName.map(JSONValue.string) ?? .null),
            ("dbus", dbus.map(JSONValue.string) ?? .null),
            ("hinge", hinge.map(JSONValue.number) ?? .null),
            ("mode", mode.map { JSONValue.string($0.rawValue) } ?? .null),
            ("rate", rate.map(JSONValue.number) ?? .null),
            ("faults", .array(faults.map(\.json))),
            ("tilt", tilt.map { JSONValue.string($0.rawValue) } ?? .null),
            ("gyroscope", gyroscope?.json ?? .null),
        ]
        let kindMembers: [(key: String, value: JSONValue)] = SensorKind.allCases.map {
            ($0.stateKey, $0.json(kinds[$0]))
        }
        return .object(members + kindMembers)
    }

    /// Reads the `state` object of a message.
    public init(json reader: JSONReader) throws(JSONFieldError) {
        device = try reader.required("device").enumeration(DeviceOrientation.self)
        interface = try reader.required("interface").enumeration(InterfaceOrientation.self)
        sensor = try reader.required("sensor").enumeration(SensorStatus.self)
        locked = try reader.required("locked").bool()
        sensorName = try reader.optional("sensorName")?.string()
        dbus = try reader.optional("dbus")?.string()
        hinge = try reader.optional("hinge")?.number()
        mode = try reader.optional("mode")?.enumeration(DeviceMode.self)
        rate = try reader.optional("rate")?.number()
        if let list = try reader.optional("faults") {
            faults = []
            for element in try list.array() { faults.append(try SensorFaultState(json: element)) }
        }
        tilt = try reader.optional("tilt")?.enumeration(ScreenTilt.self)
        if let member = try reader.optional("gyroscope"), member.value != .null {
            gyroscope = GyroscopeState(
                status: try member.required("status").enumeration(GyroscopeState.Status.self),
                detail: try member.optional("detail")?.string())
        }
        for kind in SensorKind.allCases {
            if let member = try reader.optional(kind.stateKey) { kinds[kind] = try kind.state(json: member) }
        }
    }
}

/// The gyroscope of an IMU, as the state shows it (docs/protocol.md, "State"): working (its rates
/// are fused while the device moves) or failed (evidence against it holds, and the accelerometer
/// decides alone).
public struct GyroscopeState: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable, CaseIterable {
        case working
        case failed
    }

    public var status: Status
    /// What was seen, while failed.
    public var detail: String?

    public init(status: Status, detail: String? = nil) {
        self.status = status
        self.detail = detail
    }

    public var json: JSONValue {
        .object([("status", .string(status.rawValue))] + (detail.map { [("detail", JSONValue.string($0))] } ?? []))
    }
}

/// A fault of the accelerometer that holds now, as the state shows it (docs/protocol.md, "State").
public struct SensorFaultState: Sendable, Hashable {
    /// The fault's name: `read-failed`, `bad-value`, `bad-scale`, `stuck`, `open-failed`, `no-gravity`,
    /// `axis-stuck` (docs/sensors.md).
    public var kind: String
    /// The device, e.g. `iio:device0`.
    public var device: String
    /// What was read or measured, in words.
    public var detail: String
    /// When the fault began, UTC, ISO 8601 to the second (`2026-11-26T08:01:02Z`).
    public var since: String

    public init(kind: String, device: String, detail: String, since: String) {
        self.kind = kind
        self.device = device
        self.detail = detail
        self.since = since
    }

    /// `since` for a time in seconds since the Unix epoch.
    public static func timestamp(unixTime: Double) -> String {
        let seconds = Int(unixTime.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Days to a civil date (proleptic Gregorian), after Howard Hinnant's days_from_civil inverse.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let (hour, minute, second) = (secondOfDay / 3600, secondOfDay / 60 % 60, secondOfDay % 60)
        return "\(year)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))Z"
    }

    public var json: JSONValue {
        .object([
            ("kind", .string(kind)), ("device", .string(device)), ("detail", .string(detail)),
            ("since", .string(since)),
        ])
    }

    public init(json reader: JSONReader) throws(JSONFieldError) {
        kind = try reader.required("kind").string()
        device = try reader.required("device").string()
        detail = try reader.required("detail").string()
        since = try reader.required("since").string()
    }
}

/// An error a request can get (`"error": {"code", "message"}`); resolver rejections add `reason`.
public struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: ProtocolErrorCode
    public var message: String
    /// resolver.md §8's reason, for resolver rejections.
    public var reason: String?

    public init(_ code: ProtocolErrorCode, _ message: String, reason: String? = nil) {
        self.code = code
        self.message = message
        self.reason = reason
    }

    /// A resolver rejection of `what` (an op, or a device or lock change reaching a session).
    public init(rejected what: String, _ error: ResolverError) {
        self.init(
            ProtocolErrorCode(error.code), "\(what) rejected: \(error.reason.rawValue)", reason: error.reason.rawValue)
    }

    public static func badRequest(_ message: String) -> ProtocolError { ProtocolError(.badRequest, message) }
    public static func unknownOperation(_ op: String) -> ProtocolError {
        ProtocolError(.unknownOperation, "unknown op \"\(op)\"")
    }
    public static let permissionDenied = ProtocolError(
        .permissionDenied, "this op needs root or membership in the control group")
    public static let lineTooLong = ProtocolError(
        .lineTooLong, "lines are limited to \(ProtocolV1.maximumLineLength) bytes; closing the connection")
    public static func tooManyClients(maximum: Int) -> ProtocolError {
        ProtocolError(.tooManyClients, "the daemon serves at most \(maximum) clients")
    }
    public static func sessionLimit(maximumNodes: Int) -> ProtocolError {
        ProtocolError(.limitExceeded, "a session holds at most \(maximumNodes) nodes")
    }

    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("code", .string(code.rawValue)), ("message", .string(message)),
        ]
        if let reason { members.append(("reason", .string(reason))) }
        return .object(members)
    }

    public var description: String { "\(code): \(message)" }
}

/// A resolver session as a reply shows it.
public struct SessionSnapshot: Sendable, Hashable {
    public var interface: InterfaceOrientation
    public var effectiveDevice: DeviceOrientation
    /// The id of the node that decides (R-DEC-1).
    public var decider: String

    public init(_ state: ResolverState) {
        interface = state.interface
        effectiveDevice = state.effectiveDevice
        decider = state.decider.id
    }
}

/// What a successful reply carries besides `type`, `id` and `ok`.
public enum ReplyBody: Sendable, Hashable {
    /// Nothing (`session.close`).
    case empty
    /// `state` (`lock`, `system.*`).
    case state(DaemonState)
    /// `seq` and `state` (`get`).
    case snapshot(seq: Int, state: DaemonState)
    /// `topics` now subscribed, `seq` and `state` (`subscribe`, `unsubscribe`), and while `motion`
    /// is subscribed the rate its events come at.
    case subscriptions(topics: [Topic], seq: Int, state: DaemonState, motionRate: Double? = nil)
    /// `interface`, `effectiveDevice`, `decider` (`session.get`).
    case session(SessionSnapshot)
    /// The same plus `change`, the interface change the op caused or null (`session.open`, `scene.*`).
    case sessionChange(SessionSnapshot, change: InterfaceOrientationChange?)

    /// The reply's fields, in the documented order.
    public var fields: [(key: String, value: JSONValue)] {
        switch self {
        case .empty:
            []
        case .state(let state):
            [("state", state.json)]
        case .snapshot(let seq, let state):
            [("seq", .number(Double(seq))), ("state", state.json)]
        case .subscriptions(let topics, let seq, let state, let motionRate):
            [
                ("topics", .array(topics.map { .string($0.rawValue) })), ("seq", .number(Double(seq))),
                ("state", state.json),
            ] + (motionRate.map { [("rate", .number($0))] } ?? [])
        case .session(let snapshot):
            Self.fields(snapshot)
        case .sessionChange(let snapshot, let change):
            Self.fields(snapshot) + [("change", change.map { ResolverJSON.json($0, complete: true) } ?? .null)]
        }
    }

    private static func fields(_ snapshot: SessionSnapshot) -> [(key: String, value: JSONValue)] {
        [
            ("interface", .string(snapshot.interface.rawValue)),
            ("effectiveDevice", .string(snapshot.effectiveDevice.rawValue)),
            ("decider", .string(snapshot.decider)),
        ]
    }
}

/// What changed, by topic: an event's own fields.
public enum EventPayload: Sendable, Hashable {
    case device(from: DeviceOrientation, to: DeviceOrientation)
    case interface(InterfaceOrientationChange)
    case sensor(from: SensorStatus, to: SensorStatus)
    case lock(Bool)
    /// The hinge angle moved by a degree or more, or became known or unknown (nil).
    case hinge(from: Double?, to: Double?)
    case mode(from: DeviceMode?, to: DeviceMode)
    /// A sensor of another kind read a meaningfully different value (``SensorReading/isMeaningfulChange(from:)``),
    /// or appeared or went away (nil).
    case reading(SensorKind, from: SensorReading?, to: SensorReading?)
    /// The connection's session changed its interface orientation; `sessionSeq` counts its events.
    case session(sessionSeq: Int, InterfaceOrientationChange)
    /// A device or lock change that the connection's session rejected (the session is unchanged).
    case sessionRejected(ProtocolError)
    /// One sample of the motion stream.
    case motion(MotionSample)

    public var topic: Topic {
        switch self {
        case .device: .device
        case .interface: .interface
        case .sensor: .sensor
        case .lock: .lock
        case .hinge: .hinge
        case .mode: .mode
        case .reading(let kind, _, _): Topic(kind)
        case .session, .sessionRejected: .session
        case .motion: .motion
        }
    }

    /// The topic's fields (docs/protocol.md, "event").
    public var fields: [(key: String, value: JSONValue)] {
        switch self {
        case .device(let from, let to): [("from", .string(from.rawValue)), ("to", .string(to.rawValue))]
        case .interface(let change): change.protocolFields
        case .sensor(let from, let to): [("from", .string(from.rawValue)), ("to", .string(to.rawValue))]
        case .lock(let locked): [("locked", .bool(locked))]
        case .hinge(let from, let to):
            [("from", from.map { .number($0) } ?? .null), ("to", to.map { .number($0) } ?? .null)]
        case .mode(let from, let to):
            [("from", from.map { .string($0.rawValue) } ?? .null), ("to", .string(to.rawValue))]
        case .reading(_, let from, let to): [("from", SensorKind.json(from)), ("to", SensorKind.json(to))]
        case .session(let sessionSeq, let change): [("sessionSeq", .number(Double(sessionSeq)))] + change.protocolFields
        case .sessionRejected(let error): [("error", error.json)]
        case .motion(let sample): MotionRate.fields(sample)
        }
    }
}

/// One change of the daemon's state as clients hear it: the whole state after it and the sequence
/// number it got (session events carry the current one without growing it).
public struct Event: Sendable, Hashable {
    public var seq: Int
    /// Monotonic seconds.
    public var time: Double
    public var state: DaemonState
    public var payload: EventPayload

    public init(seq: Int, time: Double, state: DaemonState, payload: EventPayload) {
        self.seq = seq
        self.time = time
        self.state = state
        self.payload = payload
    }

    public var topic: Topic { payload.topic }
}

/// Builders for the server's messages, with keys in the documented order.
public enum ServerMessage {
    public static func hello(server: String, state: DaemonState, seq: Int) -> JSONValue {
        .object([
            ("type", .string(MessageType.hello.rawValue)), ("protocol", .number(Double(ProtocolV1.version))),
            ("server", .string(server)), ("seq", .number(Double(seq))), ("state", state.json),
        ])
    }

    public static func reply(id: JSONValue, _ body: ReplyBody) -> JSONValue {
        .object([("type", .string(MessageType.reply.rawValue)), ("id", id), ("ok", true)] + body.fields)
    }

    public static func reply(id: JSONValue, error: ProtocolError) -> JSONValue {
        .object([("type", .string(MessageType.reply.rawValue)), ("id", id), ("ok", false), ("error", error.json)])
    }

    public static func reply(id: JSONValue, _ result: Result<ReplyBody, ProtocolError>) -> JSONValue {
        switch result {
        case .success(let body): reply(id: id, body)
        case .failure(let error): reply(id: id, error: error)
        }
    }

    public static func event(_ event: Event) -> JSONValue {
        .object(
            [
                ("type", .string(MessageType.event.rawValue)), ("topic", .string(event.topic.rawValue)),
                ("seq", .number(Double(event.seq))),
                ("time", .number(event.time)), ("state", event.state.json),
            ] + event.payload.fields)
    }

    public static func goodbye(reason: String) -> JSONValue {
        .object([("type", .string(MessageType.goodbye.rawValue)), ("reason", .string(reason))])
    }
}

extension InterfaceOrientationChange {
    /// The topic fields of an interface event (resolver.md §7).
    public var protocolFields: [(key: String, value: JSONValue)] {
        guard case .object(let members) = ResolverJSON.json(self, complete: true) else { return [] }
        return members
    }
}
