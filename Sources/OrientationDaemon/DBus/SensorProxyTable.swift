import OrientationCore
import OrientationProtocol

// net.hadess.SensorProxy's one table: its objects, properties (with how each follows the daemon's
// state) and methods. The C shim and the front end take every name from here.

/// `AccelerometerOrientation` of net.hadess.SensorProxy: which edge of the display is up.
enum AccelerometerOrientation: String, Sendable, CaseIterable {
    case undefined
    case normal
    case bottomUp = "bottom-up"
    case leftUp = "left-up"
    case rightUp = "right-up"

    /// The upright device orientations in iio-sensor-proxy's words (both read the same display frame:
    /// upright is (0, −1 g, 0)); face up, face down and unknown have no value of their own.
    init?(_ device: DeviceOrientation) {
        switch device {
        case .portrait: self = .normal
        case .portraitUpsideDown: self = .bottomUp
        case .landscapeRight: self = .leftUp  // the left edge up: (+1 g, 0, 0)
        case .landscapeLeft: self = .rightUp  // the right edge up: (−1 g, 0, 0)
        case .faceUp, .faceDown, .unknown: return nil
        }
    }
}

/// `AccelerometerTilt` (iio-sensor-proxy 3.6+): how far the screen faces up or down.
enum AccelerometerTilt: String, Sendable, CaseIterable {
    case undefined
    case vertical
    case tiltedUp = "tilted-up"
    case tiltedDown = "tilted-down"
    case faceUp = "face-up"
    case faceDown = "face-down"
}

/// A property's value as the bus carries it.
enum BusValue: Hashable, Sendable {
    case boolean(Bool)
    case string(String)
    case double(Double)

    /// Its D-Bus type: `b`, `s` or `d`.
    var type: Character {
        switch self {
        case .boolean: "b"
        case .string: "s"
        case .double: "d"
        }
    }
}

/// The objects served, with their interfaces (iio-sensor-proxy 3.9's).
enum SensorProxyObject: Int, Sendable, CaseIterable {
    case main
    case compass

    var path: String {
        switch self {
        case .main: "/net/hadess/SensorProxy"
        case .compass: "/net/hadess/SensorProxy/Compass"
        }
    }

    var interface: String {
        switch self {
        case .main: "net.hadess.SensorProxy"
        case .compass: "net.hadess.SensorProxy.Compass"
        }
    }
}

/// What a property's value is derived from besides the daemon's state.
struct SensorProxyContext: Sendable {
    /// The screen's tilt as the detection stage last classified it (nil: not known).
    var tilt: AccelerometerTilt?
    /// `[convertible] laptop-keeps-normal`.
    var laptopKeepsNormal = true
    /// `[dbus] follows-lock`.
    var followsLock = true
}

/// One property of net.hadess.SensorProxy: the one table below is all that names them. The C shim
/// builds its objects from it, ``SensorProxyValues`` computes the values from it, and a claimant hears
/// the changes of the properties of what it claims.
struct SensorProxyProperty: Sendable {
    let name: String
    let object: SensorProxyObject
    /// Whose claimants hear its changes (iio-sensor-proxy 3.1+).
    let claimed: ClaimedSensor
    /// Before anything is known: what the incumbent serves then (its type is the property's).
    let initial: BusValue
    /// Its value once the daemon's state is `state`, given its previous value.
    let value: @Sendable (_ state: DaemonState, _ context: SensorProxyContext, _ previous: BusValue) -> BusValue

