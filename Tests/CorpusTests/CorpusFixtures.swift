import Foundation
import CorpusScoring
import OrientationCore

/// The public corpus in `Tests/Fixtures/corpus/` (its README says where each trace comes from).
enum CorpusFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/corpus")
    static let publicDirectory = root.appendingPathComponent("public")
    static let scorer = root.appendingPathComponent("score.py")

    static let traces: [CorpusTrace] = {
        let names = (try? CorpusTrace.names(in: publicDirectory)) ?? []
        return names.compactMap { try? CorpusTrace(directory: publicDirectory, name: $0) }
    }()

    /// 13 synthetic traces and the 16 that `generate.py` writes (real-life poses, flicks and pauses
    /// that come back, start-ups in motion).
    static let expectedTraceCount = 29
    /// The start-ups in motion: the first orientation reported must be the one the device rests in.
    static let startsInMotion = ["start_mid_flick", "start_walking_hand", "start_walking_pocket"]
    static let generator = root.appendingPathComponent("generate.py")

    /// Every public trace's twin with a gyroscope (`generate.py --gyro`; README of the corpus).
    static let gyroscopeDirectory = root.appendingPathComponent("public-gyro")
    static let gyroscopeTraces: [CorpusTrace] = {
        let names = (try? CorpusTrace.names(in: gyroscopeDirectory)) ?? []
        return names.compactMap { try? CorpusTrace(directory: gyroscopeDirectory, name: $0) }
    }()
}

/// Runs `score.py` (the corpus's own scorer) on events and returns its `--json` summary rows by
/// scenario.
enum ReferenceScorer {
    struct Row: Decodable {
        let scenario: String
        let transitions: Int
        let missed: Int
        // swiftlint:disable identifier_name
        let lat_median: Double?
        let lat_p95: Double?
        let startup: Double?
        let false_changes: Int
        let taken_back: Int
        let error_pct: Double
        // swiftlint:enable identifier_name
    }

    struct Output: Decodable { let summary: [Row] }

    static func run(events: [String: [OrientationChange]], extraArguments: [String] = []) throws -> [String: Row] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orientd-score-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, changes) in events {
            let lines = changes.map { #"{"t": \#($0.time), "orientation": "\#($0.to.rawValue)"}"# }.joined(
                separator: "\n")
            try (lines + "\n").write(
                to: directory.appendingPathComponent("\(name).events.jsonl"), atomically: true, encoding: .utf8)
        }
        let json = directory.appendingPathComponent("score.json")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "python3", CorpusFixtures.scorer.path, "--corpus", CorpusFixtures.publicDirectory.path,
                "--events", directory.path, "--json", json.path,
            ] + extraArguments
        let errorPipe = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errorPipe
        try process.run()
        let errorText = String(decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ScorerFailed(
                message:
                    "score.py exited \(process.terminationStatus): \(errorText) (make test installs python3 with numpy)"
            )
        }
        let output = try JSONDecoder().decode(Output.self, from: Data(contentsOf: json))
        return Dictionary(uniqueKeysWithValues: output.summary.map { ($0.scenario, $0) })
    }

    struct ScorerFailed: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
