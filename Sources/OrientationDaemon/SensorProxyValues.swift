import OrientationCore
import OrientationProtocol

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

/// The accelerometer's three properties as net.hadess.SensorProxy serves them, derived from the
/// daemon's state.
struct SensorProxyValues: Hashable, Sendable {
    var hasAccelerometer = false
    var orientation = AccelerometerOrientation.undefined
    var tilt = AccelerometerTilt.undefined

    /// Which properties differ, for PropertiesChanged.
    struct Changes: OptionSet, Hashable, Sendable {
        let rawValue: Int
        static let hasAccelerometer = Changes(rawValue: 1)
        static let orientation = Changes(rawValue: 2)
        static let tilt = Changes(rawValue: 4)
    }

    func changes(from old: SensorProxyValues) -> Changes {
        var changes: Changes = []
        if hasAccelerometer != old.hasAccelerometer { changes.insert(.hasAccelerometer) }
        if orientation != old.orientation { changes.insert(.orientation) }
        if tilt != old.tilt { changes.insert(.tilt) }
        return changes
    }

    /// The values after the daemon's state changed to `state`, and `tilt` as the detection stage
    /// last classified it (nil: not known). Once a value other than `undefined` was published it stays
    /// until the sensor goes away: Qt maps `undefined` to Undefined and KWin then falls back to
    /// the user's manual rotation, so face up, face down and unknown keep the last upright value.
    ///
    /// On a convertible in laptop mode the orientation is the one the system session follows
    /// (``ConvertibleRotation``): `normal` while `laptopKeepsNormal`, as orientd's own clients see it.
    func following(_ state: DaemonState, tilt newTilt: AccelerometerTilt?, laptopKeepsNormal: Bool = true) -> SensorProxyValues {
        var next = self
        next.hasAccelerometer = state.sensor != .absent
        guard next.hasAccelerometer else { return SensorProxyValues() }
        let followed = ConvertibleRotation.followedOrientation(device: state.device, mode: state.mode, laptopKeepsNormal: laptopKeepsNormal)
        if let upright = AccelerometerOrientation(followed) { next.orientation = upright }
        if let newTilt, newTilt != .undefined { next.tilt = newTilt }
        return next
    }
}

extension AccelerometerTilt {
    init(_ tilt: ScreenTilt) {
        switch tilt {
        case .vertical: self = .vertical
        case .tiltedUp: self = .tiltedUp
        case .tiltedDown: self = .tiltedDown
        case .faceUp: self = .faceUp
        case .faceDown: self = .faceDown
        }
    }
}
