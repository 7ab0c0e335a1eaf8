import OrientationCore
import SensorCore

/// evdev accelerometers (iio-sensor-proxy's `input-accel`): an input event device udev marks
/// `ID_INPUT_ACCELEROMETER`, polled through EVIOCGABS (``InputAccelerometerAcquisition``).
struct InputAccelerometerDriver: SensorDriver {
    let name = "input-accel"
    let target = DriverTarget.accelerometer
    let subsystems = ["input"]
    let udevConditions = [#"KERNEL=="event*", ENV{ID_INPUT_ACCELEROMETER}=="1""#]

    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch? {
        guard device.sysname.hasPrefix("event"), device.property("ID_INPUT_ACCELEROMETER") == "1",
            let node = device.deviceNode
        else { return nil }
        // A game controller's motion sensors are not the device's (the incumbent skips them too).
        let parent = device.parent
        if let parent, parent.property("ID_INPUT_JOYSTICK") == "1" { return nil }
        let quotedName = device.property("NAME").map { String($0.filter { $0 != "\"" }) }
        let name = parent?.attribute("name") ?? quotedName ?? device.sysname
        return .accelerometer(
            AccelerometerCandidate(
                deviceID: "input:\(node)", name: name,
                udevLocation: device.property("ACCEL_LOCATION") ?? parent?.property("ACCEL_LOCATION"),
                udevMountMatrix: device.property("ACCEL_MOUNT_MATRIX") ?? parent?.property("ACCEL_MOUNT_MATRIX"),
                sysfsPath: device.syspath, deviceNode: node, hasRawChannels: true, hasBufferChannels: false,
                interface: .input))
    }
}
