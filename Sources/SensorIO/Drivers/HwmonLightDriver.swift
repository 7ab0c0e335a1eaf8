import OrientationCore
import SensorCore

/// Apple's ambient light through hwmon (iio-sensor-proxy's `hwmon-als`): applesmc's `light`
/// attribute, `(left,right)` in the vendor's unit.
struct HwmonLightDriver: SensorDriver {
    let name = "hwmon-als"
    let target = DriverTarget.kind(.light)
    let subsystems = ["hwmon", "platform"]
    let udevConditions = [#"TEST=="light""#]

    /// applesmc's light is a cheap SMC read: 0.4 s answers a step within half a second (what the
    /// incumbent's test suite waits), where iio-sensor-proxy itself polls it every 8 s.
    static let applesmcInterval = 0.4

    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch? {
        kindMatch(device).map(DriverMatch.kind)
    }

    private func kindMatch(_ device: some SensorDevice) -> KindCandidate? {
        guard device.hasAttribute("light") else { return nil }
        let identifier = "\(device.subsystem ?? "hwmon"):\(device.sysname)"
        let description = KindSensorDescription(
            kind: .light, identifier: identifier, name: device.attribute("name") ?? device.sysname,
            acquisition: .hwmonPoll,
            sysfsPath: device.syspath, unit: .vendor,
            reading:
                """
                light \"(left,right)\": the brighter side in % of 255, every \
                \(Int((Self.applesmcInterval * 1000).rounded())) ms
                """
        )
        return KindCandidate(
            description: description,
            plan: .attribute(
                path: device.syspath + "/light", conversion: Conversion(), interval: Self.applesmcInterval),
            syspath: device.syspath)
    }

    /// applesmc's `(left,right)`: the brighter side as a percentage of its 255 maximum, in the
    /// vendor unit (iio-sensor-proxy's reading, so desktops' curves stay the same).
    struct Conversion: AttributeConversion {
        var readerName: String { "orientd-light" }

        func reading(from text: String) -> Result<SensorReading, ValueProblem> {
            let trimmed = String(text.trimmingWhitespace())
            // "(l,r)": two integers in parentheses.
            let inner =
                trimmed.hasPrefix("(") && trimmed.hasSuffix(")") ? trimmed.dropFirst().dropLast() : Substring("")
            let parts = inner.split(separator: ",").map { Int($0.trimmingWhitespace()) }
            guard parts.count == 2, let left = parts[0], let right = parts[1], left >= 0, right >= 0 else {
                return .failure(ValueProblem("\"\(trimmed.prefix(40))\" is not \"(left,right)\""))
            }
            return .success(.light(level: Double(max(left, right)) / 255 * 100, unit: .vendor))
        }
    }
}
