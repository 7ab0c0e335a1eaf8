import OrientationCore
import SensorCore

/// Polled IIO ambient light (iio-sensor-proxy's `iio-poll-als`): `in_illuminance_input`, or a raw
/// channel with its scale and offset, read every `integration_time` (half a second without).
struct IIOPollLightDriver: SensorDriver {
    let name = "iio-poll-als"
    let target = DriverTarget.kind(.light)
    let subsystems = ["iio"]
    /// A processed or a raw light channel, as the probe looks for them.
    let udevConditions = ["input", "raw"].flatMap { suffix in lightChannels.map { #"TEST=="\#($0)_\#(suffix)""# } }

    /// The light channels, in iio-sensor-proxy's order: a processed `_input` of any of them first,
    /// then a `_raw` one.
    static let lightChannels = ["in_illuminance", "in_illuminance0", "in_illuminance_clear", "in_intensity_clear"]

    /// Without `integration_time`: half a second, faster than iio-sensor-proxy's 800 ms and still
    /// two wake-ups a second while a desktop holds the claim.
    static let defaultLightInterval = 0.5

    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch? {
        kindMatch(device).map(DriverMatch.kind)
    }

    private func kindMatch(_ device: some SensorDevice) -> KindCandidate? {
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
        if let found = Self.lightChannels.first(where: { device.hasAttribute("\($0)_input") }) {
            // Processed lux by the ABI. iio-sensor-proxy multiplies it by `in_illuminance_scale`
            // too; drivers with both are not known, and the test beds that have both expect it.
            (channel, file) = (found, "\(found)_input")
            scale = number("in_illuminance_scale") ?? 1
            offset = 0
        } else if let found = Self.lightChannels.first(where: { device.hasAttribute("\($0)_raw") }) {
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
        let interval = min(max(integration ?? Self.defaultLightInterval, 0.05), 5)
        let conversion =
            scale == 1 && offset == 0 ? file : offset == 0 ? "\(file) × \(scale)" : "(\(file) + \(offset)) × \(scale)"
        let description = KindSensorDescription(
            kind: .light, identifier: device.sysname, name: name, acquisition: .iioPoll, sysfsPath: device.syspath,
            unit: .lux, reading: "\(conversion) lux every \(Int((interval * 1000).rounded())) ms", problems: problems)
        return KindCandidate(
            description: description,
            plan: .attribute(
                path: device.syspath + "/" + file, conversion: Conversion(scale: scale, offset: offset),
                interval: interval), syspath: device.syspath)
    }

    /// IIO light: (value + offset) × scale in lux; text, NaN, infinity and a negative level are refused.
    struct Conversion: AttributeConversion {
        let scale: Double
        let offset: Double
        var readerName: String { "orientd-light" }

        func reading(from text: String) -> Result<SensorReading, ValueProblem> {
            let trimmed = String(text.trimmingWhitespace())
            guard let value = Double(trimmed), value.isFinite else {
                return .failure(ValueProblem("\"\(trimmed.prefix(40))\" is not a number"))
            }
            let level = (value + offset) * scale
            guard level >= 0 else {
                return .failure(ValueProblem("\"\(trimmed)\" gives \(level) lux: a light level is never negative"))
            }
            return .success(.light(level: level, unit: .lux))
        }
    }
}
