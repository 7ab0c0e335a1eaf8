import OrientationCore

/// Protocol v1 of the orientd socket (docs/protocol.md): UTF-8 JSON objects, one per line. (Not
/// named after its module: `OrientationProtocol.version` would read as the module's, and a type named
/// as its module hides the module's other names from qualified lookup.)
public enum ProtocolV1 {
    public static let version = 1
    /// Longest accepted line, newline excluded; a longer one closes the connection.
    public static let maximumLineLength = 65_536
}

/// What a change is about: clients subscribe to topics, and every event names one.
public enum Topic: String, Sendable, Hashable, CaseIterable {
    /// The device orientation (the detector's seven values).
    case device
    /// The system session's interface orientation.
    case interface
    /// The sensor's status (active, idle, absent, failed).
    case sensor
    /// The rotation lock.
    case lock
    /// A convertible's hinge angle (degrees, or null when it cannot be observed).
    case hinge
    /// A convertible's mode: laptop or tablet.
    case mode
    /// The ambient light level (lux or the vendor's unit).
    case light
    /// The proximity sensor: near or far.
    case proximity
    /// The compass heading (degrees from magnetic north); root and the control group only, as
    /// iio-sensor-proxy's bus policy gives the compass to geoclue alone (a location).
    case heading
    /// The device's motion (gravity, user acceleration, rotation rate, attitude) at a rate the
    /// subscriber asks for: a stream, not a change of state (docs/protocol.md, "motion").
    case motion
    /// The connection's own resolver session: its events go to its owner without a subscription,
    /// so this topic cannot be subscribed to.
    case session

    /// The topics a client can subscribe to, in the order replies list them.
    public static let subscribable: [Topic] =
        [.device, .interface, .sensor, .lock, .hinge, .mode] + SensorKind.allCases.map(Topic.init) + [.motion]

    /// The topic of each sensor kind besides the accelerometer (the kind names it).
    public init(_ kind: SensorKind) {
        self.init(rawValue: kind.topicName)!
    }

    /// The sensor kind whose topic this is.
    public var kind: SensorKind? { SensorKind.allCases.first { $0.topicName == rawValue } }

    /// The sensor subscribing to this topic claims: it samples while any claim is held.
    public var claimedSensor: ClaimedSensor? {
        if let kind { return .kind(kind) }
        switch self {
        case .device, .interface, .hinge, .mode, .motion: return .accelerometer
        default: return nil
        }
    }

    /// Subscribing to these claims a sensor.
    public var claimsSensor: Bool { claimedSensor != nil }

    /// On a convertible these also need its base sensor (the hinge angle comes from both).
    public var needsBaseSensor: Bool { self == .hinge || self == .mode }

    /// Only root and the control group may subscribe (the heading says where a person is going).
    public var isPrivileged: Bool { kind?.isPrivileged ?? false }
}

/// What a claim holds: the accelerometer (with a convertible's base where needed) or a sensor of
/// another kind.
public enum ClaimedSensor: Sendable, Hashable, CustomStringConvertible {
    case accelerometer
    case kind(SensorKind)

    public var description: String {
        switch self {
        case .accelerometer: "accelerometer"
        case .kind(let kind): kind.description
        }
    }
}

/// The kinds of message the server sends (the `type` field).
public enum MessageType: String, Sendable, Hashable, CaseIterable {
    case hello
    case reply
    case event
    case goodbye
}

/// Every operation a client can request (the `op` field), with its wire name as raw value.
public enum Operation: String, Sendable, Hashable, CaseIterable {
    case get
    case subscribe
    case unsubscribe
    case lock
    case setSystemSupportedOrientations = "system.setSupportedOrientations"
    case openSession = "session.open"
    case closeSession = "session.close"
    case getSession = "session.get"
    case scenePresent = "scene.present"
    case sceneDismiss = "scene.dismiss"
    case scenePush = "scene.push"
    case scenePop = "scene.pop"
    case sceneSelectTab = "scene.selectTab"
    case sceneUpdate = "scene.update"
    case sceneSetWindowMask = "scene.setWindowMask"
    case sceneAttemptRotation = "scene.attemptRotation"
    case sceneForceRotation = "scene.forceRotation"
    case sceneRequestGeometryUpdate = "scene.requestGeometryUpdate"
    case sceneUpdateSupportedOrientations = "scene.updateSupportedOrientations"
    case sceneLaunch = "scene.launch"
    case sceneBeginDeviceNotifications = "scene.beginDeviceNotifications"
    case sceneEndDeviceNotifications = "scene.endDeviceNotifications"

    /// The resolver action type (resolver.md §1) a `scene.*` op performs on the connection's
    /// session; nil for the other ops. `deviceOrientation` and `setLock` have no scene op: they
    /// belong to the daemon.
    public var sceneActionType: String? {
        guard rawValue.hasPrefix("scene.") else { return nil }
        // `scene.update` is the one whose name differs: `id` is the request's, so it is not `updateScene`.
        return self == .sceneUpdate ? "updateScene" : String(rawValue.dropFirst("scene.".count))
    }

    /// Ops only root and the control group may use.
    public var isPrivileged: Bool { self == .lock || self == .setSystemSupportedOrientations }
}

/// An error reply's `code`: the protocol's own codes in kebab-case, and the resolver's rejection
/// codes (resolver.md §8) as they are. A struct, not an enum, so a client keeps a code it does not
/// know yet (version 1 may grow).
public struct ProtocolErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// A resolver rejection's code.
    public init(_ code: ResolverError.Code) { rawValue = code.rawValue }

    /// Not UTF-8, not a JSON object, no usable `id` or `op`, or a field missing or wrong.
    public static let badRequest = ProtocolErrorCode(rawValue: "bad-request")
    public static let unknownOperation = ProtocolErrorCode(rawValue: "unknown-op")
    public static let lineTooLong = ProtocolErrorCode(rawValue: "line-too-long")
    public static let permissionDenied = ProtocolErrorCode(rawValue: "permission-denied")
    public static let tooManyClients = ProtocolErrorCode(rawValue: "too-many-clients")
    public static let noSession = ProtocolErrorCode(rawValue: "no-session")
    public static let sessionExists = ProtocolErrorCode(rawValue: "session-exists")
    public static let limitExceeded = ProtocolErrorCode(rawValue: "limit-exceeded")
    public static let internalError = ProtocolErrorCode(rawValue: "internal-error")

    /// Every code the protocol defines itself (the resolver's come from ``ResolverError/Code``).
    public static let protocolCodes: [ProtocolErrorCode] = [
        .badRequest, .unknownOperation, .lineTooLong, .permissionDenied, .tooManyClients, .noSession, .sessionExists,
        .limitExceeded, .internalError,
    ]

    public var description: String { rawValue }
}
