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

/// net.hadess.SensorProxy's properties as served, derived from the daemon's state: the
/// accelerometer's three, ambient light's three, proximity's two and the compass's two.
struct SensorProxyValues: Hashable, Sendable {
    var hasAccelerometer = false
    var orientation = AccelerometerOrientation.undefined
    var tilt = AccelerometerTilt.undefined
    var hasAmbientLight = false
    var lightLevel = 0.0
    var lightUnit = LightUnit.lux
    var hasProximity = false
    var proximityNear = false
    var hasCompass = false
    /// −1 until a heading was read, as iio-sensor-proxy serves it.
    var compassHeading = -1.0

    /// Which properties differ, for PropertiesChanged.
    struct Changes: OptionSet, Hashable, Sendable {
        let rawValue: Int
        static let hasAccelerometer = Changes(rawValue: 1)
        static let orientation = Changes(rawValue: 2)
        static let tilt = Changes(rawValue: 4)
        static let hasAmbientLight = Changes(rawValue: 8)
        static let lightLevel = Changes(rawValue: 16)
        static let lightUnit = Changes(rawValue: 32)
        static let hasProximity = Changes(rawValue: 64)
        static let proximityNear = Changes(rawValue: 128)
        static let hasCompass = Changes(rawValue: 256)
        static let compassHeading = Changes(rawValue: 512)

        /// The properties of what a claimant claims: only they hear their changes (iio-sensor-proxy 3.1+).
        static func of(_ claimed: ClaimedSensor) -> Changes {
            switch claimed {
            case .accelerometer: [.hasAccelerometer, .orientation, .tilt]
            case .kind(.light): [.hasAmbientLight, .lightLevel, .lightUnit]
            case .kind(.proximity): [.hasProximity, .proximityNear]
            case .kind(.compass): [.hasCompass, .compassHeading]
            }
        }
    }

    func changes(from old: SensorProxyValues) -> Changes {
        var changes: Changes = []
        if hasAccelerometer != old.hasAccelerometer { changes.insert(.hasAccelerometer) }
        if orientation != old.orientation { changes.insert(.orientation) }
        if tilt != old.tilt { changes.insert(.tilt) }
        if hasAmbientLight != old.hasAmbientLight { changes.insert(.hasAmbientLight) }
        if lightLevel != old.lightLevel { changes.insert(.lightLevel) }
        if lightUnit != old.lightUnit { changes.insert(.lightUnit) }
        if hasProximity != old.hasProximity { changes.insert(.hasProximity) }
        if proximityNear != old.proximityNear { changes.insert(.proximityNear) }
        if hasCompass != old.hasCompass { changes.insert(.hasCompass) }
        if compassHeading != old.compassHeading { changes.insert(.compassHeading) }
        return changes
    }

    /// The values after the daemon's state changed to `state`, and `tilt` as the detection stage
    /// last classified it (nil: not known). Once an orientation other than `undefined` was published
    /// it stays until the sensor goes away: Qt maps `undefined` to Undefined and KWin then falls back
    /// to the user's manual rotation, so face up, face down and unknown keep the last upright value.
    ///
    /// On a convertible in laptop mode the orientation is the one the system session follows
    /// (``ConvertibleRotation``): `normal` while `laptopKeepsNormal`, as orientd's own clients see it.
    ///
    /// The other kinds' values are their last published readings, kept when the claim ends (the
    /// incumbent keeps them too) and reset when their sensor goes away.
    func following(
        _ state: DaemonState, tilt newTilt: AccelerometerTilt?, laptopKeepsNormal: Bool = true
    ) -> SensorProxyValues {
        var next = SensorProxyValues()
        next.hasAccelerometer = state.sensor != .absent
        if next.hasAccelerometer {
            next.orientation = orientation
            next.tilt = tilt
            let followed = ConvertibleRotation.followedOrientation(
                device: state.device, mode: state.mode, laptopKeepsNormal: laptopKeepsNormal)
            if let upright = AccelerometerOrientation(followed) { next.orientation = upright }
            if let newTilt, newTilt != .undefined { next.tilt = newTilt }
        }
        if let light = state.kinds[.light] {
            next.hasAmbientLight = true
            // `lux` until the first reading, as the incumbent serves it (its default value).
            if case .light(let level, let unit) = light.reading {
                next.lightLevel = level
                next.lightUnit = unit
            }
        }
        if let proximity = state.kinds[.proximity] {
            next.hasProximity = true
            if case .proximity(let near) = proximity.reading { next.proximityNear = near }
        }
        if let compass = state.kinds[.compass] {
            next.hasCompass = true
            if case .heading(let degrees) = compass.reading { next.compassHeading = degrees }
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
