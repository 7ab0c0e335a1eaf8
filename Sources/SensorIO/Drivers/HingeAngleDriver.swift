import SensorCore

/// A device that measures its own hinge (iio-sensor-proxy has no driver for it): an IIO device
/// with an angle channel, `in_angl_raw` (ChromeOS's `cros-ec-lid-angle`, in whole degrees) or
/// `in_angl0_raw` (the hinge of Intel's HID hinge sensor, whose channels 1 and 2 are the screen's
/// and the keyboard's), read with the base (``UdevHingeAngleSource``).
struct HingeAngleDriver: SensorDriver {
    let name = "iio-poll-hinge"
    let target = DriverTarget.hingeAngle
    let subsystems = ["iio"]
    /// A hinge sensor comes with the accelerometers that start the service.
    let udevConditions: [String] = []

    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch? {
        guard device.sysname.hasPrefix("iio:device"),
            let channel = ["in_angl", "in_angl0"].first(where: { device.hasAttribute("\($0)_raw") })
        else { return nil }
        let name = device.attribute("name") ?? device.sysname
        func number(_ suffix: String) -> Double? {
            (device.attribute("\(channel)_\(suffix)") ?? device.attribute("in_angl_\(suffix)")).flatMap(Double.init)
        }
        return .hingeAngle(
            HingeAngleChannel(
                deviceID: device.sysname, name: name, syspath: device.syspath, path: device.syspath + "/\(channel)_raw",
                scale: number("scale") ?? 1, offset: number("offset") ?? 0,
                reportsDegrees: name == "cros-ec-lid-angle"))
    }
}
