import ArgumentParser
import OrientationCore
import OrientationProtocol

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
            and an optional header line "t,x,y,z"; "-" reads standard input. With a gyroscope the lines \
            are t,x,y,z,gx,gy,gz (rad/s about the same axes, counter-clockwise positive), and detection \
            judges the fused gravity (docs/detection-log.md §18). Each change is printed as one JSON object \
            per line: {"t": <trace seconds>, "orientation": "<DeviceOrientation>"}; when the gyroscope \
            is judged failed, or working again, {"t": …, "gyroscope": "failed", "detail": "…"} or \
            {"t": …, "gyroscope": "working"} (docs/sensors.md, "Gyroscope").

            A convertible's trace has lines t,location,x,y,z (location display or base, both readings \
            with their mount matrices applied; --mount-matrix applies to the display's too). Besides the \
            display's orientation it prints {"t": …, "tabletMode": true|false} on each mode change and \
            {"t": …, "hinge": <degrees>|null} when the hinge angle moves by half a degree or becomes \
            unknown (docs/convertibles.md).

            By default the trace runs as fast as possible; --speed 1 replays it in real time.

            By default every sample of the trace reaches the detector. --pace reads the trace as the daemon \
            reads a polled sensor instead (docs/detection-log.md §16): the sensor holds its latest sample, and \
            it is read at --rate while the device moves (at --gyroscope-rate, 50 Hz, while a gyroscope in the \
            trace works: docs/detection-log.md §18) and at --held-rate (held in a hand) or --rest-rate \
            (lying still) at rest; "fixed" reads at --rate always (the daemon's --rest-rate 0). A read takes \
            whichever sample the sensor holds then, so a paced decision is reproduced offline. With --pace \
            default each change of pace is printed too: {"t": …, "pace": "fast"|"held"|"lying"}. --phase S \
            puts the first read S seconds after the first sample (default 0); --seed N draws the phase and \
            up to 2 ms of lateness per read as the corpus tests' realisation N does (Tests/CorpusTests).

            Exit status: 0 on success, 64 for bad options, 65 for a malformed trace (file and line are \
            named), 66 when the trace cannot be opened.

            Detector parameters (defaults), by the rule that reads them (docs/detection.md §3):
            \(DetectorOptions.parameterHelp)
            """
    )

    @Argument(
        help: ArgumentHelp(
            "The trace to replay (CSV t,x,y,z or t,x,y,z,gx,gy,gz), or - for standard input.", valueName: "trace"))
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

    @Option(
        help: ArgumentHelp(
            "Read the trace as the daemon polls a sensor: default (adaptive) or fixed (at --rate always).",
            valueName: "default|fixed"))
    var pace: ReplayPaceMode?

    @Option(help: ArgumentHelp("With --pace: the sampling rate while the device moves (default 25).", valueName: "hz"))
    var rate: Double?

    @Option(
        name: .customLong("rest-rate"),
        help: ArgumentHelp("With --pace default: the rate lying still at rest (default 1.8).", valueName: "hz"))
    var restRate: Double?

    @Option(
        name: .customLong("held-rate"),
        help: ArgumentHelp(
            "With --pace default: the rate at rest in a hand (default 4; 0: the rest rate).", valueName: "hz"))
    var heldRate: Double?

    @Option(
        name: .customLong("gyroscope-rate"),
        help: ArgumentHelp(
            "With --pace default: the rate while the device moves and the trace's gyroscope works (default 50; "
                + "0 or below --rate: --rate).", valueName: "hz"))
    var gyroscopeRate: Double?

    @Option(help: ArgumentHelp("With --pace: seconds from the first sample to the first read.", valueName: "seconds"))
    var phase: Double?

    @Option(help: ArgumentHelp("With --pace: the read timing of the corpus tests' realisation N.", valueName: "n"))
    var seed: UInt64?

    @OptionGroup var detector: DetectorOptions

    /// The pace's settings, nil without --pace.
    var paceSettings: SamplingPace.Settings? {
        guard let pace else { return nil }
        let defaults = SamplingPace.Settings()
        let fast = rate ?? defaults.fastRate
        switch pace {
        case .fixed:
            var settings = SamplingPace.Settings(fastRate: fast, restRate: fast, heldRate: fast)
            settings.gyroscopeRate = 0
            return settings
        case .default:
            var settings = SamplingPace.Settings(
                fastRate: fast, restRate: restRate ?? defaults.restRate, heldRate: heldRate ?? defaults.heldRate)
            settings.gyroscopeRate = gyroscopeRate ?? defaults.gyroscopeRate
            return settings
        }
    }

    /// Where the reads fall, with --pace.
    var paceTiming: PacedReplay.Timing {
        if let seed { return .random(seed: seed, fastRate: paceSettings?.fastRate ?? SamplingPace.Settings().fastRate) }
        return PacedReplay.Timing(phase: phase ?? 0)
    }

    func validate() throws {
        guard speed.isFinite, speed >= 0 else { throw ValidationError("--speed must be a number ≥ 0, got \(speed)") }
        let pacedOptions: [(String, Bool)] = [
            ("--rate", rate != nil), ("--rest-rate", restRate != nil), ("--held-rate", heldRate != nil),
            ("--gyroscope-rate", gyroscopeRate != nil), ("--phase", phase != nil), ("--seed", seed != nil),
        ]
        if pace == nil, let option = pacedOptions.first(where: \.1)?.0 {
            throw ValidationError("\(option) applies to a paced replay only: add --pace default or --pace fixed")
        }
        if pace == .fixed, restRate != nil || heldRate != nil || gyroscopeRate != nil {
            throw ValidationError(
                "--rest-rate, --held-rate and --gyroscope-rate apply to --pace default (fixed reads at --rate always)")
        }
        if phase != nil, seed != nil { throw ValidationError("--phase and --seed both set where the first read falls") }
        for (name, value) in [("--rate", rate), ("--rest-rate", restRate)] {
            if let value, !(value.isFinite && value > 0) {
                throw ValidationError("\(name) must be a number > 0, got \(value)")
            }
        }
        if let phase, let period = paceSettings.map({ 1 / $0.fastRate }), !(phase >= 0 && phase < period) {
            throw ValidationError("--phase must be ≥ 0 and below one sampling period (\(period) s), got \(phase)")
        }
        if let gyroscopeRate, !(gyroscopeRate.isFinite && gyroscopeRate >= 0) {
            throw ValidationError("--gyroscope-rate must be a number ≥ 0, got \(gyroscopeRate)")
        }
        if let heldRate, !(heldRate.isFinite && heldRate >= 0) {
            throw ValidationError("--held-rate must be a number ≥ 0, got \(heldRate)")
        }
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
        var paced = paceSettings.map { PacedReplay(pipeline: pipeline, pace: $0, timing: paceTiming) }
        var lastTime: Double?
        var gyroscope = GyroscopeCheck.Verdict.working
        // Created by the first line that names a location: a convertible's two-sensor trace.
        var hinge: HingeDetector?
        var lineNumber = 0
        while let line = input.readLine() {
            lineNumber += 1
            let parsed: TraceRow?
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
            guard let row = parsed else { continue }
            let (time, location, reading) = (row.time, row.location, row.reading)
            if paced != nil, location == .base {
                printError(
                    """
                    orientd replay: \(input.displayName):\(lineNumber): --pace replays a one-sensor trace (t,x,y,z), \
                    and this line is a convertible's base reading
                    """)
                throw ExitCode(64)
            }
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
            if let reads = paced?.offer(time: time, reading: reading, rotationRate: row.rotationRate) {
                printReads(reads)
                lastTime = time
            } else if location == .display,
                let change = pipeline.process(time: time, reading: reading, rotationRate: row.rotationRate)
            {
                Self.printChange(change)
            }
            let verdict = paced?.pipeline.detector.gyroscopeVerdict ?? pipeline.detector.gyroscopeVerdict
            if verdict != gyroscope {
                gyroscope = verdict
                Self.printGyroscope(verdict, at: time)
            }
            if pacer != nil { fflush(nil) }  // live output even through a pipe
        }
        if let error = input.readError {
            printError("orientd replay: \(input.displayName): read failed: \(error)")
            throw ExitCode(66)
        }
        if let lastTime, let reads = paced?.finish(at: lastTime) { printReads(reads) }
    }

    /// The gyroscope's verdict changed (docs/sensors.md, "Gyroscope"): `{"t": …, "gyroscope":
    /// "working"}` or `{"t": …, "gyroscope": "failed", "detail": "…"}`.
    private static func printGyroscope(_ verdict: GyroscopeCheck.Verdict, at time: Double) {
        switch verdict {
        case .working: print(#"{"t": \#(time), "gyroscope": "working"}"#)
        case .failed(let detail):
            print(#"{"t": \#(time), "gyroscope": "failed", "detail": \#(JSONValue.string(detail).serialized)}"#)
        }
    }

    private static func printChange(_ change: OrientationChange) {
        print(#"{"t": \#(change.time), "orientation": "\#(change.to.rawValue)"}"#)
    }

    /// A paced read's orientation change and, with the adaptive pace, its pace change: one JSON line
    /// each (a fixed pace reads at one rate whatever the pace is called).
    private func printReads(_ reads: [PacedReplay.Read]) {
        for read in reads {
            if let change = read.change { Self.printChange(change) }
            if pace == .default, let new = read.pace { print(#"{"t": \#(read.time), "pace": "\#(new.rawValue)"}"#) }
        }
    }
}

/// `--pace`: how the replay reads the trace.
enum ReplayPaceMode: String, ExpressibleByArgument, CaseIterable {
    /// Adaptive, as the daemon's defaults: the sampling rate while moving, the held or lying rate at rest.
    case `default`
    /// At the sampling rate always (the daemon's `--rest-rate 0`).
    case fixed
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
