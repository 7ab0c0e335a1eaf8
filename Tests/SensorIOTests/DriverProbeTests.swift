import OrientationCore
import SensorCore
import Testing

@testable import SensorIO

/// A device as a probe sees it, from dictionaries: its sysfs attributes (a key present with a nil
/// value exists but cannot be read), its udev properties, its parent.
final class DictionaryDevice: SensorDevice {
    let sysname: String
    let subsystem: String?
    let deviceNode: String?
    let parent: DictionaryDevice?
    private let attributes: [String: String?]
    private let properties: [String: String]

    init(
        _ sysname: String, subsystem: String = "iio", node: String? = nil, attributes: [String: String?] = [:],
        properties: [String: String] = [:], parent: DictionaryDevice? = nil
    ) {
        self.sysname = sysname
        self.subsystem = subsystem
        self.deviceNode = node
        self.attributes = attributes
        self.properties = properties
        self.parent = parent
    }

    var syspath: String { "/sys/devices/test/\(sysname)" }
    func property(_ name: String) -> String? { properties[name] }
    func hasAttribute(_ name: String) -> Bool { attributes.keys.contains(name) }
    func attribute(_ name: String) -> String? { attributes[name] ?? nil }
}

let noTriggers = DriverContext(triggers: [])

/// The driver of this name in the table.
private func driver(_ name: String) -> any SensorDriver {
    SensorDrivers.table.first { $0.name == name }!
}

private func kind(_ match: DriverMatch?) -> KindCandidate? {
    if case .kind(let candidate) = match { candidate } else { nil }
}

/// Every driver's probe on devices made of attributes: what it takes, what it leaves, what it says.
@Suite("Driver probes")
struct DriverProbeTests {
    @Test("iio-accel: raw or buffered x, y and z; the mount matrices and location as the device gives them")
    func iioAccelerometer() throws {
        let raw = DictionaryDevice(
            "iio:device0",
            attributes: [
                "name": "bmi260", "in_accel_x_raw": "1", "in_accel_y_raw": "2", "in_accel_z_raw": "3",
                "in_accel_mount_matrix": "0, 1, 0; 1, 0, 0; 0, 0, 1", "location": "lid",
            ],
            properties: ["ACCEL_LOCATION": "display"])
        guard case .accelerometer(let candidate) = driver("iio-accel").probe(raw, context: noTriggers) else {
            Issue.record("an IIO device with x, y and z is an accelerometer")
            return
        }
        #expect(candidate.name == "bmi260" && candidate.hasRawChannels && !candidate.hasBufferChannels)
        #expect(candidate.udevLocation == "display" && candidate.sysfsLocation == "lid")
        #expect(candidate.sysfsMountMatrices.map(\.origin) == [.sysfsAccelMountMatrix])
        let buffered = DictionaryDevice(
            "iio:device1",
            attributes: [
                "scan_elements/in_accel_x_en": "0", "scan_elements/in_accel_y_en": "0",
                "scan_elements/in_accel_z_en": "0",
            ])
        guard case .accelerometer(let hub) = driver("iio-accel").probe(buffered, context: noTriggers) else {
            Issue.record("buffered channels make an accelerometer too")
            return
        }
        #expect(hub.hasBufferChannels && !hub.hasRawChannels)
        let twoAxes = DictionaryDevice("iio:device2", attributes: ["in_accel_x_raw": "1", "in_accel_y_raw": "2"])
        #expect(driver("iio-accel").probe(twoAxes, context: noTriggers) == nil, "two axes are no accelerometer")
        let trigger = DictionaryDevice("trigger0", attributes: ["in_accel_x_raw": "1"])
        #expect(driver("iio-accel").probe(trigger, context: noTriggers) == nil)
    }

    @Test("input-accel: an event node udev marks ID_INPUT_ACCELEROMETER, not a game controller's")
    func inputAccelerometer() {
        let parent = DictionaryDevice(
            "input5", subsystem: "input", attributes: ["name": "lis3lv02d"], properties: ["ACCEL_LOCATION": "base"])
        let device = DictionaryDevice(
            "event5", subsystem: "input", node: "/dev/input/event5", properties: ["ID_INPUT_ACCELEROMETER": "1"],
            parent: parent)
        guard case .accelerometer(let candidate) = driver("input-accel").probe(device, context: noTriggers) else {
            Issue.record("an accelerometer's event node")
            return
        }
        #expect(candidate.deviceID == "input:/dev/input/event5" && candidate.name == "lis3lv02d")
        #expect(candidate.interface == .input && candidate.udevLocation == "base")
        let pad = DictionaryDevice("input6", subsystem: "input", properties: ["ID_INPUT_JOYSTICK": "1"])
        let padMotion = DictionaryDevice(
            "event6", subsystem: "input", node: "/dev/input/event6", properties: ["ID_INPUT_ACCELEROMETER": "1"],
            parent: pad)
        #expect(driver("input-accel").probe(padMotion, context: noTriggers) == nil, "a game controller's")
        let keyboard = DictionaryDevice("event7", subsystem: "input", node: "/dev/input/event7")
        #expect(driver("input-accel").probe(keyboard, context: noTriggers) == nil)
    }

