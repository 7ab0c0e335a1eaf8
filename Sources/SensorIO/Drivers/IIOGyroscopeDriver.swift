import OrientationCore
import SensorCore

/// A gyroscope in a device of its own: an IIO device with `in_anglvel_{x,y,z}_raw` and no
/// accelerometer channels (an IMU's gyroscope is read with its accelerometer instead): an HID sensor
/// hub's `gyro_3d` on convertibles and Windows tablets, a gyroscope chip of its own. Read with the
/// display's accelerometer while the device moves (``UdevGyroscopeSource``): through its buffer when
/// the three channels are scan elements and a trigger paces them (an HID hub answers each `raw` read
/// with a request to the hub, so its sensors are read from their buffers, as its accelerometer is),
/// else by its `raw` attributes.
struct IIOGyroscopeDriver: SensorDriver {
    let name = "iio-poll-gyro"
    let target = DriverTarget.gyroscope
    let subsystems = ["iio"]
    /// Its node and buffer attributes go to the service's group (an HID hub's `gyro_3d` is read
    /// through its buffer), but it starts nothing: it comes with the accelerometer that does.
    let udevConditions = [#"TEST=="in_anglvel_x_raw""#, #"TEST=="scan_elements/in_anglvel_x_en""#]
    let startsService = false

    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch? {
        let axes = ["x", "y", "z"]
        guard device.sysname.hasPrefix("iio:device"),
            axes.allSatisfy({ device.hasAttribute("in_anglvel_\($0)_raw") }),
            !device.hasAttribute("in_accel_x_raw"), !device.hasAttribute("scan_elements/in_accel_x_en")
        else { return nil }
        func number(_ axis: String, _ suffix: String) -> Double? {
            (device.attribute("in_anglvel_\(axis)_\(suffix)") ?? device.attribute("in_anglvel_\(suffix)"))
                .flatMap { Double($0.trimmingWhitespace()) }.flatMap { $0.isFinite ? $0 : nil }
        }
        // In a convertible's base it turns with the base: its rates are the display's only while the
        // hinge holds still, and in another frame (turned by the hinge angle), so it is not read.
        let place = [("sysfs location", device.attribute("location")), ("sysfs label", device.attribute("label"))]
            .first { _, text in
                text.map { $0.trimmingWhitespace().lowercased() }.map { $0 == "base" || $0.hasSuffix("-base") } == true
            }
        let baseProblem = place.map { source, _ in
            """
            \(device.sysname): in the base (\(source)): it turns with the base, not the display: \
            the gyroscope is not read
            """
        }
        let scaleProblem = GyroscopeAttributes.scaleProblem(
            device: device.sysname,
            scales: (["in_anglvel_scale"] + axes.map { "in_anglvel_\($0)_scale" }).map {
                (attribute: $0, text: device.attribute($0))
            })
        // Its own matrix: udev's (hwdb's GYRO_MOUNT_MATRIX, as systemd names it), else sysfs's (as the
        // accelerometer's, `in_mount_matrix` last); one
        // that cannot be parsed is said and the next is tried.
        var matrix = MountMatrix.identity
        var origin = "identity"
        var problems: [String] = []
        for (text, source) in [
            (device.property("GYRO_MOUNT_MATRIX"), "udev GYRO_MOUNT_MATRIX"),
            (device.attribute("in_anglvel_mount_matrix"), "sysfs in_anglvel_mount_matrix"),
            (device.attribute("mount_matrix"), "sysfs mount_matrix"),
            (device.attribute("in_mount_matrix"), "sysfs in_mount_matrix"),
        ] {
            guard let text else { continue }
            do {
                matrix = try MountMatrix(parsing: String(text.trimmingWhitespace()))
                origin = source
                break
            } catch {
                problems.append("\(device.sysname): \(source) ignored: \(error)")
            }
        }
        let name = device.attribute("name") ?? device.sysname
        let scanned = axes.allSatisfy { device.hasAttribute("scan_elements/in_anglvel_\($0)_en") }
        let trigger = scanned ? KindDiscovery.bufferTrigger(of: device, name: name, among: context.triggers) : nil
        return .gyroscope(
            GyroscopeDevice(
                deviceID: device.sysname, name: name, syspath: device.syspath, bufferTrigger: trigger,
                paths: axes.map { device.syspath + "/in_anglvel_\($0)_raw" },
                scale: axes.map { number($0, "scale") ?? 1 }, offset: axes.map { number($0, "offset") ?? 0 },
                mountMatrix: matrix, mountMatrixOrigin: origin, problems: problems, notRead: baseProblem ?? scaleProblem
            ))
    }
}

/// Gyroscopes in devices of their own, for `orientd list-sensors` (the daemon reads the first).
public enum GyroscopeDiscovery {
    public static func listing(udev: Udev) -> [GyroscopeDevice] {
        SensorDrivers.matches(for: .gyroscope, udev: udev).compactMap {
            if case .gyroscope(let device) = $0.match { device } else { nil }
        }
    }
}

/// A gyroscope's device as the driver found it.
public struct GyroscopeDevice: Sendable, Hashable, Encodable {
    public var deviceID: String
    public var name: String
    public var syspath: String
    /// The trigger that paces its buffer, when it is read through the buffer; nil: polled.
    public var bufferTrigger: String?
    /// The three `raw` attributes, x, y, z.
    public var paths: [String]
    /// rad/s per unit, and units added before scaling, per axis.
    public var scale: [Double]
    public var offset: [Double]
    public var mountMatrix: MountMatrix
    public var mountMatrixOrigin: String
    /// What its attributes got wrong that is worked around (a matrix that cannot be parsed), said
    /// as warnings.
    public var problems: [String] = []
    /// Why it is not read (a scale that is not a positive number), nil: it is usable.
    public var notRead: String?

    /// rad/s about the sensor's axes from the three raw values.
    func rate(raw: [Double]) -> Vector3 {
        Vector3((raw[0] + offset[0]) * scale[0], (raw[1] + offset[1]) * scale[1], (raw[2] + offset[2]) * scale[2])
    }
}
