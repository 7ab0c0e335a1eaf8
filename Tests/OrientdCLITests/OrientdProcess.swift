import Foundation

/// Runs the built `orientd` (or another of the package's programs) and captures what it prints.
struct OrientdProcess {
    struct Result {
        let status: Int32
        let standardOutput: String
        let standardError: String
        var lines: [String] { standardOutput.split(separator: "\n").map(String.init) }
    }

    /// The directory SwiftPM builds products into (the test bundle sits there too).
    static let productsDirectory: URL = {
        var url = Bundle.main.bundleURL
        if url.pathExtension == "xctest" { url.deleteLastPathComponent() }
        return url
    }()

    static let executable = productsDirectory.appendingPathComponent("orientd")

    /// Runs `orientd arguments…` (or `program arguments…`) to completion. Input and output go through
    /// temporary files, so no pipe can fill up and no thread has to wait for another.
    static func run(_ arguments: [String], standardInput: String? = nil, program: String = "orientd") throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("orientd-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inputURL = scratch.appendingPathComponent("stdin")
        let outputURL = scratch.appendingPathComponent("stdout")
        let errorURL = scratch.appendingPathComponent("stderr")
        try Data((standardInput ?? "").utf8).write(to: inputURL)
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)

        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent(program)
        process.arguments = arguments
        process.standardInput = try FileHandle(forReadingFrom: inputURL)
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        try process.run()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            standardOutput: try String(contentsOf: outputURL, encoding: .utf8),
            standardError: try String(contentsOf: errorURL, encoding: .utf8))
    }
}
