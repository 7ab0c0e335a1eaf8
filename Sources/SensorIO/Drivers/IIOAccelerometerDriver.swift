import OrientationCore
import SensorCore

/// IIO accelerometers (iio-sensor-proxy's `iio-poll-accel` and `iio-buffer-accel` in one): a device
/// with x, y and z acceleration channels, raw (polled) or in scan elements (read through the buffer
/// when a trigger paces it, see ``AccelerometerDiscovery/acquisitionMode(requested:candidate:trigger:)``).
struct IIOAccelerometerDriver: SensorDriver {
    let name = "iio-accel"
    let target = DriverTarget.accelerometer
    let subsystems = ["iio"]
    let udevConditions = [#"TEST=="in_accel_x_raw""#, #"TEST=="scan_elements/in_accel_x_en""#]

    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch? {
        let id = device.sysname
        guard id.hasPrefix("iio:device") else { return nil }
        let raw = AccelerometerDiscovery.axes.allSatisfy { device.hasAttribute("in_accel_\($0)_raw") }
        let buffered = AccelerometerDiscovery.axes.allSatisfy { device.hasAttribute("scan_elements/in_accel_\($0)_en") }
        guard raw || buffered else { return nil }
        let matrices: [AccelerometerCandidate.SysfsMountMatrix] = [
            ("mount_matrix", MountMatrixOrigin.sysfsMountMatrix), ("in_accel_mount_matrix", .sysfsAccelMountMatrix),
            ("in_mount_matrix", .sysfsInMountMatrix),
        ].compactMap { attribute, origin in device.attribute(attribute).map { .init(origin: origin, text: $0) } }
        return .accelerometer(
            AccelerometerCandidate(
                deviceID: id, name: device.attribute("name") ?? id, label: device.attribute("label"),
                udevLocation: device.property("ACCEL_LOCATION"), sysfsLocation: device.attribute("location"),
                udevMountMatrix: device.property("ACCEL_MOUNT_MATRIX"), sysfsMountMatrices: matrices,
                sysfsPath: device.syspath, deviceNode: device.deviceNode ?? "/dev/\(id)",
                hasRawChannels: raw, hasBufferChannels: buffered))
    }
}
