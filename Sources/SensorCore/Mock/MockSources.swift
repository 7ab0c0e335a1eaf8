import OrientationCore
import NIOConcurrencyHelpers

/// A recorded trace replayed in real time, or `speed` times faster: the mock sensor for demos and
/// tests. It goes through the same events and pipeline as a real one.
///
/// A trace is a corpus CSV (`t,x,y,z`, or `t,x,y,z,gx,gy,gz` with a gyroscope) or a convertible's
/// two-sensor trace (`t,location,x,y,z`); a source replays the rows of its ``SensorRole`` (the
/// display's: every row not of the base), so a daemon serving a two-sensor trace runs two of these,
/// one per sensor, as on a real convertible.
/// A base source of a trace without base rows reports its sensor unavailable and replays nothing.
///
/// Sample times are the host's monotonic clock at which each sample is due, so the spacing of the
/// trace is kept exactly; both sides count from the trace's first row, so two sources started
/// together stay in step. Stopping pauses the replay; starting again resumes where it stopped.
public final class TraceReplaySource: AccelerometerSource, Sendable {
    private let worker: SourceThread
    private let samples: [TraceRow]
    /// The trace's first time, over both sensors' rows.
    private let origin: Double
    private let speed: Double
    private let description: SensorDescription

    /// Reads the whole trace now, so a bad file is reported before anything runs.
    public init(
        path: String, speed: Double, mountMatrix: MountMatrix?, role: SensorRole = .display
    ) throws(TraceFileError) {
        let rows = try TraceFile.readLocated(path: path)
        samples = rows.filter { ($0.location == .base) == (role == .base) }
        origin = rows.map(\.time).min() ?? 0
        self.speed = speed
        var description = SensorDescription(
            identifier: role == .base ? "replay:\(path)#base" : "replay:\(path)", name: "trace replay",
            location: role == .base ? .base : (rows.contains { $0.location == .base } ? .display : .unknown),
            mountMatrix: mountMatrix ?? .identity, mountMatrixOrigin: mountMatrix == nil ? .identity : .configured,
            samplingFrequency: Self.rate(of: samples))
        if samples.contains(where: { $0.rotationRate != nil }) {
            description.gyroscope = "the trace's gx, gy, gz columns"
            description.readsGyroscope = true
        }
        self.description = description
        worker = SourceThread(name: samples.isEmpty ? nil : (role == .base ? "orientd-replay-b" : "orientd-replay"))
        guard !samples.isEmpty else {
            if role == .display {
                throw TraceFileError(path: path, line: nil, problem: "no display samples (every row is the base's)")
            }
            outlet.emit(.unavailable(reason: "\(path) has no base rows (not a two-sensor trace)"))
            return
        }
        outlet.emit(.available(description))
    }

    deinit { shutdown() }

    public var outlet: SensorEventOutlet { worker.outlet }
    private var control: SamplingSwitch { worker.control }
    public func start() throws(SensorStartError) { worker.start { [unowned self] in self.run() } }
    public func startSampling() { control.set(sampling: true) }
    public func stopSampling() { control.set(sampling: false) }
    public func shutdown() { worker.shutdown() }

    private func run() {
        var anchor: Double?  // monotonic time at which trace time `origin` is due
        var pausedAt: Double?
        var index = 0
        while index < samples.count {
            let (sampling, shutDown) = control.state
            if shutDown { return }
            guard sampling else {
                if pausedAt == nil, anchor != nil { pausedAt = MonotonicClock.now() }
                _ = control.wakeup.wait(timeout: nil)
                continue
            }
            let now = MonotonicClock.now()
            if let paused = pausedAt {
                anchor? += now - paused
                pausedAt = nil
            }
            if anchor == nil { anchor = now }
            let due = anchor! + (samples[index].time - origin) / speed
            if due > now {
                _ = control.wakeup.wait(timeout: due - now)
                continue
            }
            let row = samples[index]
            outlet.emit(.sample(SensorSample(time: due, reading: row.reading, rotationRate: row.rotationRate)))
            index += 1
        }
        outlet.emit(.ended)
    }

