import OrientationCore
import SensorCore

/// HID sensor hubs' compass through the IIO buffer (iio-sensor-proxy's `iio-buffer-compass`):
/// `in_rot_from_north_magnetic_tilt_comp`, paced by the device's trigger.
struct HIDCompassDriver: SensorDriver {
    let name = "iio-buffer-compass"
    let target = DriverTarget.kind(.compass)
    let subsystems = ["iio"]
    let udevConditions = [#"TEST=="scan_elements/in_rot_from_north_magnetic_tilt_comp_en""#]

    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch? {
        KindDiscovery.bufferedChannel(
            device, kind: .compass, channel: "rot_from_north_magnetic_tilt_comp", unit: "°", lightUnit: nil,
            triggers: context.triggers, conversion: Conversion()
        ).map(DriverMatch.kind)
    }

    /// Degrees from magnetic north, within [0, 360).
    struct Conversion: BufferConversion {
        var readerName: String { "orientd-compass" }

        func reading(_ converted: Double, raw: Double) -> Result<SensorReading, ValueProblem> {
            let degrees = converted.truncatingRemainder(dividingBy: 360)
            return .success(.heading(degrees < 0 ? degrees + 360 : degrees))
        }
    }
}
