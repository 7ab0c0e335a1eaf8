import OrientationCore

/// Which accelerometer a command reads: the `--sensor` grammar shared by every command.
///
/// ```
/// auto                         the best local accelerometer (display before lid, never base)
/// iio:NAME                     a local device by driver name or label (e.g. iio:bmi160)
/// iio:deviceN | /dev/iio:deviceN   a local device by number
/// input:/dev/input/eventN      a local evdev accelerometer (ID_INPUT_ACCELEROMETER, e.g. hp_accel)
/// ip:HOST                      an accelerometer served by iiod on HOST
/// replay:FILE[?speed=N]        a trace (corpus CSV) replayed in real time (N times faster)
/// stdin                        CSV lines t,x,y,z read live from standard input
/// ```
public enum SensorSpecification: Sendable, Hashable, CustomStringConvertible {
    case auto
    case iioName(String)
    case iioDevice(Int)
    /// An evdev accelerometer by its device node (`/dev/input/eventN`).
    case inputDevice(path: String)
    case network(host: String)
    case replay(path: String, speed: Double)
    case standardInput

    /// The grammar, for help texts.
    public static let grammar =
        """
        auto | iio:NAME | iio:deviceN | /dev/iio:deviceN | input:/dev/input/eventN | ip:HOST | \
        replay:FILE[?speed=N] | stdin
        """

    public init(parsing text: String) throws(SensorSpecificationError) {
        func fail(_ problem: String) -> SensorSpecificationError {
            SensorSpecificationError(text: text, problem: problem)
        }
        if text == "auto" {
            self = .auto
        } else if text == "stdin" {
            self = .standardInput
        } else if text.hasPrefix("/dev/iio:device") {
            guard let number = Int(text.dropFirst("/dev/iio:device".count)), number >= 0 else {
                throw fail("expected /dev/iio:deviceN with N a number")
            }
            self = .iioDevice(number)
        } else if text.hasPrefix("iio:") {
            let rest = String(text.dropFirst(4))
            guard !rest.isEmpty else { throw fail("iio: needs a device name, or deviceN") }
            if rest.hasPrefix("device"), let number = Int(rest.dropFirst(6)), number >= 0 {
                self = .iioDevice(number)
            } else {
                self = .iioName(rest)
            }
        } else if text.hasPrefix("input:") {
            let path = String(text.dropFirst(6))
            guard path.hasPrefix("/dev/input/event"),
                Int(path.dropFirst("/dev/input/event".count)).map({ $0 >= 0 }) == true
            else {
                throw fail("expected input:/dev/input/eventN with N a number")
            }
            self = .inputDevice(path: path)
        } else if text.hasPrefix("ip:") {
            let host = String(text.dropFirst(3))
            guard !host.isEmpty, !host.contains(where: \.isWhitespace) else {
                throw fail("ip: needs a host name or address")
            }
            self = .network(host: host)
        } else if text.hasPrefix("replay:") {
            var path = Substring(text.dropFirst(7))
            var speed = 1.0
            if let question = path.lastIndex(of: "?") {
                let query = path[path.index(after: question)...]
                guard query.hasPrefix("speed=") else { throw fail("the only replay option is ?speed=N") }
                guard let value = Double(query.dropFirst(6)), value.isFinite, value > 0 else {
                    throw fail("speed must be a number > 0")
                }
                speed = value
                path = path[..<question]
            }
            guard !path.isEmpty else { throw fail("replay: needs a file") }
            self = .replay(path: String(path), speed: speed)
        } else {
            throw fail("unknown sensor")
        }
    }

    /// True for the specifications that read a local device (IIO or evdev) found through udev.
    public var isLocal: Bool {
        switch self {
        case .auto, .iioName, .iioDevice, .inputDevice: true
        case .network, .replay, .standardInput: false
        }
    }

    public var description: String {
        switch self {
        case .auto: "auto"
        case .iioName(let name): "iio:\(name)"
        case .iioDevice(let number): "iio:device\(number)"
        case .inputDevice(let path): "input:\(path)"
        case .network(let host): "ip:\(host)"
        case .replay(let path, let speed): speed == 1 ? "replay:\(path)" : "replay:\(path)?speed=\(speed)"
        case .standardInput: "stdin"
        }
    }
}

