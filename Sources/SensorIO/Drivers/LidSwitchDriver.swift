import SensorCore

/// A lid switch's input device, as the driver found it.
public struct LidSwitchDevice: Sendable, Hashable {
    /// `Lid Switch`.
    public var name: String
    /// `/dev/input/event0`.
    public var node: String
    /// The event node's syspath: its removal loses the switch.
    public var syspath: String
}

/// A convertible's lid switch (iio-sensor-proxy has no driver for it): an input event device whose
/// parent's `capabilities/sw` has SW_LID, read by ``EvdevLidSwitchSource``.
struct LidSwitchDriver: SensorDriver {
    let name = "input-lid-switch"
    let target = DriverTarget.lidSwitch
    let subsystems = ["input"]
    /// A lid switch alone is no reason to start (every laptop has one); its read ACL is the rule's
    /// switch line.
    let udevConditions: [String] = []

    func probe(_ device: some SensorDevice, context: DriverContext) -> DriverMatch? {
        guard device.sysname.hasPrefix("event"), let parent = device.parent, let node = device.deviceNode,
            let bits = parent.attribute("capabilities/sw"),
            InputSwitches.hasBit(Int(InputEvent.lidSwitch), inBitmask: bits)
        else { return nil }
        return .lidSwitch(
            LidSwitchDevice(name: parent.attribute("name") ?? device.sysname, node: node, syspath: device.syspath))
    }
}
