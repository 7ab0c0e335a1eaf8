import OrientationCore
import SensorCore

/// HID sensor hubs' ambient light through the IIO buffer (iio-sensor-proxy's `iio-buffer-als`):
/// `in_intensity_both`, paced by the device's trigger.
struct IIOBufferLightDriver: SensorDriver {
    let name = "iio-buffer-als"
    let target = DriverTarget.kind(.light)
    let subsystems = ["iio"]

    func probe(_ device: UdevDevice, context: DriverContext) -> DriverMatch? {
        KindDiscovery.bufferedChannel(device, kind: .light, triggers: context.triggers).map(DriverMatch.kind)
    }
}
