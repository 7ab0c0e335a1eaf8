import CUInput
import Dispatch
import OrientationCore
import SensorCore

#if canImport(Glibc)
import Glibc
#endif

/// A light, proximity or compass sensor found through udev, as a ``KindSensorSource``: one per kind,
/// on the one skeleton of watched sources (``WatchedSensorSource``). The driver table finds it;
/// it is read by its plan: an attribute polled by a thread of its own (``AttributePoller``), an
/// evdev switch's events on the source's queue, or an IIO buffer. Nothing is read while nobody
/// claims the kind.
public final class UdevKindSource: KindSensorSource, Sendable {
    public let kind: SensorKind
    private let watched: WatchedSensorSource<KindCandidate, KindSensorEvent>
    public var outlet: EventOutlet<KindSensorEvent> { watched.outlet }

    /// Holds nothing until ``start()``.
    public init(kind: SensorKind) {
        self.kind = kind
        watched = WatchedSensorSource(
            .init(
                name: kind.description, queueLabel: "orientd.\(kind.rawValue)",
                subsystems: KindDiscovery.subsystems(for: kind),
                locate: { udev in
                    let candidates = KindDiscovery.candidates(for: kind, udev: udev)
                    if let chosen = candidates.first(where: { $0.plan != nil }) { return .success(chosen) }
                    // A sensor that cannot be served says why (with the absence).
                    let problems = candidates.flatMap(\.description.problems)
                    return .failure(
                        .init(
                            reason: candidates.isEmpty
                                ? "no \(kind) found"
                                : "no \(kind) that can be read: \(problems.joined(separator: "; "))"))
                },
                same: { $0.description == $1.description }, syspath: \.syspath,
                identity: { "\($0.description.identifier) (\($0.description.name))" },
                available: { .available($0.description) }, unavailable: { .unavailable(reason: $0) },
                read: Self.read))
    }

    public func start() throws(SensorStartError) { try watched.start() }
    public func startSampling() { watched.startSampling() }
    public func stopSampling() { watched.stopSampling() }
    public func stopSampling(then stopped: @escaping @Sendable () -> Void) { watched.stopSampling(then: stopped) }
    public func shutdown() { watched.shutdown() }

    /// The reader the plan asks for.
    private static func read(
        _ found: KindCandidate, queue: DispatchQueue, emit: @escaping @Sendable (KindSensorEvent) -> Void,
        lost: @escaping @Sendable (String) -> Void
    ) -> (any SensorReader)? {
        guard let plan = found.plan else { return nil }
        let device = found.description.identifier
        switch plan {
        case .attribute(let path, let conversion, let interval):
            return AttributePoller(
                path: path, conversion: conversion, interval: interval, device: device,
                emit: { emit(KindSensorEvent($0)) })
        case .evdevSwitch(let node, let code):
            return EvdevSwitchReader(
                node: node, code: code, device: device, queue: queue,
                emit: { emit(KindSensorEvent($0.map { near in .proximity(near: near) })) }, lost: lost)
        case .buffer(let deviceID, let channel, let trigger, let conversion):
            return BufferedChannelReader(
                deviceID: deviceID, channel: channel, trigger: trigger, conversion: conversion, emit: emit,
                lost: lost)
        }
    }
}

extension KindSensorEvent {
    /// What a poller read, as a kind's event.
    init(_ polled: PolledEvent<SensorReading>) {
        switch polled {
        case .reading(let reading, let time): self = .reading(reading, time: time)
        case .fault(let fault): self = .fault(fault)
        case .recovered(let kind, let device): self = .recovered(kind, device: device)
        }
    }
}

/// What a reader reports (an ``AttributePoller``, an ``EvdevSwitchReader``).
enum PolledEvent<Reading: Sendable>: Sendable {
    case reading(Reading, time: Double)
    /// The first of an episode: the sensor cannot be read, or what it says is no reading.
    case fault(SensorFault)
    case recovered(SensorFault.Kind, device: String)

    /// The same event with its reading converted.
    func map<Other: Sendable>(_ convert: (Reading) -> Other) -> PolledEvent<Other> {
        switch self {
        case .reading(let reading, let time): .reading(convert(reading), time: time)
        case .fault(let fault): .fault(fault)
        case .recovered(let kind, let device): .recovered(kind, device: device)
        }
    }
}