    /// Every property, in iio-sensor-proxy 3.9's introspection order.
    static let table: [SensorProxyProperty] = [
        SensorProxyProperty(
            name: "HasAccelerometer", object: .main, claimed: .accelerometer, initial: .boolean(false)
        ) { state, _, _ in .boolean(state.sensor != .absent) },
        // Once an orientation other than `undefined` was published it stays until the sensor goes
        // away: Qt maps `undefined` to Undefined and KWin then falls back to the user's manual
        // rotation, so face up, face down and unknown keep the last upright value. On a convertible
        // in laptop mode it is the one the system session follows (``ConvertibleRotation``):
        // `normal` while `laptopKeepsNormal`, as orientd's own clients see it.
        SensorProxyProperty(
            name: "AccelerometerOrientation", object: .main, claimed: .accelerometer,
            initial: .string(AccelerometerOrientation.undefined.rawValue)
        ) { state, context, previous in
            guard state.sensor != .absent else { return .string(AccelerometerOrientation.undefined.rawValue) }
            // While locked, the orientation the lock holds the interface in (the pin, within the
            // supported orientations): a claimant hears no turn the lock holds back, and the one
            // the device holds as soon as it is released.
            if context.followsLock, state.locked {
                return state.interface.deviceOrientation.flatMap(AccelerometerOrientation.init).map {
                    .string($0.rawValue)
                } ?? previous
            }
            let followed = ConvertibleRotation.followedOrientation(
                device: state.device, mode: state.mode, laptopKeepsNormal: context.laptopKeepsNormal)
            return AccelerometerOrientation(followed).map { .string($0.rawValue) } ?? previous
        },
        SensorProxyProperty(
            name: "AccelerometerTilt", object: .main, claimed: .accelerometer,
            initial: .string(AccelerometerTilt.undefined.rawValue)
        ) { state, context, previous in
            guard state.sensor != .absent else { return .string(AccelerometerTilt.undefined.rawValue) }
            guard let tilt = context.tilt, tilt != .undefined else { return previous }
            return .string(tilt.rawValue)
        },
        // The other kinds' values are their last published readings, kept when the claim ends (the
        // incumbent keeps them too) and reset when their sensor goes away.
        SensorProxyProperty(
            name: "HasAmbientLight", object: .main, claimed: .kind(.light), initial: .boolean(false)
        ) { state, _, _ in .boolean(state.kinds[.light] != nil) },
        // `lux` until the first reading, as the incumbent serves it (its default value).
        SensorProxyProperty(
            name: "LightLevelUnit", object: .main, claimed: .kind(.light), initial: .string(LightUnit.lux.rawValue)
        ) { state, _, _ in
            guard case .light(_, let unit) = state.kinds[.light]?.reading else {
                return .string(LightUnit.lux.rawValue)
            }
            return .string(unit.rawValue)
        },
        SensorProxyProperty(
            name: "LightLevel", object: .main, claimed: .kind(.light), initial: .double(0)
        ) { state, _, _ in
            guard case .light(let level, _) = state.kinds[.light]?.reading else { return .double(0) }
            return .double(level)
        },
        SensorProxyProperty(
            name: "HasProximity", object: .main, claimed: .kind(.proximity), initial: .boolean(false)
        ) { state, _, _ in .boolean(state.kinds[.proximity] != nil) },
        SensorProxyProperty(
            name: "ProximityNear", object: .main, claimed: .kind(.proximity), initial: .boolean(false)
        ) { state, _, _ in
            guard case .proximity(let near) = state.kinds[.proximity]?.reading else { return .boolean(false) }
            return .boolean(near)
        },
        SensorProxyProperty(
            name: "HasCompass", object: .compass, claimed: .kind(.compass), initial: .boolean(false)
        ) { state, _, _ in .boolean(state.kinds[.compass] != nil) },
        // −1 until a heading was read, as iio-sensor-proxy serves it.
        SensorProxyProperty(
            name: "CompassHeading", object: .compass, claimed: .kind(.compass), initial: .double(-1)
        ) { state, _, _ in
            guard case .heading(let degrees) = state.kinds[.compass]?.reading else { return .double(-1) }
            return .double(degrees)
        },
    ]

    /// The index of the property `name` in ``table``.
    static func index(of name: String) -> Int? { table.firstIndex { $0.name == name } }
}

