import Foundation
import Testing
import CorpusScoring
import OrientationCore

@Suite("orientd replay")
struct ReplayCommandTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/corpus/public")

    struct Event: Decodable, Equatable {
        let t: Double
        let orientation: DeviceOrientation
    }

    func decode(_ lines: [String]) throws -> [Event] {
        try lines.map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
    }

    @Test(
        "prints exactly the pipeline's changes as JSON lines",
        arguments: ["clean_rotations", "face_up_down", "mounted_rotated"])
    func sameAsPipeline(name: String) throws {
        let trace = try CorpusTrace(directory: Self.corpus, name: name)
        let result = try OrientdProcess.run([
            "replay", Self.corpus.appendingPathComponent("\(name).csv").path,
            "--mount-matrix", trace.mountMatrix.text,
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let expected = trace.replay().map { Event(t: $0.time, orientation: $0.to) }
        #expect(!expected.isEmpty)
        #expect(try decode(result.lines) == expected)
    }

    @Test("without its mount matrix a rotated board reads differently")
    func mountMatrixApplied() throws {
        let trace = try CorpusTrace(directory: Self.corpus, name: "mounted_rotated")
        let result = try OrientdProcess.run(["replay", Self.corpus.appendingPathComponent("mounted_rotated.csv").path])
        #expect(result.status == 0)
        #expect(try decode(result.lines) != trace.replay().map { Event(t: $0.time, orientation: $0.to) })
    }

    @Test("reads standard input with -")
    func standardInput() throws {
        var text = "t,x,y,z\n"
        for step in 0..<25 { text += "\(Double(step) / 25),0,0,-9.81\n" }
        let result = try OrientdProcess.run(["replay", "-"], standardInput: text)
        #expect(result.status == 0)
        #expect(try decode(result.lines).map(\.orientation) == [.faceUp])
    }

    @Test("detector parameters apply")
    func detectorOverride() throws {
        var text = ""
        for step in 0..<50 { text += "\(Double(step) / 25),0,-9.81,0\n" }
        let fast = try OrientdProcess.run(["replay", "-"], standardInput: text)
        let slow = try OrientdProcess.run(
            [
                "replay", "-", "--detector", "rest-window=1", "--detector", "settle-time=1.5", "--detector",
                "startup-rest-window=1",
            ], standardInput: text)
        let fastTime = try #require(try decode(fast.lines).first?.t)
        let slowTime = try #require(try decode(slow.lines).first?.t)
        #expect(fastTime < 0.2)
        #expect(slowTime >= 1.0)
    }

    @Test(
        "--pace default --seed N prints the changes the corpus tests' realisation N decides, and the pace",
        arguments: [("flick_back_held", UInt64(3)), ("side_lying", 17), ("mounted_rotated", 0)])
    func paced(name: String, seed: UInt64) throws {
        let trace = try CorpusTrace(directory: Self.corpus, name: name)
        let result = try OrientdProcess.run([
            "replay", Self.corpus.appendingPathComponent("\(name).csv").path, "--mount-matrix", trace.mountMatrix.text,
            "--pace", "default", "--seed", "\(seed)",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let timing = PacedReplay.Timing.random(seed: seed, fastRate: SamplingPace.Settings().fastRate)
        let expected = trace.replayPaced(SamplingPace.Settings(), timing: timing).changes
        #expect(!expected.isEmpty)
        #expect(expected != trace.replay(), "reading at a pace decides at other times than every sample")
        let changes = result.lines.filter { $0.contains("orientation") }
        #expect(try decode(changes) == expected.map { Event(t: $0.time, orientation: $0.to) })
        let paces = result.lines.filter { $0.contains("\"pace\"") }
        #expect(paces.contains { $0.contains("\"lying\"") || $0.contains("\"held\"") }, "\(paces)")
        #expect(paces.contains { $0.contains("\"fast\"") })
    }

    @Test("--pace fixed reads at --rate from --phase: the changes of a trace resampled at that rate, no pace lines")
    func pacedFixed() throws {
        let trace = try CorpusTrace(directory: Self.corpus, name: "clean_rotations")
        let result = try OrientdProcess.run([
            "replay", Self.corpus.appendingPathComponent("clean_rotations.csv").path, "--pace", "fixed", "--rate", "20",
            "--phase", "0.01",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let settings = SamplingPace.Settings(fastRate: 20, restRate: 20, heldRate: 20)
        let expected = trace.replayPaced(settings, timing: PacedReplay.Timing(phase: 0.01)).changes
        #expect(try decode(result.lines) == expected.map { Event(t: $0.time, orientation: $0.to) })
        // Every read falls on the 20 Hz grid from the phase.
        for change in expected {
            let reads = (change.time - trace.samples[0].time - 0.01) * 20
            #expect(abs(reads - reads.rounded()) < 1e-6)
        }
    }

    @Test(
        "paced options without --pace, or that contradict each other, are named, exit 64",
        arguments: [
            (["--seed", "3"], "--pace"), (["--phase", "0.01"], "--pace"),
            (["--pace", "default", "--seed", "1", "--phase", "0.01"], "--phase and --seed"),
            (["--pace", "fixed", "--rest-rate", "2"], "--rest-rate"), (["--pace", "default", "--rate", "0"], "--rate"),
            (["--pace", "default", "--phase", "0.5"], "--phase"), (["--pace", "sometimes"], "sometimes"),
        ])
    func pacedOptionErrors(options: [String], named: String) throws {
        let result = try OrientdProcess.run(["replay", "-"] + options, standardInput: "")
        #expect(result.status == 64)
        #expect(result.standardError.contains(named), "\(result.standardError)")
    }

    @Test("--pace on a convertible's two-sensor trace names the line, exit 64")
    func pacedConvertible() throws {
        let text = "t,location,x,y,z\n0,display,0,-9.81,0\n0,base,0,0,-9.81\n"
        let result = try OrientdProcess.run(["replay", "-", "--pace", "default"], standardInput: text)
        #expect(result.status == 64)
        #expect(result.standardError.contains(":3:"), "\(result.standardError)")
    }

    @Test("a malformed trace names the file and line, exit 65")
    func malformed() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("orientd-bad-\(UUID().uuidString).csv")
        try "t,x,y,z\n0,0,-9.81,0\n0.04,0,oops,0\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try OrientdProcess.run(["replay", file.path])
        #expect(result.status == 65)
        #expect(result.standardError.contains("\(file.path):3:"))
        #expect(result.standardError.contains("field y \"oops\""))
    }

    @Test("a missing trace is named, exit 66")
    func missing() throws {
        let result = try OrientdProcess.run(["replay", "/nonexistent/trace.csv"])
        #expect(result.status == 66)
        #expect(result.standardError.contains("/nonexistent/trace.csv"))
    }

    @Test(
        "a malformed mount matrix is quoted, exit 64",
        arguments: ["1, 0, 0; 0, 1, 0", "1, 0, 0; 0, 0, 0; 0, 0, 1", "a, b, c; d, e, f; g, h, i"])
    func badMatrix(matrix: String) throws {
        let result = try OrientdProcess.run(["replay", "-", "--mount-matrix", matrix], standardInput: "")
        #expect(result.status == 64)
        #expect(result.standardError.contains("\"\(matrix)\""))
    }

    @Test(
        "an unknown or invalid detector parameter is named, exit 64",
        arguments: [
            ("settle=1", "settle"), ("settle-time=soon", "settle-time"), ("face-exit-tilt=89", "face-exit-tilt"),
            ("settle-time", "name=value"),
        ])
    func badParameter(override: String, named: String) throws {
        let result = try OrientdProcess.run(["replay", "-", "--detector", override], standardInput: "")
        #expect(result.status == 64)
        #expect(result.standardError.contains(named))
    }

    @Test("--help explains the format and lists every detector parameter")
    func help() throws {
        let result = try OrientdProcess.run(["replay", "--help"])
        #expect(result.status == 0)
        for parameter in DetectorConfiguration.parameters {
            #expect(result.standardOutput.contains(parameter.name))
        }
        #expect(result.standardOutput.contains("t,x,y,z"))
    }
}
