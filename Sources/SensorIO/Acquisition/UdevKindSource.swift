import CUInput
import Dispatch
import OrientationCore
import SensorCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A light, proximity or compass sensor found through udev, as a ``KindSensorSource``: one per kind.
///
/// All state lives on one serial queue, which also reads an evdev switch's events; an attribute is
/// polled by a reader thread of its own while claimed (``AttributePoller``). Udev monitors on the kind's
/// subsystems report hotplug: a removed sensor is reported unavailable, an added one is described
/// and, while claimed, read at once. Nothing is read while nobody claims the kind.
public final class UdevKindSource: KindSensorSource, Sendable {
    public let kind: SensorKind
    public let outlet = EventOutlet<KindSensorEvent>()
    private let queue: DispatchQueue
    /// Confined to `queue`: only code running there takes the lock, so it is never contended; it
    /// makes the confinement checked. Synchronization's Mutex, which may hold what is not Sendable
    /// (udev, dispatch sources); ThreadSanitizer sees the queue's ordering of every access.
    private let state = Mutex(State())

    private struct State {
        /// Set by ``start()``.
        var udev: Udev?
        var watch: UdevWatch?
        var current: KindCandidate?
        var reader: KindReader?
        var sampling = false
        var shutDown = false
        var announcedUnavailable: String?
    }

    /// Holds nothing until ``start()``.
    public init(kind: SensorKind) {
        self.kind = kind
        queue = DispatchQueue(label: "orientd.\(kind.rawValue)")
    }

    /// Watches for a sensor of the kind (a udev monitor) and reports what it finds; fails only when
    /// udev itself cannot be used, holding nothing then.
    public func start() throws(SensorStartError) {
        let result = queue.sync { () -> Result<Void, UdevError> in
            state.withLock { state in
                guard state.udev == nil, !state.shutDown else { return .success(()) }
                do throws(UdevError) {
                    let udev = try Udev()
                    state.watch = try UdevWatch(
                        udev: udev, subsystems: KindDiscovery.subsystems(for: kind), queue: queue
                    ) { [weak self] monitor in
                        self?.handleUdevEvents(monitor)
                    }
                    state.udev = udev
                } catch {
                    return .failure(error)
                }
                locate(&state)
                return .success(())
            }
        }
        if case .failure(let error) = result {
            throw SensorStartError("cannot watch for the \(kind): \(error)")
        }
    }

    deinit { shutdown() }

    public func startSampling() {
        queue.async { [self] in
            state.withLock { state in
                guard state.udev != nil, !state.shutDown, !state.sampling else { return }
                state.sampling = true
                startReading(&state)
            }
        }
    }

    public func stopSampling() {
        queue.async { [self] in
            state.withLock { state in
                state.sampling = false
                state.reader?.stop()
                state.reader = nil
            }
        }
    }

    public func shutdown() {
        let first = queue.sync { () -> Bool in
            state.withLock { state in
                guard !state.shutDown else { return false }
                state.shutDown = true
                state.sampling = false
                state.reader?.stop()
                state.reader = nil
                state.watch?.cancel()
                state.watch = nil
                state.udev = nil
                return true
            }
        }
        if first { outlet.finish() }
    }

    // MARK: - Finding the sensor (on `queue`, under the lock)

    private func locate(_ state: inout State) {
        guard !state.shutDown, let udev = state.udev else { return }
        let candidates = KindDiscovery.candidates(for: kind, udev: udev)
        guard let chosen = candidates.first(where: { $0.plan != nil }) else {
            if state.current != nil {
                state.reader?.stop()
                state.reader = nil
                state.current = nil
            }
            // A sensor that cannot be served says why, once (with the absence), however often udev speaks.
            let problems = candidates.flatMap(\.description.problems)
            reportUnavailable(
                candidates.isEmpty
                    ? "no \(kind) found" : "no \(kind) that can be read: \(problems.joined(separator: "; "))",
                &state)
            return
        }
        if let current = state.current, current.description == chosen.description { return }
        state.reader?.stop()
        state.reader = nil
        state.current = chosen
        state.announcedUnavailable = nil
        outlet.emit(.available(chosen.description))
        if state.sampling { startReading(&state) }
    }