/// A `--sensor` value that does not follow the grammar.
public struct SensorSpecificationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let text: String
    public let problem: String

    public var description: String {
        "invalid sensor \"\(text)\": \(problem) (expected \(SensorSpecification.grammar))"
    }
}

/// How samples are acquired from an IIO device.
public enum AcquisitionMode: String, Sendable, Hashable, CaseIterable, Codable {
    /// Buffered capture when the device can (scan elements and a trigger), polling otherwise.
    case auto
    /// Read the channels' `raw` attributes at the sampling rate, on a dedicated thread.
    case poll
    /// Capture through the device's buffer (`/dev/iio:deviceN`), with its trigger and timestamps.
    case buffer
}

/// Which of a convertible's two accelerometers a source reads.
public enum SensorRole: String, Sendable, Hashable, CaseIterable {
    /// The display's (or the only) accelerometer: the device orientation comes from it.
    case display
    /// The keyboard base's: only the hinge angle comes from it (docs/convertibles.md).
    case base
}

/// `[hinge] base-sensor`: which accelerometer is a convertible's keyboard base.
public enum BaseSensorChoice: Sendable, Hashable, CustomStringConvertible {
    /// Where the display sensor is: a local base-located sensor (for `auto`, `iio:…`), the base
    /// one iiod serves (`ip:HOST`), the base rows of a replayed trace; none for `stdin`.
    case auto
    /// Never read a base sensor (no hinge angle, no mode).
    case none
    case sensor(SensorSpecification)

    public init(parsing text: String) throws(SensorSpecificationError) {
        switch text {
        case "auto": self = .auto
        case "none": self = .none
        default: self = .sensor(try SensorSpecification(parsing: text))
        }
    }

    /// The base sensor's configuration beside the display's, or nil when none is to be read.
    public func configuration(besides display: SensorConfiguration, mountMatrix: MountMatrix?) -> SensorConfiguration? {
        let specification: SensorSpecification
        switch self {
        case .none: return nil
        case .sensor(let given): specification = given
        case .auto:
            switch display.specification {
            case .auto, .iioName, .iioDevice, .inputDevice: specification = .auto
            case .network, .replay: specification = display.specification
            case .standardInput: return nil
            }
        }
        var base = SensorConfiguration(
            specification: specification, mountMatrix: mountMatrix, rate: display.rate, acquisition: display.acquisition
        )
        base.role = .base
        return base
    }

    public var description: String {
        switch self {
        case .auto: "auto"
        case .none: "none"
        case .sensor(let specification): specification.description
        }
    }
}

/// What the user configured for the sensor; every command builds one from its options.
public struct SensorConfiguration: Sendable, Hashable {
    public var specification: SensorSpecification
    /// `auto` chooses among the display sensors for `.display`, among the base sensors for `.base`;
    /// a replayed two-sensor trace gives the rows of this side.
    public var role: SensorRole = .display
    /// Overrides every discovered matrix (`--mount-matrix`).
    public var mountMatrix: MountMatrix?
    /// Requested sampling rate in Hz; the nearest rate the device offers is used.
    public var rate: Double
    public var acquisition: AcquisitionMode
    /// False to read at the device's rate as it is, for a reader beside the daemon (`calibrate`)
    /// that must not change the rate the daemon chose.
    public var setsDeviceRate = true
    /// A buffer that gives nothing this long after it opens (one rest interval: the daemon's
    /// `rest-rate`, 1.8 Hz by default) is not waited for: the `raw` attributes are read meanwhile, so
    /// a claim gets a first value within it, after a resume too (``SensorEvent/note(_:)``).
    public var firstValueWithin = 1 / SamplingPace.Settings().restRate

    public static let defaultRate = 25.0

    public init(
        specification: SensorSpecification = .auto, mountMatrix: MountMatrix? = nil, rate: Double = defaultRate,
        acquisition: AcquisitionMode = .auto
    ) {
        self.specification = specification
        self.mountMatrix = mountMatrix
        self.rate = rate
        self.acquisition = acquisition
    }
}
