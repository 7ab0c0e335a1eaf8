import OrientationCore
import SensorCore

/// What a driver's devices serve.
enum DriverTarget: Hashable, Sendable, CustomStringConvertible {
    case accelerometer
    case kind(SensorKind)
    /// A device that measures its own hinge (`cros-ec-lid-angle`, Intel's HID hinge sensor).
    case hingeAngle
    /// The lid switch (evdev SW_LID) of a convertible.
    case lidSwitch
    /// A gyroscope in a device of its own (an IMU's is the accelerometer's).
    case gyroscope

    var description: String {
        switch self {
        case .accelerometer: "accelerometer"
        case .kind(let kind): kind.description
        case .hingeAngle: "hinge-angle sensor"
        case .lidSwitch: "lid switch"
        case .gyroscope: "gyroscope"
        }
    }
}

/// What a driver found on one udev device, and how it is read.
enum DriverMatch: Sendable {
    case accelerometer(AccelerometerCandidate)
    case kind(KindCandidate)
    case hingeAngle(HingeAngleChannel)
    case lidSwitch(LidSwitchDevice)
    case gyroscope(GyroscopeDevice)
}

/// What every probe of one walk shares, read once: the IIO triggers' names.
struct DriverContext: Sendable {
    let triggers: [String]
}

/// What a probe reads of one device: udev's view of it (``UdevDevice``), as a protocol so that
/// every probe can be tried on a dictionary of attributes (Tests/SensorIOTests/DriverProbeTests.swift).
protocol SensorDevice {
    associatedtype Parent: SensorDevice
    /// `iio:device0`, `event3`.
    var sysname: String { get }
    var syspath: String { get }
    var deviceNode: String? { get }
    /// `iio`, `input`, `hwmon`…
    var subsystem: String? { get }
    /// The parent device (an `eventN` node's `inputN`).
    var parent: Parent? { get }
    /// A udev property (`ACCEL_MOUNT_MATRIX`), as set by rules and hwdb.
    func property(_ name: String) -> String?
    /// Whether the sysfs attribute exists (relative path), readable or not.
    func hasAttribute(_ name: String) -> Bool
    /// A sysfs attribute's text, trailing whitespace removed; nil when absent or unreadable.
    func attribute(_ name: String) -> String?
}

extension UdevDevice: SensorDevice {}

/// One family of sensor hardware, as an entry of iio-sensor-proxy's `drivers[]`: what it serves,
/// which udev subsystems its devices are in (their hotplug may change what is chosen), how to
/// recognise one of its devices and read it, and how the udev rule recognises them. A driver
/// decides from udev's view of one device only.
protocol SensorDriver: Sendable {
    /// `iio-poll-light`: iio-sensor-proxy's name where it has the driver, for `list-sensors` and the log.
    var name: String { get }
    var target: DriverTarget { get }
    var subsystems: [String] { get }
    /// What marks one of its devices in the udev rule (systemd/60-orientd.rules), beyond its
    /// subsystem: each entry one rule line's conditions (`TEST=="in_illuminance_input"`), any of which
    /// gives an IIO device's node and the attributes orientd writes to the service's group. Empty
    /// for a driver whose devices need nothing the kernel does not give everyone (a hinge angle's
    /// `raw` attribute; a lid switch, which the rule's input lines cover).
    var udevConditions: [String] { get }
    /// Whether one of its devices alone starts the service (`ORIENTD_SENSOR`), or only comes with a
    /// sensor that does and is read beside it (`ORIENTD_COMPANION`: a gyroscope). Access and start
    /// are apart: a gyroscope's buffer must be opened by the service, which its accelerometer starts.
    var startsService: Bool { get }
    /// The match when `device` is one of this driver's, nil otherwise.
    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch?
}

extension SensorDriver {
    var startsService: Bool { true }
}