    static func rate(of samples: [TraceRow]) -> Double? {
        guard samples.count > 1, let first = samples.first, let last = samples.last, last.time > first.time else {
            return nil
        }
        return (Double(samples.count - 1) / (last.time - first.time) * 10).rounded() / 10
    }
}

/// CSV lines `t,x,y,z` (or `t,x,y,z,gx,gy,gz`) read live from standard input (or any descriptor):
/// for piping in data from another program. Times keep the spacing of `t`, anchored to the
/// monotonic clock at the first line.
/// A malformed line is reported as a fault and skipped; end of input ends the source.
public final class StandardInputSource: AccelerometerSource, Sendable {
    private let worker = SourceThread(name: "orientd-stdin")
    private let input: Int32

    public init(fileDescriptor: Int32 = 0, mountMatrix: MountMatrix?) {
        input = fileDescriptor
        description = SensorDescription(
            identifier: "stdin", name: "standard input", mountMatrix: mountMatrix ?? .identity,
            mountMatrixOrigin: mountMatrix == nil ? .identity : .configured)
        outlet.emit(.available(description))
    }

    /// What it said it is: the first line with gx, gy, gz says it again with a gyroscope, so the
    /// state shows one as the samples carry its rates.
    private let description: SensorDescription

    deinit { shutdown() }

    public var outlet: SensorEventOutlet { worker.outlet }
    private var control: SamplingSwitch { worker.control }
    public func start() throws(SensorStartError) { worker.start { [unowned self] in self.run() } }
    public func startSampling() { control.set(sampling: true) }
    public func stopSampling() { control.set(sampling: false) }
    public func shutdown() { worker.shutdown() }

    private func run() {
        var pending: [UInt8] = []
        var lineNumber = 0
        var anchor: (host: Double, trace: Double)?
        var saidGyroscope = false
        var faults = FaultTracker()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let (sampling, shutDown) = control.state
            if shutDown { return }
            // While not sampling, input is left unread: the writer waits instead of samples piling up.
            guard sampling else {
                _ = control.wakeup.wait(timeout: nil)
                continue
            }
            guard control.wakeup.wait(timeout: nil, other: input) == .readable else { continue }
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                outlet.emit(
                    .fault(
                        SensorFault(
                            kind: .readFailed, device: "stdin", detail: "read: \(String(cString: strerror(errno)))")))
                break
            }
            if count == 0 { break }
            pending.append(contentsOf: buffer[0..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                lineNumber += 1
                handle(
                    line: line, number: lineNumber, anchor: &anchor, faults: &faults, saidGyroscope: &saidGyroscope)
            }
        }
        if !pending.isEmpty {
            lineNumber += 1
            handle(
                line: String(decoding: pending, as: UTF8.self), number: lineNumber, anchor: &anchor, faults: &faults,
                saidGyroscope: &saidGyroscope)
        }
        outlet.emit(.ended)
    }

    private func handle(
        line: String, number: Int, anchor: inout (host: Double, trace: Double)?, faults: inout FaultTracker,
        saidGyroscope: inout Bool
    ) {
        do {
            guard let row = try TraceFormat.parse(line: line, lineNumber: number) else { return }
            if row.rotationRate != nil, !saidGyroscope {
                saidGyroscope = true
                var withGyroscope = description
                withGyroscope.gyroscope = "gx, gy, gz columns on standard input"
                withGyroscope.readsGyroscope = true
                outlet.emit(.available(withGyroscope))
            }
            let now = MonotonicClock.now()
            if anchor == nil { anchor = (now, row.time) }
            if faults.success(.badValue) { outlet.emit(.recovered(.badValue, device: "stdin")) }
            let time = anchor!.host + (row.time - anchor!.trace)
            outlet.emit(.sample(SensorSample(time: time, reading: row.reading, rotationRate: row.rotationRate)))
        } catch {
            if faults.fault(.badValue) {
                outlet.emit(.fault(SensorFault(kind: .badValue, device: "stdin", detail: error.description)))
            }
        }
    }
}