    @Test("iio-buffer-als: in_intensity_both in the buffer, with the device's trigger; without one it says so")
    func bufferedLight() throws {
        let device = DictionaryDevice(
            "iio:device3", attributes: ["name": "als", "scan_elements/in_intensity_both_en": "0"])
        let served = try #require(kind(driver("iio-buffer-als").probe(device, context: .init(triggers: ["als-dev3"]))))
        guard case .buffer(_, "intensity_both", "als-dev3", _) = served.plan else {
            Issue.record("read through the buffer, paced by als-dev3: \(String(describing: served.plan))")
            return
        }
        let unpaced = try #require(kind(driver("iio-buffer-als").probe(device, context: noTriggers)))
        #expect(unpaced.plan == nil && unpaced.description.problems.first?.contains("has no trigger") == true)
        #expect(driver("iio-buffer-als").probe(DictionaryDevice("iio:device4"), context: noTriggers) == nil)
    }

    @Test(
        "iio-poll-als: every light channel the rule lists, processed before raw, scale and offset, integration time"
    )
    func polledLight() throws {
        for channel in IIOPollLightDriver.lightChannels {
            let processed = DictionaryDevice("iio:device5", attributes: ["\(channel)_input": "12"])
            let served = try #require(kind(driver("iio-poll-als").probe(processed, context: noTriggers)), "\(channel)")
            #expect(served.description.reading.hasPrefix("\(channel)_input"), "\(served.description.reading)")
        }
        let raw = DictionaryDevice(
            "iio:device5",
            attributes: [
                "in_intensity_clear_raw": "100", "in_intensity_scale": "0.5", "in_intensity_offset": "2",
                "in_intensity_clear_integration_time": "0.2",
            ])
        let served = try #require(kind(driver("iio-poll-als").probe(raw, context: noTriggers)))
        guard case .attribute(let path, var conversion, let interval) = served.plan else {
            Issue.record("polled from its attribute")
            return
        }
        #expect(path.hasSuffix("/in_intensity_clear_raw") && interval == 0.2)
        #expect(try conversion.reading(from: "100\n").get() == .light(level: 51, unit: .lux))
        let badScale = DictionaryDevice(
            "iio:device5", attributes: ["in_illuminance_raw": "1", "in_illuminance_scale": "-2"])
        let refused = try #require(kind(driver("iio-poll-als").probe(badScale, context: noTriggers)))
        #expect(
            refused.description.problems == ["iio:device5 (iio:device5): light scale -2.0 is not positive; 1 is used"])
        #expect(driver("iio-poll-als").probe(DictionaryDevice("iio:device6"), context: noTriggers) == nil)
    }

    @Test("hwmon-als: applesmc's light attribute")
    func hwmonLight() throws {
        let device = DictionaryDevice("applesmc.768", subsystem: "platform", attributes: ["light": "(10,20)"])
        let served = try #require(kind(driver("hwmon-als").probe(device, context: noTriggers)))
        #expect(served.description.identifier == "platform:applesmc.768" && served.description.unit == .vendor)
        #expect(driver("hwmon-als").probe(DictionaryDevice("hwmon0", subsystem: "hwmon"), context: noTriggers) == nil)
    }

    @Test("iio-poll-proximity: in_proximity_raw with a near level from hwdb first, then the driver; none, none served")
    func polledProximity() throws {
        let device = DictionaryDevice(
            "iio:device7", attributes: ["in_proximity_raw": "5", "in_proximity_nearlevel": "200"],
            properties: ["PROXIMITY_NEAR_LEVEL": "150"])
        let served = try #require(kind(driver("iio-poll-proximity").probe(device, context: noTriggers)))
        #expect(served.plan != nil && served.description.problems.isEmpty)
        let badLevel = DictionaryDevice(
            "iio:device7", attributes: ["in_proximity0_raw": "5", "in_proximity_nearlevel": "zero"])
        let unserved = try #require(kind(driver("iio-poll-proximity").probe(badLevel, context: noTriggers)))
        #expect(unserved.plan == nil)
        #expect(unserved.description.problems.first?.contains(#"near level "zero""#) == true)
        #expect(driver("iio-poll-proximity").probe(DictionaryDevice("iio:device8"), context: noTriggers) == nil)
        // An HID hub's presence sensor (hid-sensor-prox) has no near level: 1 is someone there, 0 nobody.
        let presence = DictionaryDevice("iio:device9", attributes: ["name": "prox", "in_proximity_raw": "1"])
        let hid = try #require(kind(driver("iio-poll-proximity").probe(presence, context: noTriggers)))
        #expect(hid.plan != nil && hid.description.nearLevel == 0.5)
    }

    @Test("input-proximity: an event node whose parent has SW_FRONT_PROXIMITY (bit 11)")
    func inputProximity() throws {
        let parent = DictionaryDevice("input9", subsystem: "input", attributes: ["capabilities/sw": "800"])
        let device = DictionaryDevice("event9", subsystem: "input", node: "/dev/input/event9", parent: parent)
        let served = try #require(kind(driver("input-proximity").probe(device, context: noTriggers)))
        guard case .evdevSwitch("/dev/input/event9", 0x0b) = served.plan else {
            Issue.record("read as the switch")
            return
        }
        let lid = DictionaryDevice("input10", subsystem: "input", attributes: ["capabilities/sw": "1"])
        let lidNode = DictionaryDevice("event10", subsystem: "input", node: "/dev/input/event10", parent: lid)
        #expect(driver("input-proximity").probe(lidNode, context: noTriggers) == nil)
    }

    @Test("iio-buffer-compass: the tilt-compensated heading in the buffer")
    func compass() throws {
        let device = DictionaryDevice(
            "iio:device11",
            attributes: ["name": "magn_3d", "scan_elements/in_rot_from_north_magnetic_tilt_comp_en": "0"])
        let served = try #require(
            kind(driver("iio-buffer-compass").probe(device, context: .init(triggers: ["magn_3d-dev11"]))))
        #expect(served.description.kind == "compass" && served.plan != nil)
        #expect(driver("iio-buffer-compass").probe(DictionaryDevice("iio:device12"), context: noTriggers) == nil)
    }

    @Test("iio-poll-hinge: in_angl_raw in degrees from cros-ec-lid-angle, in_angl0_raw in radians otherwise")
    func hingeAngle() {
        let cros = DictionaryDevice("iio:device13", attributes: ["name": "cros-ec-lid-angle", "in_angl_raw": "90"])
        guard case .hingeAngle(let channel) = driver("iio-poll-hinge").probe(cros, context: noTriggers) else {
            Issue.record("a lid angle")
            return
        }
        #expect(channel.reportsDegrees && channel.path.hasSuffix("/in_angl_raw") && channel.scale == 1)
        let hid = DictionaryDevice(
            "iio:device14", attributes: ["name": "hinge", "in_angl0_raw": "1", "in_angl_scale": "0.001"])
        guard case .hingeAngle(let hinge) = driver("iio-poll-hinge").probe(hid, context: noTriggers) else {
            Issue.record("Intel's HID hinge")
            return
        }
        #expect(!hinge.reportsDegrees && hinge.scale == 0.001)
        #expect(driver("iio-poll-hinge").probe(DictionaryDevice("iio:device15"), context: noTriggers) == nil)
    }

    @Test("input-lid-switch: an event node whose parent has SW_LID (bit 0)")
    func lidSwitch() {
        let parent = DictionaryDevice(
            "input0", subsystem: "input", attributes: ["name": "Lid Switch", "capabilities/sw": "1"])
        let device = DictionaryDevice("event0", subsystem: "input", node: "/dev/input/event0", parent: parent)
        guard case .lidSwitch(let lid) = driver("input-lid-switch").probe(device, context: noTriggers) else {
            Issue.record("a lid switch")
            return
        }
        #expect(
            lid == LidSwitchDevice(name: "Lid Switch", node: "/dev/input/event0", syspath: "/sys/devices/test/event0"))
        let tabletOnly = DictionaryDevice("input1", subsystem: "input", attributes: ["capabilities/sw": "2"])
        let tabletNode = DictionaryDevice("event1", subsystem: "input", node: "/dev/input/event1", parent: tabletOnly)
        #expect(driver("input-lid-switch").probe(tabletNode, context: noTriggers) == nil)
    }

    @Test("a gyroscope of its own: scale, offset and its matrix; an IMU's gyroscope is its accelerometer's")
    func gyroscope() throws {
        let attributes: [String: String?] = [
            "name": "gyro_3d", "in_anglvel_x_raw": "10", "in_anglvel_y_raw": "-20", "in_anglvel_z_raw": "30",
            "in_anglvel_scale": "0.001", "in_anglvel_z_offset": "2",
            "in_anglvel_mount_matrix": "1, 0, 0; 0, 1, 0; 0, 0, 1",
        ]
        let properties = ["GYRO_MOUNT_MATRIX": "0, 1, 0; -1, 0, 0; 0, 0, 1"]
        let hub = DictionaryDevice("iio:device5", attributes: attributes, properties: properties)
        guard case .gyroscope(let found)? = driver("iio-poll-gyro").probe(hub, context: noTriggers) else {
            Issue.record("not recognised")
            return
        }
        #expect(found.name == "gyro_3d" && found.mountMatrixOrigin == "udev GYRO_MOUNT_MATRIX")
        #expect(found.mountMatrix == (try MountMatrix(parsing: "0, 1, 0; -1, 0, 0; 0, 0, 1")))
        #expect(found.rate(raw: [10, -20, 30]) == Vector3(0.01, -0.02, 0.032))
        #expect(found.paths.last == "/sys/devices/test/iio:device5/in_anglvel_z_raw")
        #expect(found.bufferTrigger == nil, "no scan elements: polled")
        // With its channels as scan elements and its trigger (gyro_3d-dev5), it is read from its buffer;
        // without a trigger to pace it, polled.
        let scanned = DictionaryDevice(
            "iio:device5",
            attributes: attributes.merging(["x", "y", "z"].map { ("scan_elements/in_anglvel_\($0)_en", "0") }) { $1 },
            properties: properties)
        guard
            case .gyroscope(let buffered)? = driver("iio-poll-gyro").probe(
                scanned, context: DriverContext(triggers: ["accel_3d-dev4", "gyro_3d-dev5"]))
        else {
            Issue.record("not recognised with scan elements")
            return
        }
        #expect(buffered.bufferTrigger == "gyro_3d-dev5")
        if case .gyroscope(let unpaced)? = driver("iio-poll-gyro").probe(scanned, context: noTriggers) {
            #expect(unpaced.bufferTrigger == nil)
        }
        let imu = DictionaryDevice(
            "iio:device0",
            attributes: [
                "in_accel_x_raw": "0", "in_anglvel_x_raw": "1", "in_anglvel_y_raw": "2", "in_anglvel_z_raw": "3",
            ])
        #expect(driver("iio-poll-gyro").probe(imu, context: noTriggers) == nil)
    }

    /// One device each driver of the table must recognise; a driver added to the table without
    /// one here fails ``everyDriverProbed()``.
    static func recognised() -> [String: DictionaryDevice] {
        let switches = { (bits: String) in
            DictionaryDevice(
                "event3", subsystem: "input", node: "/dev/input/event3",
                parent: DictionaryDevice("input3", subsystem: "input", attributes: ["capabilities/sw": bits]))
        }
        return [
            "iio-accel": DictionaryDevice(
                "iio:device0", attributes: ["in_accel_x_raw": "0", "in_accel_y_raw": "0", "in_accel_z_raw": "0"]),
            "input-accel": DictionaryDevice(
                "event2", subsystem: "input", node: "/dev/input/event2", properties: ["ID_INPUT_ACCELEROMETER": "1"]),
            "iio-buffer-als": DictionaryDevice("iio:device1", attributes: ["scan_elements/in_intensity_both_en": "0"]),
            "iio-poll-als": DictionaryDevice("iio:device1", attributes: ["in_illuminance_raw": "1"]),
            "hwmon-als": DictionaryDevice("applesmc.768", subsystem: "platform", attributes: ["light": "(1,2)"]),
            "iio-poll-proximity": DictionaryDevice("iio:device2", attributes: ["in_proximity_raw": "1"]),
            "input-proximity": switches("800"),
            "iio-buffer-compass": DictionaryDevice(
                "iio:device3", attributes: ["scan_elements/in_rot_from_north_magnetic_tilt_comp_en": "0"]),
            "iio-poll-hinge": DictionaryDevice("iio:device4", attributes: ["in_angl_raw": "90"]),
            "input-lid-switch": switches("1"),
            "iio-poll-gyro": DictionaryDevice(
                "iio:device5",
                attributes: [
                    "name": "gyro_3d", "in_anglvel_x_raw": "1", "in_anglvel_y_raw": "2", "in_anglvel_z_raw": "3",
                ]),
        ]
    }

    @Test("every driver of the table recognises a device of its own, and no device of another target")
    func everyDriverProbed() throws {
        let devices = Self.recognised()
        for driver in SensorDrivers.table {
            let device = try #require(devices[driver.name], "\(driver.name) has no device in recognised()")
            #expect(driver.probe(device, context: noTriggers) != nil, "\(driver.name)")
            for other in SensorDrivers.table where other.target != driver.target {
                #expect(other.probe(device, context: noTriggers) == nil, "\(other.name) takes \(driver.name)'s device")
            }
        }
    }
}
