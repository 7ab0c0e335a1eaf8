import ArgumentParser
import OrientationCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `orientd replay TRACE.csv`: the daemon's detection pipeline over a recorded trace.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run the detection pipeline over a trace file and print each orientation change.",
        discussion: """
            TRACE is a CSV file with lines t,x,y,z (seconds; m/s² in the sensor frame, gravity-pointing) \
            and an optional header line "t,x,y,z"; "-" reads standard input. Each change is printed as \
            one JSON object per line: {"t": <trace seconds>, "orientation": "<DeviceOrientation>"}.

            A convertible's trace has lines t,location,x,y,z (location display or base, both readings \
            with their mount matrices applied; --mount-matrix applies to the display's too). Besides the \
            display's orientation it prints {"t": …, "tabletMode": true|false} on each mode change and \
            {"t": …, "hinge": <degrees>|null} when the hinge angle moves by half a degree or becomes \
            unknown (docs/convertibles.md).

            By default the trace runs as fast as possible; --speed 1 replays it in real time.

            Exit status: 0 on success, 64 for bad options, 65 for a malformed trace (file and line are \
            named), 66 when the trace cannot be opened.

            Detector parameters (defaults):
            \(DetectorOptions.parameterHelp)
            """
    )

    @Argument(help: ArgumentHelp("The trace to replay (CSV t,x,y,z), or - for standard input.", valueName: "trace"))
    var trace: String

    @Option(
        name: .customLong("mount-matrix"),
        help: ArgumentHelp(
            "Sensor-to-display matrix, rows separated by ';' (device = M · raw). Default: identity.",
            valueName: "a, b, c; d, e, f; g, h, i"
        )
    )
    var mountMatrixText: String?

    @Option(
        help: ArgumentHelp(
            "Replay speed: 1 is real time, 2 twice as fast; 0 (default) is as fast as possible.", valueName: "factor"))
    var speed: Double = 0

    @OptionGroup var detector: DetectorOptions

    func validate() throws {
        guard speed.isFinite, speed >= 0 else { throw ValidationError("--speed must be a number ≥ 0, got \(speed)") }
        if let mountMatrixText {
            do {
                _ = try MountMatrix(parsing: mountMatrixText)
            } catch {
                throw ValidationError("--mount-matrix: \(error.description)")
            }
        }
        _ = try detector.configuration()
    }

    func run() async throws {
        let mountMatrix = try mountMatrixText.map { try MountMatrix(parsing: $0) } ?? .identity
        var pipeline = OrientationPipeline(mountMatrix: mountMatrix, configuration: try detector.configuration())
        let input: TraceInput
        do {
            input = try TraceInput(path: trace)
        } catch {
            printError("orientd replay: \(error)")
            throw ExitCode(66)
        }
        let pacer = speed > 0 ? ReplayPacer(speed: speed) : nil
        // Created by the first line that names a location: a convertible's two-sensor trace.
        var hinge: HingeDetector?
        var lineNumber = 0
        while let line = input.readLine() {
            lineNumber += 1
            let parsed: (time: Double, location: SensorLocation, reading: Vector3)?
            do {
                parsed = try TraceFormat.parseLocated(line: line, lineNumber: lineNumber)
            } catch {
                printError(
                    """
                    orientd replay: \(input.displayName):\(error.line): \(error.problem): \
                    \"\(error.text.prefix(120))\"
                    """
                )
                throw ExitCode(65)
            }
            guard let (time, location, reading) = parsed else { continue }
            await pacer?.wait(until: time)
            if location == .base || hinge != nil {
                if hinge == nil { hinge = HingeDetector() }
                for event in hinge!.process(
                    time: time, location: location, reading: location == .display ? mountMatrix.apply(reading) : reading
                ) {
                    switch event {
                    case .angle(let degrees?): print(#"{"t": \#(time), "hinge": \#((degrees * 10).rounded() / 10)}"#)
                    case .angle(nil): print(#"{"t": \#(time), "hinge": null}"#)
                    case .mode(let mode): print(#"{"t": \#(time), "tabletMode": \#(mode == .tablet)}"#)
                    }
                }
            }
            if location == .display, let change = pipeline.process(time: time, reading: reading) {
                print(#"{"t": \#(change.time), "orientation": "\#(change.to.rawValue)"}"#)
            }
            if pacer != nil { fflush(nil) }  // live output even through a pipe
        }
        if let error = input.readError {
            printError("orientd replay: \(input.displayName): read failed: \(error)")
            throw ExitCode(66)
        }
    }
}

/// Sleeps so that trace time advances at `speed` times the wall clock, starting at the first sample.
final class ReplayPacer {
    private let speed: Double
    private let clock = ContinuousClock()
    private var origin: (trace: Double, wall: ContinuousClock.Instant)?

    init(speed: Double) {
        self.speed = speed
    }

    func wait(until traceTime: Double) async {
        guard let origin else {
            origin = (traceTime, clock.now)
            return
        }
        let offset = max(0, (traceTime - origin.trace) / speed)
        try? await Task.sleep(until: origin.wall.advanced(by: .seconds(offset)), clock: clock)
    }
}

/// Writes one line to standard error (file descriptor 2, unbuffered).
func printError(_ message: String) {
    let line = message + "\n"
    line.utf8CString.withUnsafeBufferPointer { buffer in
        _ = write(2, buffer.baseAddress, buffer.count - 1)
    }
}