    private func reportUnavailable(_ reason: String, _ state: inout State) {
        guard state.announcedUnavailable == nil else { return }
        state.announcedUnavailable = reason
        outlet.emit(.unavailable(reason: reason))
    }

    /// On `queue` (the udev watch's handler).
    private func handleUdevEvents(_ monitor: UdevMonitor) {
        state.withLock { state in
            guard !state.shutDown else { return }
            var changed = false
            while let device = monitor.receive() {
                if device.action == "remove", let current = state.current,
                    current.syspath == device.syspath || current.syspath.hasPrefix(device.syspath + "/")
                {
                    state.reader?.stop()
                    state.reader = nil
                    state.current = nil
                    reportUnavailable(
                        "\(current.description.identifier) (\(current.description.name)) was removed", &state)
                }
                changed = true
            }
            if changed { locate(&state) }
        }
    }

    // MARK: - Reading (on `queue`, under the lock)

    private func startReading(_ state: inout State) {
        guard state.sampling, state.reader == nil, let current = state.current, let plan = current.plan else { return }
        let device = current.description.identifier
        let emit: @Sendable (KindSensorEvent) -> Void = { [outlet] in outlet.emit($0) }
        switch plan {
        case .attribute(let path, let conversion, let interval):
            state.reader = AttributePoller(
                path: path, conversion: conversion, interval: interval, device: device, emit: emit)
        case .evdevSwitch(let node, let code):
            state.reader = EvdevSwitchReader(
                node: node, code: code, device: device, queue: queue, emit: emit,
                lost: { [weak self] reason in
                    self?.readerLost(reason)
                })
        case .buffer(let deviceID, let channel, let trigger, let conversion):
            state.reader = BufferedChannelReader(
                deviceID: deviceID, channel: channel, trigger: trigger, conversion: conversion, emit: emit,
                lost: { [weak self, queue] reason in
                    queue.async { [weak self] in self?.readerLost(reason) }
                })
        }
    }

    /// An evdev device vanished under the reader: unavailable until udev finds one again. On `queue`.
    private func readerLost(_ reason: String) {
        state.withLock { state in
            guard let current = state.current else { return }
            state.reader?.stop()
            state.reader = nil
            state.current = nil
            reportUnavailable(
                "\(current.description.identifier) (\(current.description.name)) lost: \(reason)", &state)
        }
    }
}

/// Reads a sensor while it is claimed.
protocol KindReader: AnyObject {
    func stop()
}

/// An attribute read every `interval` seconds on a thread of its own (the first read at once), its
/// text converted to a reading; faults reported once per episode.
///
/// Why a thread that sleeps in `poll()` and not a libdispatch timer: each firing of a dispatch timer
/// woke libdispatch's manager thread and a worker besides the read, three wake-ups per reading
/// (measured with light claimed at rest, docs/benchmarks.md); the thread wakes once per reading, as
/// the accelerometer's poll loop does. Its mutable state (a ``Poll``) is the thread's alone.
final class AttributePoller: KindReader, Sendable {
    private let stopper = Wakeup()
    private let thread: WorkerThread

    init(
        path: String, conversion: any AttributeConversion, interval: Double, device: String,
        emit: @escaping @Sendable (KindSensorEvent) -> Void
    ) {
        thread = WorkerThread(name: conversion.readerName) { [stopper] in
            var poll = Poll(path: path, conversion: conversion, device: device, emit: emit)
            var due = MonotonicClock.now()
            repeat {
                poll.poll()
                due += interval
                if due < MonotonicClock.now() { due = MonotonicClock.now() + interval }  // late: no burst to catch up
            } while stopper.wait(timeout: due - MonotonicClock.now()) != .woken
        }
    }

    /// Ends the thread (after a read in progress).
    func stop() {
        stopper.signal()
        thread.join()
    }

    /// What the thread reads and remembers between reads.
    fileprivate struct Poll {
        let path: String
        var conversion: any AttributeConversion
        let device: String
        let emit: @Sendable (KindSensorEvent) -> Void
        var faults = FaultTracker()
        /// The last reading passed on: the same value again is no news, and passing it on would wake
        /// the daemon's event loop at every poll of a sensor that does not change.
        var lastReading: SensorReading?

        init(
            path: String, conversion: any AttributeConversion, device: String,
            emit: @escaping @Sendable (KindSensorEvent) -> Void
        ) {
            self.path = path
            self.conversion = conversion
            self.device = device
            self.emit = emit
        }
    }
}

