import OrientationCore

/// An IIO device that has x, y and z acceleration channels, as discovery found it; the input of
/// ``AccelerometerSelection``.
public struct AccelerometerCandidate: Sendable, Hashable {
    /// How the kernel offers an accelerometer.
    public enum Interface: String, Sendable, Hashable {
        /// An IIO device (`iio:deviceN`): the ABI of every modern accelerometer driver.
        case iio
        /// An evdev input device with `ID_INPUT_ACCELEROMETER` (hp_accel/lis3lv02d laptops, older
        /// tablets): absolute X, Y and Z axes. Used only when no IIO accelerometer serves.
        case input
    }

    /// `iio:deviceN`, or `input:/dev/input/eventN`.
    public var deviceID: String
    public var interface: Interface
    public var name: String
    public var label: String?
    /// udev `ACCEL_LOCATION`.
    public var udevLocation: String?
    /// sysfs `location`.
    public var sysfsLocation: String?
    /// udev `ACCEL_MOUNT_MATRIX`.
    public var udevMountMatrix: String?
    /// sysfs `mount_matrix`, `in_accel_mount_matrix`, `in_mount_matrix`, in that order, where present.
    public var sysfsMountMatrices: [SysfsMountMatrix]
    public var sysfsPath: String?
    public var deviceNode: String?
    /// The device has `in_accel_{x,y,z}_raw`.
    public var hasRawChannels: Bool
    /// The device has scan elements for x, y and z.
    public var hasBufferChannels: Bool

    public struct SysfsMountMatrix: Sendable, Hashable {
        public var origin: MountMatrixOrigin
        public var text: String
        public init(origin: MountMatrixOrigin, text: String) {
            self.origin = origin
            self.text = text
        }
    }

    public init(
        deviceID: String, name: String, label: String? = nil, udevLocation: String? = nil, sysfsLocation: String? = nil,
        udevMountMatrix: String? = nil, sysfsMountMatrices: [SysfsMountMatrix] = [], sysfsPath: String? = nil,
        deviceNode: String? = nil, hasRawChannels: Bool = true, hasBufferChannels: Bool = false,
        interface: Interface = .iio
    ) {
        self.deviceID = deviceID
        self.interface = interface
        self.name = name
        self.label = label
        self.udevLocation = udevLocation
        self.sysfsLocation = sysfsLocation
        self.udevMountMatrix = udevMountMatrix
        self.sysfsMountMatrices = sysfsMountMatrices
        self.sysfsPath = sysfsPath
        self.deviceNode = deviceNode
        self.hasRawChannels = hasRawChannels
        self.hasBufferChannels = hasBufferChannels
    }

    /// N of `iio:deviceN`, for ordering.
    public var number: Int? {
        deviceID.hasPrefix("iio:device") ? Int(deviceID.dropFirst("iio:device".count)) : nil
    }

    /// Where the sensor sits and who said so: udev `ACCEL_LOCATION`, then the `label` attribute
    /// (`accel-display`, `accel-base`), then the `location` attribute, else display (as
    /// iio-sensor-proxy assumes).
    public var location: (SensorLocation, origin: String) {
        func parse(_ text: String) -> SensorLocation {
            switch text.lowercased() {
            case "display": .display
            case "lid": .lid
            case "base": .base
            default: .unknown
            }
        }
        if let udevLocation { return (parse(udevLocation), "udev ACCEL_LOCATION") }
        if let label, label.hasPrefix("accel-") {
            let place = String(label.dropFirst(6))
            if place == "display" || place == "base" || place == "lid" { return (parse(place), "sysfs label") }
        }
        if let sysfsLocation { return (parse(sysfsLocation), "sysfs location") }
        return (.display, "default")
    }

    /// The mount matrix by the precedence of detection-log.md §4: configured, udev, the sysfs
    /// attributes, identity. A malformed one is reported (device and text) and skipped.
    public func mountMatrix(
        configured: MountMatrix?
    ) -> (matrix: MountMatrix, origin: MountMatrixOrigin, problems: [String]) {
        if let configured { return (configured, .configured, []) }
        var problems: [String] = []
        let sources = (udevMountMatrix.map { [SysfsMountMatrix(origin: .udev, text: $0)] } ?? []) + sysfsMountMatrices
        for source in sources {
            do {
                return (try MountMatrix(parsing: source.text), source.origin, problems)
            } catch {
                problems.append("\(deviceID): \(source.origin.rawValue) ignored: \(error.description)")
            }
        }
        return (.identity, .identity, problems)
    }
}

