import Foundation
import OrientationCore

/// One trace of the corpus: samples, labels and the mount matrix its CSV needs.
public struct CorpusTrace: Sendable {
    public let name: String
    /// The rows of the CSV (with a rotation rate in the gyroscope form).
    public let samples: [TraceRow]
    public let labels: [LabelInterval]
    public let mountMatrix: MountMatrix
    public let rateHz: Double

    /// Reads `NAME.csv`, `NAME.labels.json` and `NAME.meta.json` from `directory`.
    public init(directory: URL, name: String) throws {
        self.name = name
        let csvURL = directory.appendingPathComponent("\(name).csv")
        let text = try String(contentsOf: csvURL, encoding: .utf8)
        var samples: [TraceRow] = []
        var lineNumber = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            do {
                if let sample = try TraceFormat.parse(line: line, lineNumber: lineNumber) { samples.append(sample) }
            } catch {
                throw CorpusError(file: csvURL.path, problem: error.description)
            }
        }
        self.samples = samples
        labels = try JSONDecoder().decode(
            [LabelInterval].self, from: Data(contentsOf: directory.appendingPathComponent("\(name).labels.json")))
        let metaURL = directory.appendingPathComponent("\(name).meta.json")
        let meta = try JSONDecoder().decode(Meta.self, from: Data(contentsOf: metaURL))
        do {
            mountMatrix = try MountMatrix(parsing: meta.mount_matrix_hwdb)
        } catch {
            throw CorpusError(file: metaURL.path, problem: error.description)
        }
        rateHz = meta.rate_hz
    }

    private struct Meta: Decodable {
        // swiftlint:disable:next identifier_name
        let mount_matrix_hwdb: String
        // swiftlint:disable:next identifier_name
        let rate_hz: Double
    }

    /// The names of every trace in `directory` (files `NAME.labels.json`), sorted.
    public static func names(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".labels.json") }
            .map { String($0.dropLast(".labels.json".count)) }
            .sorted()
    }

    /// Runs the daemon's pipeline over the trace, as `orientd replay` does.
    public func replay(configuration: DetectorConfiguration = DetectorConfiguration()) -> [OrientationChange] {
        var pipeline = OrientationPipeline(mountMatrix: mountMatrix, configuration: configuration)
        return samples.compactMap {
            pipeline.process(time: $0.time, reading: $0.reading, rotationRate: $0.rotationRate)
        }
    }

    /// Replays and scores.
    public func score(configuration: DetectorConfiguration = DetectorConfiguration()) -> TraceScore {
        CorpusScorer.score(events: replay(configuration: configuration).map { ($0.time, $0.to) }, labels: labels)
    }

    /// Runs the pipeline over the trace as the daemon reads a polled sensor at a ``SamplingPace``
    /// (``PacedReplay``, the code `orientd replay --pace` runs): each read takes the sample the
    /// sensor holds at that moment, the next read comes one interval of the pace in force later. The
    /// fast rate is the pace's (the daemon's sampling rate), not the trace's. A turn's latency then
    /// depends on where the reads fall, so a caller draws `timing` at random to see the spread.
    /// Returns the changes and how many reads were taken.
    public func replayPaced(
        _ settings: SamplingPace.Settings, configuration: DetectorConfiguration = DetectorConfiguration(),
        timing: PacedReplay.Timing = PacedReplay.Timing()
    )
        -> (changes: [OrientationChange], reads: Int)
    {
        var replay = PacedReplay(
            pipeline: OrientationPipeline(mountMatrix: mountMatrix, configuration: configuration), pace: settings,
            timing: timing)
        var reads: [PacedReplay.Read] = []
        for sample in samples {
            reads += replay.offer(time: sample.time, reading: sample.reading, rotationRate: sample.rotationRate)
        }
        if let end = samples.last?.time { reads += replay.finish(at: end) }
        return (reads.compactMap(\.change), replay.reads)
    }

    /// Replays at a pace and scores; also the reads per second.
    public func scorePaced(
        _ settings: SamplingPace.Settings, configuration: DetectorConfiguration = DetectorConfiguration(),
        timing: PacedReplay.Timing = PacedReplay.Timing()
    )
        -> (score: TraceScore, readsPerSecond: Double)
    {
        let (changes, reads) = replayPaced(settings, configuration: configuration, timing: timing)
        let seconds = (samples.last?.time ?? 0) - (samples.first?.time ?? 0)
        return (
            CorpusScorer.score(events: changes.map { ($0.time, $0.to) }, labels: labels),
            Double(reads) / max(seconds, 1e-9)
        )
    }
}

public struct CorpusError: Error, CustomStringConvertible {
    public let file: String
    public let problem: String
    public var description: String { "\(file): \(problem)" }
}

/// A row of the score table: one scenario, or the overall summary.
public struct ScoreRow: Sendable {
    public var scenario: String
    public var transitions: Int
    public var missed: Int
    public var latencyMedian: Double?
    public var latencyP95: Double?
    public var startup: Double?
    public var falseChanges: Int
    /// Changes undone within a second while the labels stayed the same (``TakenBack``).
    public var takenBack: Int
    public var errorPercent: Double