extension AttributePoller.Poll {
    private var attribute: String { String(path.split(separator: "/").last ?? "") }

    mutating func poll() {
        let text: String
        switch SysfsText.read(path) {
        case .success(let read): text = read
        case .failure(let error):
            if faults.fault(.readFailed) {
                emit(.fault(SensorFault(kind: .readFailed, device: device, detail: "\(attribute): \(error)")))
            }
            return
        }
        if faults.success(.readFailed) { emit(.recovered(.readFailed, device: device)) }
        switch conversion.reading(from: text) {
        case .success(let reading):
            if faults.success(.badValue) { emit(.recovered(.badValue, device: device)) }
            guard reading != lastReading else { return }
            lastReading = reading
            emit(.reading(reading, time: MonotonicClock.now()))
        case .failure(let problem):
            if faults.fault(.badValue) {
                emit(.fault(SensorFault(kind: .badValue, device: device, detail: "\(attribute) \(problem)")))
            }
        }
    }
}

/// An evdev switch read as events: its state at start (EVIOCGSW) and again after each event of
/// it, as iio-sensor-proxy does (the state, not the event's value, is the truth after a dropped
/// event). A device that vanishes ends the reader through `lost`.
final class EvdevSwitchReader: KindReader {
    private let descriptor: Int32
    private let code: UInt16
    private let emit: @Sendable (KindSensorEvent) -> Void
    private var source: (any DispatchSourceRead)?
    private var pending: [UInt8] = []
    private var faults = FaultTracker()
    private let device: String

    init(
        node: String, code: UInt16, device: String, queue: DispatchQueue,
        emit: @escaping @Sendable (KindSensorEvent) -> Void,
        lost: @escaping @Sendable (String) -> Void
    ) {
        self.code = code
        self.emit = emit
        self.device = device
        descriptor = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = "\(node): \(Errno.name(errno))"
            queue.async { lost(reason) }
            return
        }
        reportState()
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in
            guard let self else { return }
            if let reason = readEvents() { lost(reason) }
        }
        source.setCancelHandler { [descriptor] in close(descriptor) }
        self.source = source
        source.resume()
    }

    func stop() {
        source?.cancel()
        source = nil
    }

    private func reportState() {
        var bits = [UInt8](repeating: 0, count: 8)
        let result = orientd_evdev_switch_state(descriptor, &bits, bits.count)
        guard result == 0 else {
            if faults.fault(.readFailed) {
                emit(.fault(SensorFault(kind: .readFailed, device: device, detail: "EVIOCGSW: \(Errno.name(result))")))
            }
            return
        }
        if faults.success(.readFailed) { emit(.recovered(.readFailed, device: device)) }
        emit(.reading(.proximity(near: bits[Int(code) / 8] & (1 << (code % 8)) != 0), time: MonotonicClock.now()))
    }

    /// Reads what is waiting; returns why the device is lost, if it is.
    private func readEvents() -> String? {
        var buffer = [UInt8](repeating: 0, count: 64 * orientd_input_event_size())
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else {
            if count < 0, errno == EAGAIN || errno == EINTR { return nil }
            return count == 0 ? "end of file" : Errno.name(errno)
        }
        pending += buffer[0..<count]
        let whole = pending.count - pending.count % orientd_input_event_size()
        let events = UInputTabletModeSwitch.decode(Array(pending[0..<whole]))
        pending.removeFirst(whole)
        if events.contains(where: { $0.type == InputEvent.switchEvent && $0.code == code }) { reportState() }
        return nil
    }
}

/// Reading a small sysfs (or any) text file whole.
enum SysfsText {
    static func read(_ path: String) -> Result<String, SysfsReadError> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(SysfsReadError(code: errno)) }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 256)
        var count: Int
        repeat {
            count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        } while count < 0 && errno == EINTR
        guard count >= 0 else { return .failure(SysfsReadError(code: errno)) }
        return .success(String(decoding: buffer[0..<count].prefix { $0 != 0 }, as: UTF8.self))
    }
}

struct SysfsReadError: Error, CustomStringConvertible {
    let code: Int32
    var description: String { "\(Errno.name(code)) (\(String(cString: strerror(code))))" }
}
