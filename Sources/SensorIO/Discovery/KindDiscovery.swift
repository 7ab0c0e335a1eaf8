import OrientationCore
import SensorCore

/// How a found light or proximity sensor is read.
enum KindReadPlan: Sendable, Hashable {
    /// A sysfs attribute at `path`, read every `interval` seconds and converted.
    case attribute(path: String, conversion: AttributeConversion, interval: Double)
    /// An evdev switch at `node`: its state (EVIOCGSW) at start and after every event of it.
    case evdevSwitch(node: String, code: UInt16)
    /// One channel of an IIO device's buffer (HID sensor hubs), paced by `trigger`.
    case buffer(deviceID: String, channel: String, trigger: String?, conversion: BufferConversion)
}

/// What a buffered channel's value means: (value + offset) × scale in the kind's unit.
enum BufferConversion: Sendable, Hashable {
    /// Lux (HID ambient light: the ABI calls `in_intensity` unitless, HID hubs report lux).
    case light
    /// Degrees from magnetic north.
    case heading
}

/// What an attribute's text means.
enum AttributeConversion: Sendable, Hashable {
    /// IIO light: (value + offset) × scale in `unit`.
    case light(scale: Double, offset: Double)
    /// applesmc's `(left,right)`: the brighter side as a percentage of its 255 maximum, in the
    /// vendor unit (iio-sensor-proxy's reading, so desktops' curves stay the same).
    case applesmcLight
    /// IIO proximity: a raw value against a near level (``ProximityHysteresis``).
    case proximity(nearLevel: Double)
}

/// A device that can serve a kind, with how to read it; `plan` is nil when it cannot be served
/// (a proximity sensor without a near level), `description.problems` says why.
struct KindCandidate: Sendable {
    var description: KindSensorDescription
    var plan: KindReadPlan?
    var syspath: String
}

/// Finding light, proximity and compass sensors: the driver table's walk (``SensorDrivers``), in
/// iio-sensor-proxy's families and order: IIO buffered light (HID hubs), IIO polled attributes (the
/// lowest device number), then hwmon (light) or evdev switches (proximity); the compass from an IIO
/// buffer (HID hubs). What the drivers share (read plans, conversions, intervals) lives here.
public enum KindDiscovery {
    /// The subsystems whose hotplug events may change what serves `kind`.
    static func subsystems(for kind: SensorKind) -> [String] { SensorDrivers.subsystems(for: .kind(kind)) }

    /// Every light, proximity and compass sensor udev knows, per kind in the order they are
    /// chosen, and whether it can be read (for `orientd list-sensors`); the first readable one of a
    /// kind is the one served.
    public static func listing(udev: Udev) -> [(description: KindSensorDescription, readable: Bool)] {
        SensorKind.allCases.flatMap { kind in candidates(for: kind, udev: udev).map { ($0.description, $0.plan != nil) }
        }
    }

    /// The candidates for `kind`, as the driver table's walk finds them.
    static func candidates(for kind: SensorKind, udev: Udev) -> [KindCandidate] {
        SensorDrivers.matches(for: .kind(kind), udev: udev).compactMap {
            if case .kind(let candidate) = $0.match { candidate } else { nil }
        }
    }

    /// The buffered channel of each kind (HID sensor hubs' ambient light and compass).
    static func bufferedChannel(for kind: SensorKind) -> String? {
        switch kind {
        case .light: "intensity_both"
        case .compass: "rot_from_north_magnetic_tilt_comp"
        case .proximity: nil
        }
    }

    /// A device whose buffer carries the kind's channel, with the trigger that paces it (the
    /// device's current one, else `NAME-devN` or `NAME-trigger`); without a trigger it cannot be
    /// read, and says so.
    static func bufferedChannel(_ device: UdevDevice, kind: SensorKind, triggers: [String]) -> KindCandidate? {
        guard let channel = bufferedChannel(for: kind), device.hasAttribute("scan_elements/in_\(channel)_en") else {
            return nil
        }
        let name = device.attribute("name") ?? device.sysname
        let current = device.attribute("trigger/current_trigger").flatMap { $0.isEmpty || $0 == "NULL" ? nil : $0 }
        let trigger =
            current
            ?? AccelerometerDiscovery.triggerName(for: name, number: deviceNumber(device.sysname), among: triggers)
        let unit = kind == .light ? "lux" : "°"
        var description = KindSensorDescription(
            kind: kind, identifier: device.sysname, name: name, acquisition: .iioBuffer, sysfsPath: device.syspath,
            unit: kind == .light ? .lux : nil,
            reading: "buffer in_\(channel) × scale in \(unit), trigger \(trigger ?? "none")")
        guard let trigger else {
            description.problems.append(
                "\(device.sysname) (\(name)): in_\(channel) has no trigger "
                    + "(\(name)-dev\(deviceNumber(device.sysname)) or \(name)-trigger): "
                    + "the \(kind) is not served from it")
            return KindCandidate(description: description, plan: nil, syspath: device.syspath)
        }
        return KindCandidate(
            description: description,
            plan: .buffer(
                deviceID: device.sysname, channel: channel, trigger: trigger,
                conversion: kind == .light ? .light : .heading),
            syspath: device.syspath)
    }

    static func deviceNumber(_ sysname: String) -> Int { SensorDrivers.iioNumber(sysname) }
}
