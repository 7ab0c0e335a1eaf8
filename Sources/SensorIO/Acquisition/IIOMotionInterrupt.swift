import CLinux
import SensorCore
#if canImport(Glibc)
import Glibc
#endif

/// An accelerometer's motion interrupt, armed for as long as this lives: its `events/` switches
/// written 1 (0 again in `deinit`) and the event descriptor from `IIO_GET_EVENT_FD_IOCTL`, which
/// becomes readable when the sensor reports motion (``MotionEvents``).
///
/// The device's node is opened only for the ioctl and closed at once: a node has one opener at a
/// time, and the event descriptor lives on without it.
final class IIOMotionInterrupt: Sendable {
    /// The event descriptor (non-blocking): readable when motion was reported.
    let descriptor: Int32
    let switches: MotionEvents.Switches
    private let directory: String

    /// Arms the interrupt of `deviceID`, or returns nil when its sysfs directory offers no motion
    /// event; throws when it offers one that cannot be armed.
    static func arm(
        deviceID: String, node: String, sysfsDirectory: String? = nil
    ) throws(IIOError) -> IIOMotionInterrupt? {
        let directory = sysfsDirectory ?? "/sys/bus/iio/devices/\(deviceID)"
        let present = MotionEvents.candidateEnables.filter { access("\(directory)/\($0)", F_OK) == 0 }
        guard let switches = MotionEvents.switches(among: present) else { return nil }
        let nodeDescriptor = open(node, O_RDONLY | O_CLOEXEC)
        guard nodeDescriptor >= 0 else { throw IIOError("open(\(node))", code: errno) }
        var descriptor: Int32 = -1
        let result = orientd_iio_event_descriptor(nodeDescriptor, &descriptor)
        let failure = errno
        close(nodeDescriptor)
        guard result == 0, descriptor >= 0 else {
            throw IIOError("IIO_GET_EVENT_FD_IOCTL(\(node))", code: result == 0 ? EBADF : failure)
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let interrupt = IIOMotionInterrupt(descriptor: descriptor, switches: switches, directory: directory)
        for enable in switches.enables {
            // deinit disarms what was armed
            if let error = SysfsText.write("1\n", to: "\(directory)/\(enable)") { throw error }
        }
        return interrupt
    }

    private init(descriptor: Int32, switches: MotionEvents.Switches, directory: String) {
        self.descriptor = descriptor
        self.switches = switches
        self.directory = directory
    }

    deinit {
        for enable in switches.enables { _ = SysfsText.write("0\n", to: "\(directory)/\(enable)") }
        close(descriptor)
    }

    enum Drained: Equatable {
        case motion, nothing
        /// The descriptor failed (the device went away): the interrupt is of no more use.
        case failed(Int32)
    }

    /// Reads every event queued: whether one of them was motion. Called before the device rests
    /// (to forget what was seen while it moved) and when the descriptor becomes readable.
    func drain() -> Drained {
        var outcome = Drained.nothing
        withUnsafeTemporaryAllocation(byteCount: 16 * MotionEvents.recordSize, alignment: 8) { buffer in
            while true {
                let count = read(descriptor, buffer.baseAddress, buffer.count)
                if count < 0, errno == EINTR { continue }
                if count < 0, errno == EAGAIN { return }
                guard count > 0 else { return outcome = .failed(count == 0 ? ENODEV : errno) }
                if MotionEvents.codes(in: UnsafeRawBufferPointer(rebasing: buffer[0..<count])).contains(
                    where: \.isMotion)
                {
                    outcome = .motion
                }
            }
        }
        return outcome
    }
}
