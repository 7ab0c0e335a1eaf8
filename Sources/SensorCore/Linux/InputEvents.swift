/// One Linux input event (`struct input_event` without its time, which the kernel stamps on events
/// written to uinput): what orientd tells libinput through its tablet-mode switch.
public struct InputEvent: Sendable, Hashable, CustomStringConvertible {
    public var type: UInt16
    public var code: UInt16
    public var value: Int32

    public init(type: UInt16, code: UInt16, value: Int32) {
        self.type = type
        self.code = code
        self.value = value
    }

    // linux/input-event-codes.h: part of the kernel's stable ABI.
    public static let synchronization: UInt16 = 0x00  // EV_SYN
    public static let switchEvent: UInt16 = 0x05  // EV_SW
    public static let report: UInt16 = 0  // SYN_REPORT
    public static let lidSwitch: UInt16 = 0x00  // SW_LID
    public static let tabletModeSwitch: UInt16 = 0x01  // SW_TABLET_MODE

    /// The switch set to tablet mode (1) or not (0), then the report that makes readers act on it.
    public static func tabletMode(_ on: Bool) -> [InputEvent] {
        [
            InputEvent(type: switchEvent, code: tabletModeSwitch, value: on ? 1 : 0),
            InputEvent(type: synchronization, code: report, value: 0),
        ]
    }

    public var description: String {
        switch (type, code) {
        case (Self.switchEvent, Self.tabletModeSwitch): "EV_SW SW_TABLET_MODE \(value)"
        case (Self.switchEvent, Self.lidSwitch): "EV_SW SW_LID \(value)"
        case (Self.synchronization, Self.report): "EV_SYN SYN_REPORT \(value)"
        default: "type \(type) code \(code) value \(value)"
        }
    }
}

/// Where a tablet-mode switch's events go: a uinput device, or in tests, a recorder.
public protocol InputEventWriter: AnyObject, Sendable {
    /// Writes the events in one go (the switch and its report).
    func write(_ events: [InputEvent]) throws(InputDeviceError)
}

/// An input device that could not be opened, created or written; names the device and the step.
public struct InputDeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var step: String
    public var errno: Int32
    public var reason: String

    public init(path: String, step: String, errno: Int32, reason: String) {
        self.path = path
        self.step = step
        self.errno = errno
        self.reason = reason
    }

    public var description: String { "\(path): \(step): \(reason)" }
}

/// What a hinge-angle sensor reports (a device that measures its own hinge: `cros-ec-lid-angle`,
/// Intel's HID hinge sensor).
public enum HingeAngleReading: Sendable, Hashable {
    /// Degrees, 0 closed to 360 folded back; nil when the sensor says the angle is unreliable.
    case angle(time: Double, degrees: Double?)
    /// The sensor cannot be read (removed, failing): the accelerometers decide alone.
    case lost(reason: String)
}

/// A hinge-angle sensor, sampled like an accelerometer: only between ``startSampling()`` and
/// ``stopSampling()``.
public protocol HingeAngleSensor: AnyObject, Sendable {
    /// What is read, for the log: `iio:device3 (cros-ec-lid-angle) in_angl_raw`.
    var name: String { get }
    /// Every reading, on the sensor's own queue, one at a time; set before sampling starts.
    func deliver(to receive: @escaping @Sendable (HingeAngleReading) -> Void)
    /// Makes the sensor ready to sample (idempotent); a sensor that throws holds nothing.
    func start() throws(SensorStartError)
    func startSampling()
    func stopSampling()
    func shutdown()
}