/// The worker thread of a mock source, which obeys a ``SamplingSwitch``, and the source's outlet.
/// The source names the thread (nil: nothing to run); ``start(_:)`` starts it with the source's
/// body, which returns when the switch says shut down (or the input ends).
final class SourceThread: Sendable {
    let outlet = SensorEventOutlet()
    let control = SamplingSwitch()
    private let name: String?
    /// Start and shutdown may come from different threads.
    private let thread = NIOLockedValueBox<WorkerThread?>(nil)

    init(name: String?) {
        self.name = name
    }

    func start(_ body: @escaping @Sendable () -> Void) {
        guard let name, !control.state.shutDown else { return }
        thread.withLockedValue { thread in
            if thread == nil { thread = WorkerThread(name: name, body) }
        }
    }

    func shutdown() {
        guard control.shutDown() else { return }
        thread.withLockedValue { $0 }?.join()
        thread.withLockedValue { $0 = nil }
        outlet.finish()
    }
}

/// The start/stop/shutdown switch a source's worker thread obeys: two flags under a lock, and a
/// wakeup that interrupts the worker's wait whenever they change.
final class SamplingSwitch: Sendable {
    /// A pthread lock, not Synchronization.Mutex, whose futex ThreadSanitizer cannot see on Linux.
    private let flags = NIOLockedValueBox((sampling: false, shutDown: false))
    let wakeup = Wakeup()

    var state: (sampling: Bool, shutDown: Bool) { flags.withLockedValue { $0 } }

    func set(sampling: Bool) {
        flags.withLockedValue { $0.sampling = sampling }
        wakeup.signal()
    }

    /// Sets the shutdown flag; true the first time only.
    func shutDown() -> Bool {
        let first = flags.withLockedValue { flags in
            defer { flags.shutDown = true }
            return !flags.shutDown
        }
        if first { wakeup.signal() }
        return first
    }
}

/// Reading a whole trace file.
public enum TraceFile {
    /// The rows of a corpus CSV file (either form); errors name the file and line.
    public static func read(path: String) throws(TraceFileError) -> [TraceRow] {
        try readLines(path: path) { line, number throws(TraceFormatError) in
            try TraceFormat.parse(line: line, lineNumber: number)
        }
    }

    /// The rows of a one- or two-sensor trace (`t,x,y,z` and `t,x,y,z,gx,gy,gz` rows are the
    /// display's).
    public static func readLocated(path: String) throws(TraceFileError) -> [TraceRow] {
        try readLines(path: path) { line, number throws(TraceFormatError) in
            try TraceFormat.parseLocated(line: line, lineNumber: number)
        }
    }

    private static func readLines<Row>(
        path: String, parse: (String, Int) throws(TraceFormatError) -> Row?
    ) throws(TraceFileError) -> [Row] {
        guard let file = fopen(path, "r") else {
            throw TraceFileError(path: path, line: nil, problem: "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var samples: [Row] = []
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        var number = 0
        while true {
            let length = getline(&line, &capacity, file)
            guard length >= 0, let line else { break }
            number += 1
            let text = String(decoding: UnsafeRawBufferPointer(start: line, count: length), as: UTF8.self)
            do {
                if let sample = try parse(text, number) { samples.append(sample) }
            } catch {
                throw TraceFileError(
                    path: path, line: number, problem: "\(error.problem): \"\(error.text.prefix(120))\"")
            }
        }
        if ferror(file) != 0 {
            throw TraceFileError(path: path, line: nil, problem: "read failed: \(String(cString: strerror(errno)))")
        }
        guard !samples.isEmpty else { throw TraceFileError(path: path, line: nil, problem: "no samples") }
        return samples
    }
}

/// A trace file that cannot be used: `FILE:LINE: problem`.
public struct TraceFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public let path: String
    public let line: Int?
    public let problem: String

    public var description: String { line.map { "\(path):\($0): \(problem)" } ?? "\(path): \(problem)" }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