    public init(scenario: String, score: TraceScore) {
        self.scenario = scenario
        transitions = score.transitionCount
        missed = score.missedCount
        latencyMedian = Statistics.median(score.latencies)
        latencyP95 = Statistics.percentile(score.latencies, 95)
        startup = score.startupLatency
        falseChanges = score.falseChanges.count
        takenBack = score.takenBack.count
        errorPercent = score.errorPercent
    }

    /// score.py's OVERALL row: latencies pooled, startup as the median of the traces' startups,
    /// error time over all settled time.
    public init(overall scores: [TraceScore]) {
        scenario = "OVERALL"
        transitions = scores.map(\.transitionCount).reduce(0, +)
        missed = scores.map(\.missedCount).reduce(0, +)
        let pooled = scores.flatMap(\.latencies)
        latencyMedian = Statistics.median(pooled)
        latencyP95 = Statistics.percentile(pooled, 95)
        startup = Statistics.median(scores.compactMap(\.startupLatency))
        falseChanges = scores.map(\.falseChanges.count).reduce(0, +)
        takenBack = scores.map(\.takenBack.count).reduce(0, +)
        let settled = scores.map(\.settledSeconds).reduce(0, +)
        errorPercent = settled > 0 ? 100 * scores.map(\.wrongSeconds).reduce(0, +) / settled : 0
    }

    public static let header = "scenario                 trans missed  lat_med  lat_p95  startup false back   err%"

    /// The row in score.py's layout.
    public var formatted: String {
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "-" }
        return scenario.padding(toLength: 24, withPad: " ", startingAt: 0)
            + " " + pad(String(transitions), 5) + " " + pad(String(missed), 6)
            + " " + pad(seconds(latencyMedian), 8) + " " + pad(seconds(latencyP95), 8) + " " + pad(seconds(startup), 8)
            + " " + pad(String(falseChanges), 5) + " " + pad(String(takenBack), 4) + " "
            + pad(String(format: "%.2f", errorPercent), 6)
    }

    private func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}

/// The corpus read at a ``SamplingPace`` in many realisations of the read timing (``PacedReplay``,
/// as `orientd replay --pace … --seed N` reads one trace): the corpus tests and `make bench` judge
/// the paced shortcuts on these.
public struct PacedCorpusScore: Sendable {
    /// Per realisation (seed 0, 1, …): the pooled score over every trace.
    public var realisations: [ScoreRow]
    /// Per realisation: reads per second, averaged over the traces.
    public var readsPerSecond: [Double]
    /// Per trace: false changes and changes taken back, summed over the realisations.
    public var byTrace: [(name: String, falseChanges: Int, takenBack: Int)]

    /// Reads every trace at `settings` in realisations `0..<realisations`.
    public init(
        traces: [CorpusTrace], settings: SamplingPace.Settings, realisations: Int,
        configuration: DetectorConfiguration = DetectorConfiguration()
    ) {
        var byTrace = traces.map { (name: $0.name, falseChanges: 0, takenBack: 0) }
        self.realisations = []
        readsPerSecond = []
        for seed in 0..<realisations {
            var reads = 0.0
            var scores: [TraceScore] = []
            for (index, trace) in traces.enumerated() {
                let timing = PacedReplay.Timing.random(seed: UInt64(seed), fastRate: settings.fastRate)
                let (score, perSecond) = trace.scorePaced(settings, configuration: configuration, timing: timing)
                reads += perSecond
                scores.append(score)
                byTrace[index].falseChanges += score.falseChanges.count
                byTrace[index].takenBack += score.takenBack.count
            }
            self.realisations.append(ScoreRow(overall: scores))
            readsPerSecond.append(reads / Double(max(traces.count, 1)))
        }
        self.byTrace = byTrace
    }

    public var missed: Int { realisations.map(\.missed).reduce(0, +) }
    public var falseChanges: Int { realisations.map(\.falseChanges).reduce(0, +) }
    public var takenBack: Int { realisations.map(\.takenBack).reduce(0, +) }
    /// The slowest realisation's median and p95.
    public var worstMedian: Double? { realisations.compactMap(\.latencyMedian).max() }
    public var worstP95: Double? { realisations.compactMap(\.latencyP95).max() }
    /// The median over the realisations of each one's start-up (itself a median over the traces).
    public var startup: Double? { Statistics.median(realisations.compactMap(\.startup)) }

    /// A few lines for a terminal or a code block: the totals, the slowest realisation, and the
    /// traces with false changes or changes taken back.
    public var summary: String {
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.3f s", $0) } ?? "–" }
        let reads = readsPerSecond.reduce(0, +) / Double(max(readsPerSecond.count, 1))
        var lines = [
            """
            \(realisations.count) realisations: missed \(missed), false \(falseChanges), taken back \(takenBack); \
            median at most \(seconds(worstMedian)), p95 at most \(seconds(worstP95)), start-up \(seconds(startup)); \
            \(String(format: "%.1f", reads)) reads/s
            """
        ]
        let wrong = byTrace.filter { $0.falseChanges > 0 || $0.takenBack > 0 }
        lines.append(
            wrong.isEmpty
                ? "no trace had a false change or a change taken back"
                : "false / taken back over the realisations: "
                    + wrong.map { "\($0.name) \($0.falseChanges)/\($0.takenBack)" }.joined(separator: ", "))
        return lines.joined(separator: "\n")
    }
}
