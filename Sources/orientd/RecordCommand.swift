import ArgumentParser
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import OrientationCore
import SensorCore
import SensorIO

/// `orientd record`: writes a sensor's samples as a corpus CSV trace.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record accelerometer samples as a trace (CSV t,x,y,z in m/s², mount matrix applied).",
        discussion: """
            The output has the corpus format that orientd replay and --sensor replay:FILE read: a header \
            "t,x,y,z", then one line per sample, t in seconds from the first sample, x, y, z in m/s² in \
            the display frame (gravity-pointing: upright portrait reads 0, -9.81, 0). Where the sensor \
            is an IMU whose gyroscope is read, the header is "t,x,y,z,gx,gy,gz" and each line carries \
            the rotation rate in rad/s about the same axes (counter-clockwise positive); the few lines \
            before the gyroscope has started have four fields.

            Recording stops after --duration seconds, at the end of a replayed or piped input, or on \
            Ctrl-C (SIGINT) or SIGTERM; the file is complete in every case. Progress, sensor changes and \
            faults are reported on standard error.

            Exit status: 0 success, 64 bad options, 66 a trace to replay cannot be read, 73 the output \
            cannot be written, 69 no sensor could be watched.
            """
    )

    @OptionGroup var sensorOptions: SensorOptions

    @Option(
        help: ArgumentHelp(
            "Stop after this many seconds (default: until interrupted or the input ends).", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp("Where to write the trace; - is standard output.", valueName: "file"))
    var output = "-"

    func validate() throws {
        if let duration, !(duration.isFinite && duration > 0) {
            throw ValidationError("--duration must be a number of seconds > 0")
        }
    }

    func run() async throws {
        let configuration = try sensorOptions.configuration()
        let sink: Int32
        if output == "-" {
            sink = STDOUT_FILENO
        } else {
            sink = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard sink >= 0 else {
                printError("orientd record: cannot write \(output): \(String(cString: strerror(errno)))")
                throw ExitCode(73)
            }
        }
        let source: any AccelerometerSource
        do {
            source = try SensorFactory.openSource(configuration)
        } catch {
            printError("orientd record: \(error)")
            if case .trace = error { throw ExitCode(66) }
            throw ExitCode(69)
        }

        // Ending: the requested duration, or a signal. Both shut the source down, which ends the loop.
        let signals = shutDownOnSignals(source)
        defer { signals.forEach { $0.cancel() } }
        let timer = duration.map { seconds in
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                source.shutdown()
            }
        }
        defer { timer?.cancel() }

        var writer = TraceWriter(sink: sink)
        var matrix = MountMatrix.identity
        var firstTime: Double?
        var count = 0
        var faultLog = FaultLogLimiter()
        source.startSampling()
        for await event in source.events {
            switch event {
            case .available(let description):
                matrix = description.mountMatrix
                if !writer.hasHeader { writer.writeHeader(gyroscope: description.readsGyroscope) }
                let mode = description.acquisition.map { "\($0.rawValue) mode, " } ?? ""
                let rate = description.samplingFrequency.map { "\(SamplingFrequencyChoice.text($0)) Hz, " } ?? ""
                let destination = output == "-" ? "standard output" : output
                printError(
                    "orientd record: \(description.identifier) (\(description.name)), \(mode)\(rate)"
                        + "mount matrix \(matrix.text) (\(description.mountMatrixOrigin.rawValue)) → \(destination)"
                )
                for problem in description.mountMatrixProblems { printError("orientd record: warning: \(problem)") }
            case .unavailable(let reason):
                printError(
                    """
                    orientd record: no sensor (\(reason)); waiting for \
                    one\(duration == nil ? " — Ctrl-C to stop" : "")
                    """
                )
            case .sample(let sample):
                let start = firstTime ?? sample.time
                firstTime = start
                if !writer.hasHeader { writer.writeHeader(gyroscope: sample.rotationRate != nil) }
                writer.write(
                    time: sample.time - start, reading: matrix.apply(sample.reading),
                    rotationRate: sample.rotationRate.map(matrix.applyToRotation))
                count += 1
            case .fault(let fault):
                if faultLog.logFault(fault.kind, at: MonotonicClock.now()) {
                    printError("orientd record: sensor fault: \(fault)")
                }
            case .recovered(let kind, let device):
                if faultLog.logRecovery(kind) { printError("orientd record: \(device): \(kind.rawValue) recovered") }
            case .note(let note):
                printError("orientd record: \(note)")
            case .ended:
                source.shutdown()
            }
        }
        writer.flush()
        if sink != STDOUT_FILENO { close(sink) }
        printError(
            """
            orientd record: wrote \(count) samples\(firstTime == nil ? "" : "") to \
            \(output == "-" ? "standard output" : output)
            """
        )
    }
}

/// SIGINT and SIGTERM shut `source` down, which ends the command's loop over its events with
/// everything written; cancel the returned sources when done.
func shutDownOnSignals(_ source: any AccelerometerSource) -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { signalNumber in
        signal(signalNumber, SIG_IGN)
        let signalSource = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        signalSource.setEventHandler { source.shutdown() }
        signalSource.resume()
        return signalSource
    }
}

/// CSV output in the corpus's number format (t to 5 decimals, m/s² to 4): line by line to a pipe or
/// terminal, so a reader sees samples live; in 4 KiB blocks to a regular file.
struct TraceWriter {
    let sink: Int32
    private let live: Bool
    private var pending = ""

    init(sink: Int32) {
        self.sink = sink
        var status = stat()
        live = fstat(sink, &status) != 0 || (status.st_mode & S_IFMT) != S_IFREG
    }

    private(set) var hasHeader = false

    /// The header of the form the sensor gives: with the gyroscope's columns when it is read.
    mutating func writeHeader(gyroscope: Bool = false) {
        pending += (gyroscope ? TraceFormat.gyroscopeHeader : TraceFormat.header) + "\n"
        hasHeader = true
        flush()
    }

    /// One line: `t,x,y,z`, or `t,x,y,z,gx,gy,gz` (rad/s to 5 decimals) with a rotation rate.
    mutating func write(time: Double, reading: Vector3, rotationRate: Vector3? = nil) {
        pending += withUnsafeTemporaryAllocation(of: CChar.self, capacity: 192) { buffer in
            if let rate = rotationRate {
                _ = withVaList([time, reading.x, reading.y, reading.z, rate.x, rate.y, rate.z]) {
                    vsnprintf(buffer.baseAddress, buffer.count, "%.5f,%.4f,%.4f,%.4f,%.5f,%.5f,%.5f\n", $0)
                }
            } else {
                _ = withVaList([time, reading.x, reading.y, reading.z]) {
                    vsnprintf(buffer.baseAddress, buffer.count, "%.5f,%.4f,%.4f,%.4f\n", $0)
                }
            }
            return String(cString: buffer.baseAddress!)
        }
        if live || pending.utf8.count >= 4096 { flush() }
    }

    mutating func flush() {
        guard !pending.isEmpty else { return }
        var bytes = Array(pending.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(sink, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { break }  // a closed pipe: the reader is gone
            bytes = bytes.dropFirst(written)
        }
        pending = ""
    }
}
