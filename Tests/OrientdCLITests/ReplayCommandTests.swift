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