/// The one table that discovery walks.
enum SensorDrivers {
    /// Every driver, in the order their devices are chosen within a target (iio-sensor-proxy's
    /// families and order: buffered before polled light, IIO before evdev).
    static let table: [any SensorDriver] = [
        IIOAccelerometerDriver(), InputAccelerometerDriver(),
        IIOBufferLightDriver(), IIOPollLightDriver(), HwmonLightDriver(),
        IIOPollProximityDriver(), InputProximityDriver(),
        HIDCompassDriver(),
        HingeAngleDriver(),
        LidSwitchDriver(),
        IIOGyroscopeDriver(),
    ]

    /// The drivers of `target`, in table order.
    static func drivers(for target: DriverTarget) -> [any SensorDriver] {
        table.filter { $0.target == target }
    }

    /// The subsystems whose hotplug events may change what serves `target`.
    static func subsystems(for target: DriverTarget) -> [String] {
        drivers(for: target).flatMap(\.subsystems).reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }

    /// Every match for `target`: driver by driver in table order, each driver's devices by IIO device
    /// number (the lowest first, as iio-sensor-proxy chooses), then udev's order.
    static func matches(for target: DriverTarget, udev: Udev) -> [(driver: String, match: DriverMatch)] {
        let drivers = drivers(for: target)
        let context = DriverContext(triggers: AccelerometerDiscovery.localTriggerNames(udev: udev))
        var devices: [String: [UdevDevice]] = [:]
        for subsystem in drivers.flatMap(\.subsystems) where devices[subsystem] == nil {
            devices[subsystem] = walkOrder((try? udev.devices(subsystem: subsystem)) ?? [], name: \.sysname)
        }
        return drivers.flatMap { driver in
            driver.subsystems.flatMap { devices[$0] ?? [] }.compactMap { device in
                driver.probe(device, context: context).map { (driver.name, $0) }
            }
        }
    }

    /// The udev rule's kind section (systemd/60-orientd.rules, between its `driver table` markers):
    /// each driver's conditions tag its devices with what they serve, `ORIENTD_SENSOR` (which starts
    /// the service) or `ORIENTD_COMPANION` (read beside such a sensor, given access only); the IIO lines
    /// come last, after the line that sends every other subsystem past them, because the rule's
    /// next lines (the device node's group, the writable attributes) are for IIO devices only.
    /// `DriverTableTests` holds the file to it, so a driver's probe and the rule cannot drift apart.
    static var udevRuleSection: [String] {
        func tag(_ driver: any SensorDriver) -> String {
            switch driver.target {
            case .accelerometer: "accelerometer"
            case .kind(let kind): kind.rawValue
            case .hingeAngle: "hinge"
            case .lidSwitch: "lid"
            case .gyroscope: "gyroscope"
            }
        }
        func marks(_ driver: any SensorDriver) -> String {
            #"ENV{\#(driver.startsService ? "ORIENTD_SENSOR" : "ORIENTD_COMPANION")}+="\#(tag(driver))""#
        }
        let tagging = table.filter { !$0.udevConditions.isEmpty }
        let others = tagging.filter { !$0.subsystems.contains("iio") }.flatMap { driver in
            let subsystem = #"SUBSYSTEM=="\#(driver.subsystems.joined(separator: "|"))""#
            return driver.udevConditions.map { #"\#(subsystem), \#($0), \#(marks(driver))"# }
        }
        let iio = tagging.filter { $0.subsystems.contains("iio") }.flatMap { driver in
            driver.udevConditions.map { #"\#($0), \#(marks(driver))"# }
        }
        return others + [#"SUBSYSTEM!="iio", GOTO="orientd_kinds_end""#] + iio
    }

    /// `items` by IIO device number (the lowest first, as iio-sensor-proxy chooses), the others
    /// after them in their own order.
    static func walkOrder<Item>(_ items: [Item], name: (Item) -> String) -> [Item] {
        items.enumerated().sorted {
            (iioNumber(name($0.element)), $0.offset) < (iioNumber(name($1.element)), $1.offset)
        }.map(\.element)
    }

    /// `iio:deviceN`'s N; every other name after every IIO device.
    static func iioNumber(_ sysname: String) -> Int {
        sysname.hasPrefix("iio:device") ? Int(sysname.dropFirst("iio:device".count)) ?? Int.max : Int.max
    }
}
