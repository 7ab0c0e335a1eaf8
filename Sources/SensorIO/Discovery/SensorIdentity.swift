import SensorCore

/// How udev's `60-sensor.rules` identifies a local IIO sensor for the hwdb: the nearest usb, i2c
/// or platform parent's `modalias`, the machine's DMI modalias and the device's `label`.
public enum SensorIdentityLookup {
    /// Why a sensor cannot be named in the hwdb.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The identity of the IIO device at `sysfsPath`.
    public static func identity(sysfsPath: String) throws(Failure) -> SensorHwdbEntry.Identity {
        guard let udev = try? Udev() else { throw Failure(description: "udev cannot be opened") }
        guard let device = udev.device(syspath: sysfsPath) else {
            throw Failure(description: "\(sysfsPath): no such device")
        }
        // The rule's SUBSYSTEMS=="usb|i2c|platform" selects the nearest such ancestor, and its
        // $attr{modalias} is that ancestor's (an IIO device has no modalias of its own).
        var ancestor = device.parent
        while let current = ancestor, !["usb", "i2c", "platform"].contains(current.subsystem ?? "") {
            ancestor = current.parent
        }
        guard let parent = ancestor else {
            throw Failure(
                description:
                    "\(sysfsPath): no usb, i2c or platform parent, so udev's sensor rules give it no hwdb lookup")
        }
        guard let modalias = parent.attribute("modalias"), !modalias.isEmpty else {
            throw Failure(description: "\(parent.syspath): no modalias attribute")
        }
        let dmi = udev.device(subsystem: "dmi", sysname: "id")?.attribute("modalias")
        let label = device.attribute("label").flatMap { $0.isEmpty ? nil : $0 }
        return SensorHwdbEntry.Identity(parentModalias: modalias, dmiModalias: dmi, label: label)
    }
}
