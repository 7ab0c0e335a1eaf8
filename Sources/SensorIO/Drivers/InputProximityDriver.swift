import OrientationCore
import SensorCore

/// Proximity as an evdev switch (iio-sensor-proxy's `input-proximity`): SW_FRONT_PROXIMITY.
struct InputProximityDriver: SensorDriver {
    let name = "input-proximity"
    let target = DriverTarget.kind(.proximity)
    let subsystems = ["input"]
    /// SW_FRONT_PROXIMITY is bit 11 of the switch bitmask: the third hex digit from the right is 8-f.
    let udevConditions = [
        #"KERNEL=="event*", ENV{ID_INPUT_SWITCH}=="1", ATTRS{capabilities/sw}=="*[89abcdef][0-9a-f][0-9a-f]""#
    ]

    /// SW_FRONT_PROXIMITY (linux/input-event-codes.h).
    static let frontProximitySwitch: UInt16 = 0x0b

    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch? {
        kindMatch(device).map(DriverMatch.kind)
    }

    private func kindMatch(_ device: some SensorDevice) -> KindCandidate? {
        guard let parent = device.parent, let bits = parent.attribute("capabilities/sw"),
            InputSwitches.hasBit(Int(Self.frontProximitySwitch), inBitmask: bits), let node = device.deviceNode
        else { return nil }
        let description = KindSensorDescription(
            kind: .proximity, identifier: "input:\(node)", name: parent.attribute("name") ?? device.sysname,
            acquisition: .evdev,
            sysfsPath: device.syspath, deviceNode: node, reading: "SW_FRONT_PROXIMITY (on: near)")
        return KindCandidate(
            description: description, plan: .evdevSwitch(node: node, code: Self.frontProximitySwitch),
            syspath: device.syspath)
    }
}
