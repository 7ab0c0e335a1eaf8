import CUInput
import SensorCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A virtual input device with one switch, SW_TABLET_MODE, created through uinput: libinput (and
/// through it GNOME, KDE and wlroots compositors) treats it as a firmware's tablet-mode switch
/// (on-screen keyboard, keyboard and touchpad ignored in tablet mode). Owns its descriptor; the
/// device disappears when this goes.
public final class UInputTabletModeSwitch: InputEventWriter, Sendable {
    /// The name the device carries (`/proc/bus/input/devices`, `libinput list-devices`); also how
    /// orientd tells its own switch from the kernel's.
    public static let deviceName = "orientd tablet-mode switch"
    public let path: String
    private let descriptor: Int32

    /// Opens `path` (normally /dev/uinput) and creates the device.
    public init(path: String) throws(InputDeviceError) {
        self.path = path
        let fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw Self.error(path, "open", errno) }
        var step: UnsafePointer<CChar>?
        let failure = orientd_uinput_create_tablet_mode_switch(fd, Self.deviceName, &step)
        guard failure == 0 else {
            close(fd)
            throw Self.error(path, step.map { String(cString: $0) } ?? "create", failure)
        }
        descriptor = fd
    }

    deinit {
        _ = orientd_uinput_destroy(descriptor)
        close(descriptor)
    }

    public func write(_ events: [InputEvent]) throws(InputDeviceError) {
        let bytes = Self.encode(events)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw Self.error(path, "write", written < 0 ? errno : EIO) }
    }

    /// The events as the kernel's `struct input_event`s, on this machine's ABI.
    public static func encode(_ events: [InputEvent]) -> [UInt8] {
        let size = orientd_input_event_size()
        var bytes = [UInt8](repeating: 0, count: size * events.count)
        bytes.withUnsafeMutableBufferPointer { buffer in
            for (index, event) in events.enumerated() {
                orientd_input_event_encode(buffer.baseAddress! + index * size, event.type, event.code, event.value)
            }
        }
        return bytes
    }

    /// `struct input_event`s back into events (whole events only).
    public static func decode(_ bytes: [UInt8]) -> [InputEvent] {
        let size = orientd_input_event_size()
        return bytes.withUnsafeBufferPointer { buffer in
            stride(from: 0, to: buffer.count - size + 1, by: size).map { offset in
                var type: UInt16 = 0, code: UInt16 = 0, value: Int32 = 0
                orientd_input_event_decode(buffer.baseAddress! + offset, &type, &code, &value)
                return InputEvent(type: type, code: code, value: value)
            }
        }
    }

    private static func error(_ path: String, _ step: String, _ code: Int32) -> InputDeviceError {
        InputDeviceError(path: path, step: step, errno: code, reason: String(cString: strerror(code)))
    }

    /// Whether this process may write to `path` (auto creates the switch only then).
    public static func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }
}

/// Input devices the kernel already offers, found through udev.
public enum InputSwitches {
    /// Input devices (`/dev/input/eventN`) whose `capabilities/sw` bitmask has `code`, with their
    /// names; orientd's own tablet-mode switch is left out.
    public static func devices(with code: UInt16) -> [(name: String, node: String?)] {
        guard let udev = try? Udev(), let devices = try? udev.devices(subsystem: "input") else { return [] }
        return devices.compactMap { device in
            guard device.sysname.hasPrefix("event"), let parent = device.parent,
                let bits = parent.attribute("capabilities/sw"), hasBit(Int(code), inBitmask: bits)
            else { return nil }
            let name = parent.attribute("name") ?? device.sysname
            guard name != UInputTabletModeSwitch.deviceName else { return nil }
            return (name, device.deviceNode)
        }
    }

    /// Whether bit `bit` is set in a sysfs bitmask: hexadecimal words separated by spaces, the
    /// most significant first, each as wide as a C long ("1", "20000 0 0").
    static func hasBit(_ bit: Int, inBitmask text: String) -> Bool {
        let words = text.split(whereSeparator: \.isWhitespace).reversed().map { UInt64($0, radix: 16) }
        let width = MemoryLayout<Int>.size * 8
        let index = bit / width
        guard index < words.count, let word = words[index] else { return false }
        return word & (1 << UInt64(bit % width)) != 0
    }
}
