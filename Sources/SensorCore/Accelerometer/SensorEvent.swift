import OrientationCore

/// Where a sensor's mount matrix came from, in order of precedence.
public enum MountMatrixOrigin: String, Sendable, Hashable, Codable {
    /// `--mount-matrix` or the configuration file.
    case configured
    /// udev property `ACCEL_MOUNT_MATRIX` (systemd's hwdb).
    case udev = "udev ACCEL_MOUNT_MATRIX"
    case sysfsMountMatrix = "sysfs mount_matrix"
    case sysfsAccelMountMatrix = "sysfs in_accel_mount_matrix"
    case sysfsInMountMatrix = "sysfs in_mount_matrix"
    /// Nothing given: the sensor's axes are the display's.
    case identity
}

/// Everything known about the sensor a source reads; reported with ``SensorEvent/available(_:)``.
public struct SensorDescription: Sendable, Hashable, Codable {
    /// A stable name: `iio:device0`, `ip:HOST/iio:device0`, `replay:FILE`, `stdin`.
    public var identifier: String
    /// The driver's name (`name` attribute), e.g. `bmi160`.
    public var name: String
    public var label: String?
    public var location: SensorLocation
    /// Where `location` came from (`udev ACCEL_LOCATION`, `sysfs label`, `sysfs location`, `default`).
    public var locationOrigin: String
    public var sysfsPath: String?
    public var deviceNode: String?
    public var mountMatrix: MountMatrix
    public var mountMatrixOrigin: MountMatrixOrigin
    /// Matrices that were found but rejected (device, source and text), for the log.
    public var mountMatrixProblems: [String]
    /// How samples are taken; nil for the mock sources.
    public var acquisition: AcquisitionMode?
    /// The device's sampling frequency in Hz, if it reports one.
    public var samplingFrequency: Double?
    /// The rates the device offers, as it lists them (`sampling_frequency_available`).
    public var availableFrequencies: String?
    /// m/s² per raw unit, per axis (x, y, z).
    public var scale: [Double?]?
    /// Raw units added before scaling, per axis.
    public var offset: [Double?]?
    /// True when the device has scan elements for x, y and z (buffered capture possible).
    public var hasBuffer: Bool
    /// The trigger buffered capture uses, if any.
    public var trigger: String?
    /// Why this sensor was chosen (and which were passed over), for the log.
    public var selection: String?
    /// The length of one reading taken when the sensor was described ((raw + offset) × scale, m/s²),
    /// for `list-sensors`: far from 9.81 at rest means a wrong or missing scale, which the daemon
    /// corrects from gravity at rest (``GravityScaleLearner``).
    public var readingMagnitude: Double?
    /// What the kernel offers besides polling that could let the CPU sleep at rest: IIO motion
    /// events (``MotionEvents``) and a hardware FIFO (`buffer/hwfifo_watermark_max`), as sysfs
    /// lists them (docs/sensors.md).
    public var powerFeatures: [String] = []
    /// How the running acquisition waits while the device rests, when it was opened (nil before):
    /// on the motion interrupt, or polling at the rest rate and why.
    public var restPacing: String?
    /// The gyroscope read with this accelerometer, in words (an IMU's `in_anglvel` channels, and
    /// how), or why one that is there is not read; nil when there is none (docs/sensors.md).
    public var gyroscope: String?
    /// Samples carry the gyroscope's rate (while the device moves, after its start-up).
    public var readsGyroscope = false
    /// Why the gyroscope read with this accelerometer cannot be read now (a read error, a value that
    /// is not a number), nil while it reads: its samples then carry no rate.
    public var gyroscopeProblem: String?