/// Which accelerometer a specification picks, and why.
public enum AccelerometerSelection {
    public struct Result: Sendable, Hashable {
        public var chosen: AccelerometerCandidate?
        /// One line a person can read: what was chosen and on what grounds, or why nothing was.
        public var reason: String
        /// Candidates passed over, with the reason for each.
        public var skipped: [String]

        public init(chosen: AccelerometerCandidate?, reason: String, skipped: [String]) {
            self.chosen = chosen
            self.reason = reason
            self.skipped = skipped
        }
    }

    /// Chooses deterministically: matching the specification; for `auto`, never a sensor in the
    /// base; IIO before evdev (an input accelerometer is the older interface of the same parts);
    /// display before lid before unknown; then the lowest device number.
    public static func choose(
        from candidates: [AccelerometerCandidate], for specification: SensorSpecification, role: SensorRole = .display
    ) -> Result {
        if role == .base { return chooseBase(from: candidates, for: specification) }
        var skipped: [String] = []
        func describe(_ candidate: AccelerometerCandidate) -> String {
            let (place, origin) = candidate.location
            return "\(candidate.deviceID) (\(candidate.name)), location \(place.rawValue) from \(origin)"
        }
        var eligible: [AccelerometerCandidate] = []
        for candidate in candidates {
            let matches =
                switch specification {
                case .iioDevice(let number): candidate.number == number
                case .iioName(let name):
                    candidate.interface == .iio && (candidate.name == name || candidate.label == name)
                case .inputDevice(let path): candidate.interface == .input && candidate.deviceNode == path
                default: true
                }
            guard matches else {
                skipped.append("\(describe(candidate)): does not match \(specification)")
                continue
            }
            if specification == .auto, candidate.location.0 == .base {
                skipped.append("\(describe(candidate)): sits in the keyboard base")
                continue
            }
            eligible.append(candidate)
        }
        func rank(_ candidate: AccelerometerCandidate) -> (Int, Int, Int, String) {
            let (place, origin) = candidate.location
            let placeRank =
                switch place {
                case .display: origin == "default" ? 1 : 0
                case .lid: 2
                case .unknown: 3
                case .base: 4
                }
            return (candidate.interface == .iio ? 0 : 1, placeRank, candidate.number ?? Int.max, candidate.deviceID)
        }
        let ordered = eligible.sorted { rank($0) < rank($1) }
        guard let chosen = ordered.first else {
            let reason =
                candidates.isEmpty
                ? "no accelerometer found (IIO or evdev)" : "no accelerometer matches \(specification)"
            return Result(chosen: nil, reason: reason, skipped: skipped)
        }
        for other in ordered.dropFirst() {
            skipped.append("\(describe(other)): \(describe(chosen)) ranks first")
        }
        var reason = "chose \(describe(chosen))"
        if ordered.count > 1 {
            reason += " among \(ordered.count) (IIO before evdev, display before lid, then the lowest number)"
        }
        if chosen.location.0 == .base { reason += "; it sits in the keyboard base, used because it was asked for" }
        return Result(chosen: chosen, reason: reason, skipped: skipped)
    }

    /// A convertible's base sensor: for `auto` the base-located one with the lowest number (never
    /// a display sensor); a named or numbered device as given.
    static func chooseBase(from candidates: [AccelerometerCandidate], for specification: SensorSpecification) -> Result
    {
        let matching = candidates.filter { candidate in
            switch specification {
            case .iioDevice(let number): candidate.number == number
            case .iioName(let name): candidate.interface == .iio && (candidate.name == name || candidate.label == name)
            case .inputDevice(let path): candidate.interface == .input && candidate.deviceNode == path
            default: candidate.location.0 == .base
            }
        }.sorted { ($0.number ?? Int.max, $0.deviceID) < ($1.number ?? Int.max, $1.deviceID) }
        guard let chosen = matching.first else {
            let reason =
                switch specification {
                case .iioDevice, .iioName, .inputDevice: "no accelerometer matches \(specification)"
                default:
                    """
                    no accelerometer in a keyboard base (not a convertible, or nothing names one base: \
                    ACCEL_LOCATION, label or location)
                    """
                }
            return Result(chosen: nil, reason: reason, skipped: [])
        }
        let (place, origin) = chosen.location
        return Result(
            chosen: chosen,
            reason:
                """
                chose \(chosen.deviceID) (\(chosen.name)), location \(place.rawValue) from \(origin), as the base \
                sensor
                """,
            skipped: matching.dropFirst().map { "\($0.deviceID) (\($0.name)): \(chosen.deviceID) ranks first" })
    }
}
