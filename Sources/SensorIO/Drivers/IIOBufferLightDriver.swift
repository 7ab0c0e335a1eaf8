import OrientationCore
import SensorCore

/// HID sensor hubs' ambient light through the IIO buffer (iio-sensor-proxy's `iio-buffer-als`):
/// `in_intensity_both`, paced by the device's trigger.
struct IIOBufferLightDriver: SensorDriver {
    let name = "iio-buffer-als"
    let target = DriverTarget.kind(.light)
    let subsystems = ["iio"]
    let udevConditions = [#"TEST=="scan_elements/in_intensity_both_en""#]

    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch? {
        KindDiscovery.bufferedChannel(
            device, kind: .light, channel: "intensity_both", unit: "lux", lightUnit: .lux, triggers: context.triggers,
            conversion: Conversion()
        ).map(DriverMatch.kind)
    }

    /// Lux (the ABI calls `in_intensity` unitless; HID hubs report lux); never negative.
    struct Conversion: BufferConversion {
        var readerName: String { "orientd-light" }

        func reading(_ converted: Double, raw: Double) -> Result<SensorReading, ValueProblem> {
            guard converted >= 0 else {
                return .failure(ValueProblem("\(raw) gives \(converted) lux: a light level is never negative"))
            }
            return .success(.light(level: converted, unit: .lux))
        }
    }
}
