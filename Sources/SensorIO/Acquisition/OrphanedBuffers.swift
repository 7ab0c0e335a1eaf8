import SensorCore
#if canImport(Glibc)
import Glibc
#endif

/// IIO buffers left enabled by a process that ended without disabling them (killed, crashed): the
/// kernel keeps such a buffer capturing, and an HID hub powered and reporting, until someone writes
/// `buffer/enable` 0. A buffer is left over when it is enabled and nobody holds its device node open:
/// the kernel lets one process at a time open an IIO device node (EBUSY for the next), and a reader
/// holds it for as long as it reads. The unit runs `orientd release-buffers` after the daemon stops,
/// whatever the way (ExecStopPost), so a daemon that died leaves no buffer behind it.
public enum OrphanedBuffers {
    /// What was found for one enabled buffer.
    public struct Finding: Sendable, Equatable, CustomStringConvertible {
        public enum Outcome: Sendable, Equatable {
            case released
            /// Its node is open in another process: a live reader's, left alone.
            case inUse
            /// Its node could not be opened (or the attribute written) for another reason.
            case failed(String)
        }

        /// `iio:device0 (accel_3d)`.
        public let device: String
        public let outcome: Outcome

        public var description: String {
            switch outcome {
            case .released: "\(device): buffer left enabled by a process that ended: disabled"
            case .inUse: "\(device): buffer enabled and in use by another process: left alone"
            case .failed(let reason): "\(device): buffer enabled, not disabled: \(reason)"
            }
        }
    }

    /// Disables every IIO buffer that is enabled while nobody holds its device node; with
    /// `dryRun`, only says which it would. Fails only when udev cannot be read.
    public static func release(dryRun: Bool = false) throws(UdevError) -> [Finding] {
        let udev = try Udev()
        return try udev.devices(subsystem: "iio").compactMap { device -> Finding? in
            let enables = ["buffer/enable", "buffer0/enable"].filter {
                device.attribute($0)?.trimmingWhitespace() == "1"
            }
            guard !enables.isEmpty else { return nil }
            let name = device.attribute("name")?.trimmingWhitespace() ?? "?"
            let identity = "\(device.sysname) (\(name))"
            let node = device.deviceNode ?? "/dev/\(device.sysname)"
            let descriptor = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else {
                let code = errno
                return Finding(
                    device: identity,
                    outcome: code == EBUSY ? .inUse : .failed("open(\(node)): \(Errno.name(code))"))
            }
            defer { close(descriptor) }
            if dryRun { return Finding(device: identity, outcome: .released) }
            for enable in enables {
                if let error = SysfsText.write("0\n", to: "\(device.syspath)/\(enable)") {
                    return Finding(device: identity, outcome: .failed(error.description))
                }
            }
            return Finding(device: identity, outcome: .released)
        }
    }
}
