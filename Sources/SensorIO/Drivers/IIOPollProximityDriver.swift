import OrientationCore
import SensorCore

/// Polled IIO proximity (iio-sensor-proxy's `iio-poll-proximity`): `in_proximity_raw` against a
/// near level from systemd's hwdb or the driver.
struct IIOPollProximityDriver: SensorDriver {
    let name = "iio-poll-proximity"
    let target = DriverTarget.kind(.proximity)
    let subsystems = ["iio"]
    let udevConditions = Self.proximityFiles.map { #"TEST=="\#($0)""# }

    /// The proximity channel, as the probe looks for it.
    static let proximityFiles = ["in_proximity_raw", "in_proximity0_raw"]

    /// A phone reaching the ear must blank the screen before the cheek touches it.
    static let proximityInterval = 0.2

    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch? {
        kindMatch(device).map(DriverMatch.kind)
    }

    private func kindMatch(_ device: some SensorDevice) -> KindCandidate? {
        guard let file = Self.proximityFiles.first(where: device.hasAttribute) else { return nil }
        let name = device.attribute("name") ?? device.sysname
        // systemd's hwdb (PROXIMITY_NEAR_LEVEL) first, then the driver's own attribute; an HID
        // sensor hub's human presence sensor (the kernel's hid-sensor-prox, `prox`) reads 1 for
        // someone present and 0 for nobody, so halfway between is its near level.
        let sources = [
            ("udev PROXIMITY_NEAR_LEVEL", device.property("PROXIMITY_NEAR_LEVEL")),
            ("in_proximity_nearlevel", device.attribute("in_proximity_nearlevel")),
            ("in_proximity0_nearlevel", device.attribute("in_proximity0_nearlevel")),
            ("HID presence, 0 or 1", name.trimmingWhitespace() == "prox" ? "0.5" : nil),
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
            "\(file) every \(Int(Self.proximityInterval * 1000)) ms, near above \(SamplingFrequencyChoice.text(level)) "
            + "(\(origin)), "
            + "far below \(SamplingFrequencyChoice.text(level * (1 - ProximityHysteresis.defaultMargin)))"
        return KindCandidate(
            description: description,
            plan: .attribute(
                path: device.syspath + "/" + file, conversion: Conversion(nearLevel: level),
                interval: Self.proximityInterval), syspath: device.syspath)
    }

    /// A raw value against the near level, with ``ProximityHysteresis``' margin below it.
    struct Conversion: AttributeConversion {
        private var hysteresis: ProximityHysteresis
        var readerName: String { "orientd-prox" }

        init(nearLevel: Double) {
            hysteresis = ProximityHysteresis(nearLevel: nearLevel)
        }

        mutating func reading(from text: String) -> Result<SensorReading, ValueProblem> {
            let trimmed = String(text.trimmingWhitespace())
            guard let value = Double(trimmed), value.isFinite else {
                return .failure(ValueProblem("\"\(trimmed.prefix(40))\" is not a number"))
            }
            return .success(.proximity(near: hysteresis.classify(value)))
        }
    }
}
