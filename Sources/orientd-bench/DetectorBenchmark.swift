import CorpusScoring
import Foundation
import OrientationCore

/// `orientd-bench`: the corpus score table and the detector's throughput (`make bench`).
///
/// Usage: orientd-bench [--corpus DIR] [--markdown FILE] [--samples N]
///        orientd-bench fanout-client SOCKET COUNT [--stalled] [--churn RATE]   (see ``FanOutClient``)
///        orientd-bench floor-server SOCKET   (see ``FloorServer``)
///
/// With `--markdown`, the section between `<!-- detector-benchmark:begin -->` and
/// `<!-- detector-benchmark:end -->` in FILE is replaced by the measured results, so the document is
/// never edited by hand.
@main
struct DetectorBenchmark {
    /// A failure is one line on standard error and exit status 1, not a crash report.
    static func main() {
        do {
            try run()
        } catch {
            FileHandle.standardError.write(Data("orientd-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run() throws {
        var arguments = CommandLine.arguments.dropFirst()
        if arguments.first == "fanout-client" {
            let usage = "usage: orientd-bench fanout-client SOCKET COUNT [--stalled] [--churn RATE]"
            let rest = Array(arguments.dropFirst())
            guard rest.count >= 2, let count = Int(rest[1]), count > 0 else { throw UsageError(message: usage) }
            var options = rest.dropFirst(2)
            var stalled = false
            var churnRate: Int?
            while let option = options.popFirst() {
                switch option {
                case "--stalled": stalled = true
                case "--churn":
                    guard let rate = options.popFirst().flatMap({ Int($0) }), rate > 0 else {
                        throw UsageError(
                            message: "--churn needs a rate in connections per second (a positive integer)\n\(usage)")
                    }
                    churnRate = rate
                default: throw UsageError(message: "unknown argument \(option)\n\(usage)")
                }
            }
            try FanOutClient.run(socketPath: rest[0], count: count, stalled: stalled, churnRate: churnRate)
            return
        }
        if arguments.first == "floor-server" {
            guard arguments.count == 2, let socketPath = arguments.last else {
                throw UsageError(message: "usage: orientd-bench floor-server SOCKET")
            }
            try FloorServer.run(socketPath: socketPath)
            return
        }
        var corpus = "Tests/Fixtures/corpus/public"
        var markdown: String?
        var targetSamples = 20_000_000
        var soakHours = 240.0
        var qualityOnly = false
        var configuration = DetectorConfiguration()
        var realisations = 40
        var gyroscopeCorpus: String?
        while let argument = arguments.popFirst() {
            switch argument {
            case "--corpus": corpus = try value(for: argument, from: &arguments)
            case "--gyroscope-corpus": gyroscopeCorpus = try value(for: argument, from: &arguments)
            case "--markdown": markdown = try value(for: argument, from: &arguments)
            case "--quality-only": qualityOnly = true
            case "--detector":
                let text = try value(for: argument, from: &arguments)
                guard let equals = text.firstIndex(of: "=") else {
                    throw UsageError(message: "--detector \(text): expected name=value")
                }
                try configuration.set(String(text[..<equals]), to: String(text[text.index(after: equals)...]))
                try configuration.validate()
            case "--realisations":
                let text = try value(for: argument, from: &arguments)
                guard let count = Int(text), count > 0 else {
                    throw UsageError(message: "--realisations needs a positive whole number, not \(text)")
                }
                realisations = count
            case "--samples": targetSamples = Int(try value(for: argument, from: &arguments)) ?? targetSamples
            case "--soak-hours":
                let text = try value(for: argument, from: &arguments)
                guard let hours = Double(text), hours > 0, hours.isFinite else {
                    throw UsageError(message: "--soak-hours needs a positive number of hours, not \(text)")
                }
                soakHours = hours
            case "-h", "--help":
                print(
                    """
                    usage: orientd-bench [--corpus DIR] [--gyroscope-corpus DIR] [--markdown FILE] [--samples N] \
                    [--soak-hours H] [--realisations N] [--quality-only] [--detector NAME=VALUE]...\n       \
                    orientd-bench fanout-client SOCKET COUNT [--stalled] [--churn RATE]\n       orientd-bench \
                    floor-server SOCKET
                    """
                )
                return
            default: throw UsageError(message: "unknown argument \(argument)")
            }
        }

        let directory = URL(fileURLWithPath: corpus)
        let traces = try CorpusTrace.names(in: directory).map { try CorpusTrace(directory: directory, name: $0) }
        guard !traces.isEmpty else { throw UsageError(message: "no traces (NAME.labels.json) in \(corpus)") }

        // 1. Detection quality.
        let scores = traces.map { ($0.name, $0.score(configuration: configuration)) }
        let rows = scores.map { ScoreRow(scenario: $0.0, score: $0.1) } + [ScoreRow(overall: scores.map(\.1))]
        print("Detection on \(corpus) (\(traces.count) traces, metrics of score.py):")
        print(ScoreRow.header)
        rows.forEach { print($0.formatted) }

        // 1b. The same traces read as the daemon polls a sensor at its default pace.
        let paced = PacedCorpusScore(
            traces: traces, settings: SamplingPace.Settings(), realisations: realisations, configuration: configuration)
        print("")
        print("Read at the default pace (held 4 Hz, lying 1.8 Hz at rest), \(realisations) realisations of the reads:")
        print(paced.summary)

        // 1c. The gyroscope twins: fused, and the same samples without their rates.
        let gyroscope = try gyroscopeCorpus.map {
            try GyroscopeComparison(directory: $0, configuration: configuration, realisations: realisations)
        }
        if let gyroscope { gyroscope.lines.forEach { print($0) } }
        if qualityOnly { return }

        // 2. Throughput: every corpus sample in the display frame, replayed back to back until the
        // target count, one core.
        let base = traces.flatMap { trace in
            trace.samples.map {
                AccelerationSample(
                    time: $0.time, vector: trace.mountMatrix.apply($0.reading),
                    rotationRate: $0.rotationRate.map(trace.mountMatrix.applyToRotation))
            }
        }
        let runs = (0..<5).map { _ in measureThroughput(base: base, samples: targetSamples) }
        let rates = runs.map(\.samplesPerSecond).sorted()
        let median = rates[rates.count / 2]
        print("")
        print("Detector throughput: \(targetSamples) samples per run, 5 runs, one core")
        print(
            String(
                format:
                    "  median %.2f M samples/s (%.0f ns/sample), best %.2f M samples/s, worst %.2f M samples/s; %d "
                    + "changes per run",
                median / 1e6, 1e9 / median, rates.last! / 1e6, rates.first! / 1e6, runs[0].changes))

        // 3. The fault policies on working sensors, for many simulated hours.
        print("")
        print("Fault-policy soak: \(soakHours) simulated hours of working sensors")
        let soak = FaultPolicySoakBenchmark.run(hours: soakHours)

        if let markdown {
            try updateMarkdown(
                path: markdown, rows: rows, paced: paced, gyroscope: gyroscope, corpus: corpus,
                traceCount: traces.count,
                samples: targetSamples, rates: rates, changes: runs[0].changes,
                soak: FaultPolicySoakBenchmark.markdown(rows: soak.rows, wallSeconds: soak.wallSeconds))
            print("\nwrote the detector section of \(markdown)")
        }
    }

    struct Throughput {
        let samplesPerSecond: Double
        let changes: Int
    }

    /// Feeds `samples` samples (the base trace repeated, time shifted so the clock keeps running).
    static func measureThroughput(base: [AccelerationSample], samples: Int) -> Throughput {
        var detector = OrientationDetector()
        let span = (base.last!.time - base.first!.time) + 0.02
        var changes = 0
        let clock = ContinuousClock()
        let start = clock.now
        var fed = 0
        var pass = 0.0
        while fed < samples {
            let offset = pass * span
            for sample in base {
                if detector.process(AccelerationSample(time: sample.time + offset, vector: sample.vector)) != nil {
                    changes += 1
                }
                fed += 1
                if fed == samples { break }
            }
            pass += 1
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Throughput(samplesPerSecond: Double(samples) / seconds, changes: changes)
    }

    static func updateMarkdown(
        path: String, rows: [ScoreRow], paced: PacedCorpusScore, gyroscope: GyroscopeComparison?, corpus: String,
        traceCount: Int, samples: Int,
        rates: [Double], changes: Int,
        soak: [String]
    ) throws {
        let begin = "<!-- detector-benchmark:begin -->"
        let end = "<!-- detector-benchmark:end -->"
        let median = rates[rates.count / 2]
        let overall = rows.last!
        var section = [begin, ""]
        section.append("Measured \(timestamp()) on \(machineDescription()).")
        section.append("")
        section.append("### Detection quality on the public corpus")
        section.append("")
        section.append(
            """
            \(traceCount) traces from `\(corpus)`, replayed through the daemon's pipeline (mount matrix + \
            detector, default parameters) and scored with the metrics of `score.py` (latency in seconds from the \
            start of each settled interval; error time as a share of settled time).
            """
        )
        section.append("")
        section.append(
            """
            | scenario | transitions | missed | latency median | latency p95 | startup | false changes | taken back \
            | error time |
            """)
        section.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.3f s", $0) } ?? "–" }
        for row in rows {
            let name = row.scenario == "OVERALL" ? "**overall**" : "`\(row.scenario)`"
            section.append(
                """
                | \(name) | \(row.transitions) | \(row.missed) | \(seconds(row.latencyMedian)) | \
                \(seconds(row.latencyP95)) | \(seconds(row.startup)) | \(row.falseChanges) | \(row.takenBack) | \
                \(String(format: "%.2f %%", row.errorPercent)) |
                """
            )
        }
        section.append("")
        func verdict(_ met: Bool) -> String { met ? "met" : "**missed**" }
        let latencyMedian = overall.latencyMedian ?? .infinity, p95 = overall.latencyP95 ?? .infinity
        let startup = overall.startup ?? .infinity
        section.append(
            """
            Targets (issues 38 and 48, on every trace): 0 missed — \(verdict(overall.missed == 0)); 0 false \
            changes — \(verdict(overall.falseChanges == 0)); 0 taken back (a change undone within 1 s while the \
            labels stayed the same) — \(verdict(overall.takenBack == 0)); latency median ≤ 0.05 s — \
            \(verdict(latencyMedian <= 0.05)) (\(seconds(overall.latencyMedian))); p95 ≤ 0.15 s — \
            \(verdict(p95 <= 0.15)) (\(seconds(overall.latencyP95))); start-up ≤ 0.10 s — \(verdict(startup <= 0.10)) \
            (\(seconds(overall.startup))); error time ≤ 0.8 % — \(verdict(overall.errorPercent <= 0.8)) \
            (\(String(format: "%.2f %%", overall.errorPercent))).
            """
        )
        section.append("")
        section.append("### The corpus read at the daemon's pace")
        section.append("")
        section.append(
            """
            The same traces read as the daemon polls a sensor at its default pace (`SamplingPace`: 25 Hz while \
            the device moves, 4 Hz at rest in a hand, 1.8 Hz lying still), in \(paced.realisations.count) \
            realisations of the read timing (the first read at a random phase, each read up to 2 ms late; \
            `orientd replay --pace default --seed N TRACE` reads one trace as realisation N does). A read takes \
            the sample the sensor holds, so the shortcuts after a slow read are judged on what the daemon sees.
            """
        )
        section.append("")
        section.append("```")
        section.append(paced.summary)
        section.append("```")
        section.append("")
        section.append(
            """
            Targets (issue 48, every realisation): 0 missed — \(verdict(paced.missed == 0)); 0 false changes — \
            \(verdict(paced.falseChanges == 0)); 0 taken back — \(verdict(paced.takenBack == 0)); median ≤ 0.05 s \
            — \(verdict((paced.worstMedian ?? .infinity) <= 0.05)); p95 ≤ 0.20 s — \
            \(verdict((paced.worstP95 ?? .infinity) <= 0.20)) (the slowest realisation's).
            """
        )
        if let gyroscope {
            section.append("")
            section += gyroscope.markdown
        }
        section.append("")
        section.append("### Detector throughput")
        section.append("")
        section.append(
            "Release build, one core: every corpus sample back to back, repeated to \(samples) samples per run, 5 runs."
        )
        section.append("")
        section.append("| median | best | worst | per sample (median) |")
        section.append("|---:|---:|---:|---:|")
        section.append(
            String(
                format: "| %.2f M samples/s | %.2f M samples/s | %.2f M samples/s | %.0f ns |", median / 1e6,
                rates.last! / 1e6, rates.first! / 1e6, 1e9 / median))
        section.append("")
        section.append("Target: ≥ 1,000,000 samples/s (≤ 1 µs per sample) — \(median >= 1e6 ? "met" : "**missed**").")
        section.append("")
        section += soak
        section.append("")
        section.append(end)
        let replacement = section.joined(separator: "\n")

        let existing = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "# Benchmarks\n\n\(begin)\n\(end)\n"
        guard let beginRange = existing.range(of: begin), let endRange = existing.range(of: end),
            beginRange.upperBound <= endRange.lowerBound
        else {
            throw UsageError(message: "\(path) lacks the markers \(begin) … \(end)")
        }
        let updated = existing.replacingCharacters(in: beginRange.lowerBound..<endRange.upperBound, with: replacement)
        try updated.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func timestamp() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: Date())
    }

    /// CPU model, core count and kernel, read from the machine itself.
    static func machineDescription() -> String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last!.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let machine = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "\(model), \(ProcessInfo.processInfo.activeProcessorCount) cores, Linux \(release) \(machine)"
    }

    static func value(for option: String, from arguments: inout ArraySlice<String>) throws -> String {
        guard let value = arguments.popFirst() else { throw UsageError(message: "\(option) needs a value") }
        return value
    }

    struct UsageError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}

/// The corpus's gyroscope twins (`generate.py --gyro`) scored with their rates (the fused gravity,
/// detection-log.md §18) and without them (the accelerometer alone on the same samples), offline and at
/// the daemon's pace; issue 50's targets beside them.
struct GyroscopeComparison {
    let directory: String
    let fused: ScoreRow
    let alone: ScoreRow
    let paced: PacedCorpusScore
    /// The slowest change after a turn while walking (`walk_hand_off_axis`), fused and alone.
    let walking: (fused: Double?, alone: Double?)

    init(directory: String, configuration: DetectorConfiguration, realisations: Int) throws {
        self.directory = directory
        let url = URL(fileURLWithPath: directory)
        let traces = try CorpusTrace.names(in: url).map { try CorpusTrace(directory: url, name: $0) }
        let fusedScores = traces.map { ($0.name, $0.score(configuration: configuration)) }
        let aloneScores = traces.map { trace in
            var pipeline = OrientationPipeline(mountMatrix: trace.mountMatrix, configuration: configuration)
            let changes = trace.samples.compactMap { pipeline.process(time: $0.time, reading: $0.reading) }
            return (trace.name, CorpusScorer.score(events: changes.map { ($0.time, $0.to) }, labels: trace.labels))
        }
        fused = ScoreRow(overall: fusedScores.map(\.1))
        alone = ScoreRow(overall: aloneScores.map(\.1))
        func slowest(_ scores: [(String, TraceScore)]) -> Double? {
            scores.first { $0.0 == "walk_hand_off_axis" }?.1.transitions.filter { !$0.isStartup }
                .compactMap(\.latency).max()
        }
        walking = (slowest(fusedScores), slowest(aloneScores))
        paced = PacedCorpusScore(
            traces: traces, settings: SamplingPace.Settings(), realisations: realisations, configuration: configuration)
    }

    private static func seconds(_ value: Double?) -> String { value.map { String(format: "%.3f s", $0) } ?? "–" }

    private func row(_ name: String, _ row: ScoreRow, walking: Double?) -> String {
        """
        | \(name) | \(row.missed) | \(row.falseChanges) | \(row.takenBack) | \(Self.seconds(row.latencyMedian)) | \
        \(Self.seconds(row.latencyP95)) | \(String(format: "%.2f %%", row.errorPercent)) | \(Self.seconds(walking)) |
        """
    }

    /// For the terminal.
    var lines: [String] {
        [
            "", "The gyroscope twins (\(directory)): overall, fused and without their rates:",
            ScoreRow.header, fused.formatted, alone.formatted,
            "walking turns, slowest: \(Self.seconds(walking.fused)) fused, \(Self.seconds(walking.alone)) alone",
            "Read at the default pace with the gyroscope on only while fast: \(paced.summary)",
        ]
    }

    var markdown: [String] {
        func verdict(_ met: Bool) -> String { met ? "met" : "**missed**" }
        let median = fused.latencyMedian ?? .infinity, p95 = fused.latencyP95 ?? .infinity
        return [
            "### With a gyroscope: the corpus's twins",
            "",
            """
            Every public trace's twin with a gyroscope (`\(directory)`, `generate.py --gyro`: the same poses, \
            the gyroscope's rates with bias, noise, quantisation and a clock of its own), scored with its \
            rates (the fused gravity, [detection-log.md §18](detection-log.md#18-with-a-gyroscope-fused-gravity)) and \
            without them (the accelerometer alone on the same samples).
            """,
            "",
            "| | missed | false | taken back | latency median | p95 | error time | slowest walking turn |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
            row("**with the gyroscope**", fused, walking: walking.fused),
            row("the accelerometer alone", alone, walking: walking.alone),
            "",
            "Read at the default pace, the gyroscope on only while the pace is fast (after its 0.08 s start-up):",
            "",
            "```",
            paced.summary,
            "```",
            "",
            """
            Targets (issue 50): 0 missed, 0 false, 0 taken back — \
            \(verdict(fused.missed == 0 && fused.falseChanges == 0 && fused.takenBack == 0)); median ≤ 0.03 s — \
            \(verdict(median <= 0.03)) (\(Self.seconds(fused.latencyMedian))); p95 ≤ 0.08 s — \
            \(verdict(p95 <= 0.08)) (\(Self.seconds(fused.latencyP95))); error ≤ 0.5 % — \
            \(verdict(fused.errorPercent <= 0.5)) (\(String(format: "%.2f %%", fused.errorPercent))); walking turns \
            ≤ 0.25 s — \(verdict((walking.fused ?? .infinity) <= 0.25)) (\(Self.seconds(walking.fused))).
            """,
        ]
    }
}