    public init(
        identifier: String, name: String, label: String? = nil, location: SensorLocation = .unknown,
        locationOrigin: String = "default",
        sysfsPath: String? = nil, deviceNode: String? = nil, mountMatrix: MountMatrix = .identity,
        mountMatrixOrigin: MountMatrixOrigin = .identity,
        mountMatrixProblems: [String] = [], acquisition: AcquisitionMode? = nil, samplingFrequency: Double? = nil,
        availableFrequencies: String? = nil,
        scale: [Double?]? = nil, offset: [Double?]? = nil, hasBuffer: Bool = false, trigger: String? = nil
    ) {
        self.identifier = identifier
        self.name = name
        self.label = label
        self.location = location
        self.locationOrigin = locationOrigin
        self.sysfsPath = sysfsPath
        self.deviceNode = deviceNode
        self.mountMatrix = mountMatrix
        self.mountMatrixOrigin = mountMatrixOrigin
        self.mountMatrixProblems = mountMatrixProblems
        self.acquisition = acquisition
        self.samplingFrequency = samplingFrequency
        self.availableFrequencies = availableFrequencies
        self.scale = scale
        self.offset = offset
        self.hasBuffer = hasBuffer
        self.trigger = trigger
    }
}

extension MountMatrix: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

/// A problem reading the sensor. Sources report each episode of a kind when it starts, then
/// ``SensorEvent/recovered(_:device:)`` when it ends (see ``FaultTracker``); what is logged is
/// limited by ``FaultLogLimiter``.
public struct SensorFault: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// An attribute or the buffer could not be read (EIO, EAGAIN, ENOENT, …).
        case readFailed = "read-failed"
        /// An attribute held text that is not a number.
        case badValue = "bad-value"
        /// The scale is zero, negative, NaN or not a number: samples cannot be converted.
        case badScale = "bad-scale"
        /// The whole reading is frozen at a length a device at rest cannot read (``FrozenReadingDetector``):
        /// readings are dropped until it changes.
        case stuck
        /// The device could not be opened or configured.
        case openFailed = "open-failed"
        /// The accelerometer reads (0, 0, 0) or NaN: no direction, so no orientation (samples dropped).
        case noGravity = "no-gravity"
        /// An axis is frozen: it held its value while gravity's length at rest changed in the way only a
        /// frozen axis explains (``FrozenReadingDetector``); readings are dropped until it changes.
        case axisStuck = "axis-stuck"
    }

    public var kind: Kind
    /// The device, e.g. `iio:device0`.
    public var device: String
    /// What failed, with the errno name or the value: `in_accel_x_raw: EIO (Input/output error)`.
    public var detail: String

    public init(kind: Kind, device: String, detail: String) {
        self.kind = kind
        self.device = device
        self.detail = detail
    }

    public var description: String { "\(device): \(kind.rawValue): \(detail)" }
}

/// One reading: monotonic seconds (the host's CLOCK_MONOTONIC, or the device's timestamps mapped
/// onto it) and m/s² in the *sensor's* frame, pointing the way gravity pulls; the consumer applies
/// the mount matrix of the last ``SensorEvent/available(_:)``.
public struct SensorSample: Sendable, Hashable {
    public var time: Double
    public var reading: Vector3
    /// The gyroscope's reading at the same moment, rad/s about the same axes (right-hand rule), when
    /// the source has one: a trace in the gyroscope form, or an IMU read with its accelerometer.
    public var rotationRate: Vector3?

    public init(time: Double, reading: Vector3, rotationRate: Vector3? = nil) {
        self.time = time
        self.reading = reading
        self.rotationRate = rotationRate
    }
}

/// What a source reports.
public enum SensorEvent: Sendable, Hashable {
    /// A sensor is there (found at start, added, or back); samples that follow use its matrix.
    case available(SensorDescription)
    /// No sensor: none found, removed, or lost; the orientation is unknown until one is available.
    case unavailable(reason: String)
    case sample(SensorSample)
    /// The first report of a fault episode; affected samples are dropped.
    case fault(SensorFault)
    /// A reported fault episode ended.
    case recovered(SensorFault.Kind, device: String)
    /// Something worth one line in the log that is no fault: a buffer silent after it opened, whose
    /// device is read through its attributes meanwhile.
    case note(String)
    /// A finite source (a replay or standard input) has no more samples.
    case ended
}

/// A source of accelerometer events: a real IIO sensor, a replay, or standard input (the one shape
/// of every source, ``SensorSource``). The daemon and the commands see accelerometers only through
/// this protocol.
public protocol AccelerometerSource: SensorSource where Event == SensorEvent {
    /// How often a polled sensor is read now (nil: its configured rate); the mock sources, which
    /// play recorded time, have none.
    var readPace: ReadPace? { get }
}

extension AccelerometerSource {
    public var readPace: ReadPace? { nil }
}
