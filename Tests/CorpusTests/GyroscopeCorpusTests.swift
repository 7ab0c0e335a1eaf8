import Foundation
import Testing
@testable import CorpusScoring
@testable import OrientationCore

/// The corpus's gyroscope twins through the pipeline: the fused gravity (detection-log.md §18).
@Suite("Corpus with a gyroscope")
struct GyroscopeCorpusTests {
    @Test("every public trace has a twin with a gyroscope, and generate.py --gyro writes them byte for byte")
    func twins() throws {
        #expect(CorpusFixtures.gyroscopeTraces.count == CorpusFixtures.expectedTraceCount)
        #expect(CorpusFixtures.gyroscopeTraces.allSatisfy { $0.samples.allSatisfy { $0.rotationRate != nil } })
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orientd-gyro-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", CorpusFixtures.generator.path, "--gyro", "--out", directory.path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let written = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(written.count == 3 * CorpusFixtures.expectedTraceCount, "\(written)")
        for file in written {
            let fresh = try Data(contentsOf: directory.appendingPathComponent(file))
            let committed = try Data(contentsOf: CorpusFixtures.gyroscopeDirectory.appendingPathComponent(file))
            #expect(fresh == committed, "\(file) differs from what generate.py --gyro writes")
        }
    }

    @Test("the twins of generate.py's traces read as their originals without the gyroscope, and decide alike")
    func sameAccelerometer() throws {
        var compared = 0
        for twin in CorpusFixtures.gyroscopeTraces {
            guard let original = CorpusFixtures.traces.first(where: { $0.name == twin.name }),
                original.samples.count == twin.samples.count
            else { continue }
            let readings = twin.samples.map { TraceRow(time: $0.time, reading: $0.reading) }
            guard readings == original.samples else { continue }  // a re-created scenario, not a twin
            var pipeline = OrientationPipeline(mountMatrix: twin.mountMatrix)
            let withoutRates = readings.compactMap { pipeline.process(time: $0.time, reading: $0.reading) }
            #expect(withoutRates == original.replay(), "\(twin.name): without rates, exactly today's detection")
            compared += 1
        }
        #expect(compared == 16, "generate.py's traces and their twins")
    }

    @Test(
        """
        with the gyroscope: 0 missed, 0 false, 0 taken back offline and at 40 read phases; median ≤ 0.03 s, \
        p95 ≤ 0.13 s, error ≤ 0.6 %; the walking turns taken within 0.25 s
        """)
    func targets() throws {
        let scores = CorpusFixtures.gyroscopeTraces.map { ($0.name, $0.score()) }
        for (name, score) in scores {
            #expect(score.missedCount == 0, "\(name): missed")
            #expect(score.falseChanges.isEmpty, "\(name): false \(score.falseChanges.map { "\($0.to)@\($0.time)" })")
            #expect(score.takenBack.isEmpty, "\(name): taken back \(score.takenBack.map { "\($0.to)@\($0.time)" })")
        }
        let overall = ScoreRow(overall: scores.map(\.1))
        #expect(try #require(overall.latencyMedian) <= 0.03)
        #expect(try #require(overall.latencyP95) <= 0.13)
        #expect(overall.errorPercent <= 0.6)
        let walking = try #require(scores.first { $0.0 == "walk_hand_off_axis" }?.1)
        for transition in walking.transitions where !transition.missed {
            #expect(try #require(transition.latency) <= 0.25, "walk_hand_off_axis: \(transition.from)→\(transition.to)")
        }
        // Read as the daemon reads: the gyroscope on only while the pace is fast, after its start-up.
        let paced = PacedCorpusScore(
            traces: CorpusFixtures.gyroscopeTraces, settings: SamplingPace.Settings(), realisations: 40)
        for row in paced.realisations {
            #expect(row.missed == 0 && row.falseChanges == 0 && row.takenBack == 0)
            #expect(try #require(row.latencyP95) <= 0.25)
        }
    }

    @Test("the accelerometer alone on the same twins is slower and errs longer: the gyroscope is what helps")
    func gyroscopeHelps() throws {
        let fused = ScoreRow(overall: CorpusFixtures.gyroscopeTraces.map { $0.score() })
        let alone = ScoreRow(
            overall: CorpusFixtures.gyroscopeTraces.map { trace in
                var pipeline = OrientationPipeline(mountMatrix: trace.mountMatrix)
                let changes = trace.samples.compactMap { pipeline.process(time: $0.time, reading: $0.reading) }
                return CorpusScorer.score(events: changes.map { ($0.time, $0.to) }, labels: trace.labels)
            })
        #expect(fused.errorPercent < alone.errorPercent)
        let walking = try #require(CorpusFixtures.gyroscopeTraces.first { $0.name == "walk_hand_off_axis" })
        var pipeline = OrientationPipeline(mountMatrix: walking.mountMatrix)
        let changes = walking.samples.compactMap { pipeline.process(time: $0.time, reading: $0.reading) }
        let aloneWalking = CorpusScorer.score(events: changes.map { ($0.time, $0.to) }, labels: walking.labels)
        let slowestAlone = aloneWalking.transitions.compactMap(\.latency).max() ?? 0
        let slowestFused = walking.score().transitions.compactMap(\.latency).max() ?? 1
        #expect(slowestFused < slowestAlone - 0.2, "walking: \(slowestFused) s fused, \(slowestAlone) s alone")
    }
}

@Suite("Gyroscope check on working gyroscopes")
struct GyroscopeCheckCorpusTests {
    @Test("no twin's gyroscope is ever judged failed: offline, and read at the daemon's pace")
    func neverFailed() {
        for trace in CorpusFixtures.gyroscopeTraces {
            var pipeline = OrientationPipeline(mountMatrix: trace.mountMatrix)
            for row in trace.samples {
                _ = pipeline.process(time: row.time, reading: row.reading, rotationRate: row.rotationRate)
                if pipeline.detector.gyroscopeVerdict != .working {
                    Issue.record("\(trace.name) at \(row.time): \(pipeline.detector.gyroscopeVerdict)")
                    break
                }
            }
            for seed in 0..<5 {
                let timing = PacedReplay.Timing.random(seed: UInt64(seed), fastRate: SamplingPace.Settings().fastRate)
                var paced = PacedReplay(
                    pipeline: OrientationPipeline(mountMatrix: trace.mountMatrix), pace: SamplingPace.Settings(),
                    timing: timing)
                for row in trace.samples {
                    _ = paced.offer(time: row.time, reading: row.reading, rotationRate: row.rotationRate)
                    if paced.pipeline.detector.gyroscopeVerdict != .working {
                        Issue.record("\(trace.name) paced \(seed) at \(row.time)")
                        break
                    }
                }
            }
        }
    }
}
