import OrientationCore
import SensorCore

/// How a found light, proximity or compass sensor is read.
enum KindReadPlan: Sendable {
    /// A sysfs attribute at `path`, read every `interval` seconds and converted by its driver's rule.
    case attribute(path: String, conversion: any AttributeConversion<SensorReading>, interval: Double)
    /// An evdev switch at `node`: its state (EVIOCGSW) at start, then its events' values.
    case evdevSwitch(node: String, code: UInt16)
    /// One channel of an IIO device's buffer (HID sensor hubs), paced by `trigger`.
    case buffer(deviceID: String, channel: String, trigger: String?, conversion: any BufferConversion)
}

/// A driver's rule for its attribute's text (in the driver's file): the reader calls it with every
/// text it reads. Mutating: a rule may remember (proximity's hysteresis).
protocol AttributeConversion<Reading>: Sendable {
    /// A kind's ``SensorReading``; the hinge's degrees.
    associatedtype Reading: Equatable & Sendable
    /// The reader thread's name: `orientd-light`.
    var readerName: String { get }
    /// The reading, or what is wrong with the text (quoting it, for the log).
    mutating func reading(from text: String) -> Result<Reading, ValueProblem>
}

/// A driver's rule for a buffered channel's value, already `(value + offset) × scale` and finite.
protocol BufferConversion: Sendable {
    var readerName: String { get }
    func reading(_ converted: Double, raw: Double) -> Result<SensorReading, ValueProblem>
}

/// Why a value read is no reading: said once per episode in the log, quoting the value.
struct ValueProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
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

    /// A device whose buffer carries `channel` (`intensity_both`), for a driver of `kind`, with the
    /// trigger that paces it (the device's current one, else `NAME-devN` or `NAME-trigger`); without
    /// a trigger it cannot be read, and says so. `unit` names the reading's unit in the description,
    /// `lightUnit` is the state's unit of a light sensor.
    static func bufferedChannel(
        _ device: some SensorDevice, kind: SensorKind, channel: String, unit: String, lightUnit: LightUnit?,
        triggers: [String], conversion: any BufferConversion
    ) -> KindCandidate? {
        guard device.hasAttribute("scan_elements/in_\(channel)_en") else { return nil }
        let name = device.attribute("name") ?? device.sysname
        let trigger = bufferTrigger(of: device, name: name, among: triggers)
        var description = KindSensorDescription(
            kind: kind, identifier: device.sysname, name: name, acquisition: .iioBuffer, sysfsPath: device.syspath,
            unit: lightUnit,
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
            plan: .buffer(deviceID: device.sysname, channel: channel, trigger: trigger, conversion: conversion),
            syspath: device.syspath)
    }

    static func deviceNumber(_ sysname: String) -> Int { SensorDrivers.iioNumber(sysname) }

    /// The trigger that paces a device's buffer of its own (an HID hub's sensors): the one set in
    /// `trigger/current_trigger`, else the one its driver registers (`NAME-devN`, `NAME-trigger`).
    static func bufferTrigger(of device: some SensorDevice, name: String, among triggers: [String]) -> String? {
        device.attribute("trigger/current_trigger").flatMap { $0.isEmpty || $0 == "NULL" ? nil : $0 }
            ?? AccelerometerDiscovery.triggerName(for: name, number: deviceNumber(device.sysname), among: triggers)
    }
}
