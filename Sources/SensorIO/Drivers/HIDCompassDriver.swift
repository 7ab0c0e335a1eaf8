import OrientationCore
import SensorCore

/// HID sensor hubs' compass through the IIO buffer (iio-sensor-proxy's `iio-buffer-compass`):
/// `in_rot_from_north_magnetic_tilt_comp`, paced by the device's trigger.
struct HIDCompassDriver: SensorDriver {
    let name = "iio-buffer-compass"
    let target = DriverTarget.kind(.compass)
    let subsystems = ["iio"]

    func probe(_ device: UdevDevice, context: DriverContext) -> DriverMatch? {
        KindDiscovery.bufferedChannel(device, kind: .compass, triggers: context.triggers).map(DriverMatch.kind)
    }
}