/// An attribute read every `interval` seconds on a thread of its own (the first read at once), its
/// text converted to a reading; faults reported once per episode.
///
/// Why a thread that sleeps in `poll()` and not a libdispatch timer: each firing of a dispatch timer
/// woke libdispatch's manager thread and a worker besides the read, three wake-ups per reading
/// (measured with light claimed at rest, docs/benchmarks.md); the thread wakes once per reading, as
/// the accelerometer's poll loop does. Its mutable state (a ``Poll``) is the thread's alone.
final class AttributePoller: SensorReader, Sendable {
    private let stopper = Wakeup()
    private let thread: WorkerThread

    /// - Parameter repeats: pass on a reading equal to the last one too (a hinge angle, whose
    ///   staleness is judged by its readings); otherwise only changes are news.
    init<Conversion: AttributeConversion>(
        path: String, conversion: Conversion, interval: Double, device: String, repeats: Bool = false,
        emit: @escaping @Sendable (PolledEvent<Conversion.Reading>) -> Void
    ) {
        thread = WorkerThread(name: conversion.readerName) { [stopper] in
            var poll = Poll(path: path, conversion: conversion, device: device, repeats: repeats, emit: emit)
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
    fileprivate struct Poll<Conversion: AttributeConversion> {
        let path: String
        var conversion: Conversion
        let device: String
        let repeats: Bool
        let emit: @Sendable (PolledEvent<Conversion.Reading>) -> Void
        var faults = FaultTracker()
        /// The last reading passed on: the same value again is no news, and passing it on would wake
        /// the daemon's event loop at every poll of a sensor that does not change.
        var lastReading: Conversion.Reading?
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
            guard repeats || reading != lastReading else { return }
            lastReading = reading
            emit(.reading(reading, time: MonotonicClock.now()))
        case .failure(let problem):
            if faults.fault(.badValue) {
                emit(.fault(SensorFault(kind: .badValue, device: device, detail: "\(attribute) \(problem)")))
            }
        }
    }
}

/// An evdev switch (SW_FRONT_PROXIMITY, SW_LID) read as events, on or off: its state at start
/// (EVIOCGSW), then each event's value; after the kernel dropped events (SYN_DROPPED) the events
/// up to the next SYN_REPORT are ignored and the state is read again, as the evdev protocol says.
/// A device that vanishes ends the reader through `lost`.
final class EvdevSwitchReader: SensorReader {
    private let descriptor: Int32
    private let code: UInt16
    private let emit: @Sendable (PolledEvent<Bool>) -> Void
    private var source: (any DispatchSourceRead)?
    private var pending: [UInt8] = []
    /// Between SYN_DROPPED and the next SYN_REPORT.
    private var resynchronising = false
    private var faults = FaultTracker()
    private let device: String

    init(
        node: String, code: UInt16, device: String, queue: DispatchQueue,
        emit: @escaping @Sendable (PolledEvent<Bool>) -> Void,
        lost: @escaping @Sendable (String) -> Void
    ) {
        self.code = code
        self.emit = emit
        self.device = device
        descriptor = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            lost("\(node): \(Errno.name(errno))")
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
        emit(.reading(bits[Int(code) / 8] & (1 << (code % 8)) != 0, time: MonotonicClock.now()))
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
        for event in events {
            if event.type == InputEvent.synchronization {
                if event.code == InputEvent.synDropped {
                    resynchronising = true
                } else if event.code == InputEvent.report, resynchronising {
                    // The evdev protocol: after SYN_DROPPED, events up to the next SYN_REPORT are
                    // stale; the state is read then instead.
                    resynchronising = false
                    reportState()
                }
            } else if !resynchronising, event.type == InputEvent.switchEvent, event.code == code {
                emit(.reading(event.value != 0, time: MonotonicClock.now()))
            }
        }
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

    /// Writes a sysfs attribute whole; the error, or nil.
    static func write(_ text: String, to path: String) -> IIOError? {
        let file = open(path, O_WRONLY | O_CLOEXEC)
        guard file >= 0 else { return IIOError("open(\(path))", code: errno) }
        defer { close(file) }
        let written = text.utf8CString.withUnsafeBufferPointer { Glibc.write(file, $0.baseAddress, $0.count - 1) }
        return written == text.utf8.count ? nil : IIOError("write(\(path))", code: written < 0 ? errno : EIO)
    }
}

struct SysfsReadError: Error, CustomStringConvertible {
    let code: Int32
    var description: String { "\(Errno.name(code)) (\(String(cString: strerror(code))))" }
}
