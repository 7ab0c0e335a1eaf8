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
    public static let synDropped: UInt16 = 3  // SYN_DROPPED: events were lost; read the state again
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

/// What a hinge-angle source reports (a device that measures its own hinge: `cros-ec-lid-angle`,
/// Intel's HID hinge sensor).
public enum HingeAngleReading: Sendable, Hashable {
    /// A hinge-angle sensor was found (at start or plugged in): what is read, for the log:
    /// `iio:device3 (cros-ec-lid-angle) in_angl_raw`.
    case available(name: String)
    /// Degrees, 0 closed to 360 folded back; nil when the sensor says the angle is unreliable.
    case angle(time: Double, degrees: Double?)
    /// No hinge-angle sensor (none found, or removed): the accelerometers decide alone.
    case unavailable(reason: String)
    /// The sensor cannot be read (said once per episode; the next angle ends it): the accelerometers
    /// decide alone meanwhile.
    case lost(reason: String)
}

/// A source of the hinge angle (the one shape of every source, ``SensorSource``), read with the
/// base: only while something needs the hinge.
public protocol HingeAngleSource: SensorSource where Event == HingeAngleReading {}

/// What a lid-switch source reports.
public enum LidSwitchEvent: Sendable, Hashable {
    /// A lid switch was found (at start or plugged in; read from now, or said unavailable if it
    /// cannot be opened): `Lid Switch (/dev/input/event0)`.
    case available(device: String)
    /// None: none found, removed, or unreadable. Near closed and folded back the hinge decides alone.
    case unavailable(reason: String)
    /// Closed or open: when reading starts and at every change.
    case changed(closed: Bool)
    /// Its state could not be asked (EVIOCGSW failed; said once per episode): the last state holds.
    case unreadable(reason: String)
}

/// A convertible's lid switch (the one shape of every source, ``SensorSource``): it settles closed
/// versus folded back.
public protocol LidSwitchSource: SensorSource where Event == LidSwitchEvent {}
