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

/// Finding light, proximity and compass sensors through udev, in iio-sensor-proxy's families and
/// order: IIO buffered light (HID hubs), IIO polled attributes (the lowest device number), then
/// hwmon (light) or evdev switches (proximity); the compass from an IIO buffer (HID hubs).
public enum KindDiscovery {
    /// The subsystems whose hotplug events may change what serves `kind`.
    static func subsystems(for kind: SensorKind) -> [String] {
        switch kind {
        case .light: ["iio", "hwmon", "platform"]
        case .proximity: ["iio", "input"]
        case .compass: ["iio"]
        }
    }

    /// Every light, proximity and compass sensor udev knows, per kind in the order they are
    /// chosen, and whether it can be read (for `orientd list-sensors`); the first readable one of a
    /// kind is the one served.
    public static func listing(udev: Udev) -> [(description: KindSensorDescription, readable: Bool)] {
        SensorKind.allCases.flatMap { kind in candidates(for: kind, udev: udev).map { ($0.description, $0.plan != nil) }
        }
    }

    static func candidates(for kind: SensorKind, udev: Udev) -> [KindCandidate] {
        let iio = ((try? udev.devices(subsystem: "iio")) ?? []).filter { $0.sysname.hasPrefix("iio:device") }
            .sorted { deviceNumber($0.sysname) < deviceNumber($1.sysname) }
        switch kind {
        case .light:
            let hwmon = ["hwmon", "platform"].flatMap { (try? udev.devices(subsystem: $0)) ?? [] }
            let triggers = AccelerometerDiscovery.localTriggerNames(udev: udev)
            return iio.compactMap { bufferedChannel($0, kind: .light, triggers: triggers) } + iio.compactMap(iioLight)
                + hwmon.compactMap(applesmcLight)
        case .proximity:
            let input = ((try? udev.devices(subsystem: "input")) ?? []).filter { $0.sysname.hasPrefix("event") }
            return iio.compactMap(iioProximity) + input.compactMap(evdevProximity)
        case .compass:
            let triggers = AccelerometerDiscovery.localTriggerNames(udev: udev)
            return iio.compactMap { bufferedChannel($0, kind: .compass, triggers: triggers) }
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

    private static func deviceNumber(_ sysname: String) -> Int { Int(sysname.dropFirst("iio:device".count)) ?? Int.max }

    /// The light channels, in iio-sensor-proxy's order: a processed `_input` of any of them first,
    /// then a `_raw` one.
    static let lightChannels = ["in_illuminance", "in_illuminance0", "in_illuminance_clear", "in_intensity_clear"]

    static func iioLight(_ device: UdevDevice) -> KindCandidate? {
        let name = device.attribute("name") ?? device.sysname
        func number(_ attribute: String) -> Double? {
            device.attribute(attribute).flatMap { Double($0) }.flatMap { $0.isFinite ? $0 : nil }
        }
        var problems: [String] = []
        /// The channel's own attribute, or the one its type shares (`in_intensity_scale` for
        /// `in_intensity_clear_raw`, `in_illuminance_scale` for `in_illuminance0_raw`), by the ABI.
        func channelNumber(_ channel: String, _ suffix: String) -> Double? {
            number("\(channel)_\(suffix)")
                ?? number("\(channel.hasPrefix("in_intensity") ? "in_intensity" : "in_illuminance")_\(suffix)")
        }
        let channel: String, file: String, scale: Double, offset: Double
        if let found = lightChannels.first(where: { device.hasAttribute("\($0)_input") }) {
            // Processed lux by the ABI. iio-sensor-proxy multiplies it by `in_illuminance_scale`
            // too; drivers with both are not known, and the test beds that have both expect it.
            (channel, file) = (found, "\(found)_input")
            scale = number("in_illuminance_scale") ?? 1
            offset = 0
        } else if let found = lightChannels.first(where: { device.hasAttribute("\($0)_raw") }) {
            (channel, file) = (found, "\(found)_raw")
            let given = channelNumber(found, "scale")
            if let given, given <= 0 {
                problems.append("\(device.sysname) (\(name)): light scale \(given) is not positive; 1 is used")
            }
            scale = given.flatMap { $0 > 0 ? $0 : nil } ?? 1
            offset = channelNumber(found, "offset") ?? 0
        } else {
            return nil
        }
        // The sensor integrates over `integration_time` seconds: reading faster repeats values.
        let integration = channelNumber(channel, "integration_time")
        let interval = min(max(integration ?? defaultLightInterval, 0.05), 5)
        let conversion =
            scale == 1 && offset == 0 ? file : offset == 0 ? "\(file) × \(scale)" : "(\(file) + \(offset)) × \(scale)"
        let description = KindSensorDescription(
            kind: .light, identifier: device.sysname, name: name, acquisition: .iioPoll, sysfsPath: device.syspath,
            unit: .lux, reading: "\(conversion) lux every \(Int((interval * 1000).rounded())) ms", problems: problems)
        return KindCandidate(
            description: description,
            plan: .attribute(
                path: device.syspath + "/" + file, conversion: .light(scale: scale, offset: offset),
                interval: interval), syspath: device.syspath)
    }

    /// Without `integration_time`: half a second, faster than iio-sensor-proxy's 800 ms and still
    /// two wake-ups a second while a desktop holds the claim.
    static let defaultLightInterval = 0.5
    /// applesmc's light is a cheap SMC read: 0.4 s answers a step within half a second (what the
    /// incumbent's test suite waits), where iio-sensor-proxy itself polls it every 8 s.
    static let applesmcInterval = 0.4
    /// A phone reaching the ear must blank the screen before the cheek touches it.
    static let proximityInterval = 0.2

    static func applesmcLight(_ device: UdevDevice) -> KindCandidate? {
        guard device.hasAttribute("light") else { return nil }
        let identifier = "\(device.subsystem ?? "hwmon"):\(device.sysname)"
        let description = KindSensorDescription(
            kind: .light, identifier: identifier, name: device.attribute("name") ?? device.sysname,
            acquisition: .hwmonPoll,
            sysfsPath: device.syspath, unit: .vendor,
            reading:
                """
                light \"(left,right)\": the brighter side in % of 255, every \
                \(Int((applesmcInterval * 1000).rounded())) ms
                """
        )
        return KindCandidate(
            description: description,
            plan: .attribute(path: device.syspath + "/light", conversion: .applesmcLight, interval: applesmcInterval),
            syspath: device.syspath)
    }

    static func iioProximity(_ device: UdevDevice) -> KindCandidate? {
        guard let file = ["in_proximity_raw", "in_proximity0_raw"].first(where: device.hasAttribute) else { return nil }
        let name = device.attribute("name") ?? device.sysname
        // systemd's hwdb (PROXIMITY_NEAR_LEVEL) first, then the driver's own attribute.
        let sources = [
            ("udev PROXIMITY_NEAR_LEVEL", device.property("PROXIMITY_NEAR_LEVEL")),
            ("in_proximity_nearlevel", device.attribute("in_proximity_nearlevel")),
            ("in_proximity0_nearlevel", device.attribute("in_proximity0_nearlevel")),
        ]
        var problems: [String] = []
        var nearLevel: (Double, String)?
        for (origin, text) in sources {
            guard let text else { continue }
            if let value = Double(text.trimmingWhitespace()), value.isFinite, value > 0 {
                nearLevel = (value, origin)
                break
            }
            problems.append(
                "\(device.sysname) (\(name)): near level \"\(text)\" from \(origin) is not a number above 0")
        }
        var description = KindSensorDescription(
            kind: .proximity, identifier: device.sysname, name: name, acquisition: .iioPoll,
            sysfsPath: device.syspath, reading: file, problems: problems)
        guard let (level, origin) = nearLevel else {
            description.problems.append(
                "\(device.sysname) (\(name)): no near level (udev PROXIMITY_NEAR_LEVEL or in_proximity_nearlevel): "
                    + "proximity is not served from it; add it to systemd's hwdb (60-sensor.hwdb)")
            return KindCandidate(description: description, plan: nil, syspath: device.syspath)
        }
        description.nearLevel = level
        description.reading =
            "\(file) every \(Int(proximityInterval * 1000)) ms, near above \(SamplingFrequencyChoice.text(level)) "
            + "(\(origin)), "
            + "far below \(SamplingFrequencyChoice.text(level * (1 - ProximityHysteresis.defaultMargin)))"
        return KindCandidate(
            description: description,
            plan: .attribute(
                path: device.syspath + "/" + file, conversion: .proximity(nearLevel: level),
                interval: proximityInterval), syspath: device.syspath)
    }

    /// SW_FRONT_PROXIMITY (linux/input-event-codes.h).
    static let frontProximitySwitch: UInt16 = 0x0b

    static func evdevProximity(_ device: UdevDevice) -> KindCandidate? {
        guard let parent = device.parent, let bits = parent.attribute("capabilities/sw"),
            InputSwitches.hasBit(Int(frontProximitySwitch), inBitmask: bits), let node = device.deviceNode
        else { return nil }
        let description = KindSensorDescription(
            kind: .proximity, identifier: "input:\(node)", name: parent.attribute("name") ?? device.sysname,
            acquisition: .evdev,
            sysfsPath: device.syspath, deviceNode: node, reading: "SW_FRONT_PROXIMITY (on: near)")
        return KindCandidate(
            description: description, plan: .evdevSwitch(node: node, code: frontProximitySwitch),
            syspath: device.syspath)
    }
}