/// The claim and release methods: one pair per sensor, on the object of the sensor's properties.
struct SensorProxyMethod: Hashable, Sendable, CustomStringConvertible {
    let claimed: ClaimedSensor
    let isClaim: Bool

    /// Every method, in the table's order (claim, then release, per sensor).
    static let table: [SensorProxyMethod] = [
        .accelerometer, .kind(.light), .kind(.proximity), .kind(.compass),
    ].flatMap { [SensorProxyMethod(claimed: $0, isClaim: true), SensorProxyMethod(claimed: $0, isClaim: false)] }

    static let claimAccelerometer = SensorProxyMethod(claimed: .accelerometer, isClaim: true)
    static let releaseAccelerometer = SensorProxyMethod(claimed: .accelerometer, isClaim: false)

    /// `ClaimAccelerometer`, `ReleaseLight`, …: the sensor's name as the interface spells it.
    var name: String {
        let sensor =
            switch claimed {
            case .accelerometer: "Accelerometer"
            case .kind(.light): "Light"
            case .kind(.proximity): "Proximity"
            case .kind(.compass): "Compass"
            }
        return (isClaim ? "Claim" : "Release") + sensor
    }

    /// The object whose properties the sensor's are.
    var object: SensorProxyObject {
        SensorProxyProperty.table.first { $0.claimed == claimed }?.object ?? .main
    }

    var description: String { name }
}

/// net.hadess.SensorProxy's property values, in the order of ``SensorProxyProperty/table``.
struct SensorProxyValues: Hashable, Sendable {
    private(set) var values = SensorProxyProperty.table.map(\.initial)

    /// The value of the property `name` (nil: no such property).
    subscript(_ name: String) -> BusValue? {
        SensorProxyProperty.index(of: name).map { values[$0] }
    }

    /// Which properties differ, for PropertiesChanged: bit `1 << i` for the table's property `i`.
    struct Changes: OptionSet, Hashable, Sendable {
        let rawValue: UInt

        init(rawValue: UInt) { self.rawValue = rawValue }

        /// The properties named.
        init(_ names: String...) {
            rawValue = names.reduce(0) { $0 | (SensorProxyProperty.index(of: $1).map { 1 << $0 } ?? 0) }
        }

        /// The properties of what a claimant claims: only they hear their changes (iio-sensor-proxy 3.1+).
        static func of(_ claimed: ClaimedSensor) -> Changes {
            Changes(
                rawValue: SensorProxyProperty.table.indices.reduce(0) {
                    $0 | (SensorProxyProperty.table[$1].claimed == claimed ? 1 << $1 : 0)
                })
        }
    }

    func changes(from old: SensorProxyValues) -> Changes {
        Changes(rawValue: values.indices.reduce(0) { $0 | (values[$1] != old.values[$1] ? 1 << $1 : 0) })
    }

    /// The values after the daemon's state changed to `state`.
    func following(_ state: DaemonState, context: SensorProxyContext) -> SensorProxyValues {
        var next = self
        for (index, property) in SensorProxyProperty.table.enumerated() {
            next.values[index] = property.value(state, context, values[index])
        }
        return next
    }
}

extension AccelerometerTilt {
    /// The incumbent's words for a physical screen tilt. iio-sensor-proxy takes "up" from +z in the
    /// frame where a device lying screen-up reads (0, 0, −g), so it calls that device `face-down`
    /// (systemd/systemd#40119); its clients and its test suite are written against that, and a
    /// drop-in serves what they expect. orientd's own words (``ScreenTilt``) stay physical.
    init(_ tilt: ScreenTilt) {
        switch tilt {
        case .vertical: self = .vertical
        case .tiltedUp: self = .tiltedDown
        case .tiltedDown: self = .tiltedUp
        case .faceUp: self = .faceDown
        case .faceDown: self = .faceUp
        }
    }
}
