import CUInput
import Dispatch
import SensorCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The lid switch (evdev SW_LID, the "Lid Switch" input device) of a convertible, read where the
/// daemon may: its state at start (EVIOCGSW) and every change after, reported as closed, open, or
/// nil when it becomes unreadable. Owns its descriptor and its queue; ``stop()`` ends both.
public final class LidSwitchMonitor: Sendable {
    public typealias Report = @Sendable (_ closed: Bool?) -> Void

    /// The device read, for the log: `Lid Switch (/dev/input/event0)`.
    public let device: String
    private let descriptor: Int32
    private let queue = DispatchQueue(label: "orientd.lid")
    /// Confined to `queue` once reading (set up by `init` before): only code running there takes
    /// the lock, so it is never contended (Synchronization's Mutex, which may hold the dispatch
    /// source; see ``UdevKindSource``).
    private let state = Mutex(State())

    private struct State {
        var source: (any DispatchSourceRead)?
        var pending: [UInt8] = []
    }

    /// Why no lid switch is read.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Opens the first lid switch the driver table finds (``LidSwitchDriver``) and reports its
    /// state now (when the driver answers EVIOCGSW) and on every change.
    public init(report: @escaping Report) throws(Unavailable) {
        let udev = try? Udev()
        guard let udev,
            let found = SensorDrivers.matches(for: .lidSwitch, udev: udev).lazy.compactMap({
                if case .lidSwitch(let device) = $0.match { device } else { nil }
            }).first
        else {
            throw Unavailable(description: "no input device reports a lid switch (SW_LID)")
        }
        let node = found.node
        device = "\(found.name) (\(node))"
        let fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw Unavailable(description: "\(node): \(String(cString: strerror(errno)))") }
        descriptor = fd
        var bits = [UInt8](repeating: 0, count: 8)
        if orientd_evdev_switch_state(fd, &bits, bits.count) == 0 { report(bits[0] & 1 != 0) }
        state.withLock { state in
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [weak self] in self?.readEvents(report) }
            state.source = source
            source.resume()
        }
    }

    deinit { close(descriptor) }

    /// Stops reading; no report after this returns.
    public func stop() {
        queue.sync {
            state.withLock { state in
                state.source?.cancel()
                state.source = nil
            }
        }
    }

    /// On `queue` (the source's handler).
    private func readEvents(_ report: Report) {
        state.withLock { readEvents(report, &$0) }
    }

    private func readEvents(_ report: Report, _ state: inout State) {
        var buffer = [UInt8](repeating: 0, count: 64 * orientd_input_event_size())
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else {
            if count < 0, errno == EAGAIN || errno == EINTR { return }
            // ENODEV: the device went away; end of file likewise.
            state.source?.cancel()
            state.source = nil
            report(nil)
            return
        }
        state.pending += buffer[0..<count]
        let whole = state.pending.count - state.pending.count % orientd_input_event_size()
        for event in UInputTabletModeSwitch.decode(Array(state.pending[0..<whole]))
        where event.type == InputEvent.switchEvent && event.code == InputEvent.lidSwitch {
            report(event.value != 0)
        }
        state.pending.removeFirst(whole)
    }
}
