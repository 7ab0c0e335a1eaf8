import Foundation
import Testing
@testable import OrientationCore

/// docs/detection.md is the detector's specification: its parameter table lists every parameter
/// with its default, and every test it cites by name exists. A parameter added, renamed or given
/// another default without the document, or a test it cites renamed away, fails here.
@Suite("detection.md: the parameter index and the cited tests")
struct DetectionDocTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func document() throws -> String {
        try String(contentsOf: root.appendingPathComponent("docs/detection.md"), encoding: .utf8)
    }

    /// The rows of the parameter table (the one headed `| name | default | unit | range | meaning |`):
    /// (name, the default's number, the range as the code writes it).
    static func parameterRows(_ text: String) -> [(name: String, value: Double?, range: String)] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| name | default | unit | range | meaning |") })
        else { return [] }
        func plain(_ text: String) -> String {
            text.replacingOccurrences(of: "−", with: "-").replacingOccurrences(of: "≥", with: ">=")
        }
        return lines[(header + 2)...].prefix { $0.hasPrefix("|") }.compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 6, cells[1].hasPrefix("`"), cells[1].hasSuffix("`") else { return nil }
            // The default's number: its first word.
            let word = cells[2].split(separator: " ").first.map(String.init) ?? ""
            return (String(cells[1].dropFirst().dropLast()), Double(plain(word)), plain(cells[4]))
        }
    }

    @Test("every detector parameter has a row with its default and its range, and every row is a parameter")
    func parameterTable() throws {
        let rows = Self.parameterRows(try Self.document())
        let defaults = DetectorConfiguration()
        for parameter in DetectorConfiguration.parameters {
            let row = rows.first { $0.name == parameter.name }
            #expect(row != nil, "detection.md lists no \(parameter.name)")
            if let row {
                #expect(row.value == parameter.value(in: defaults), "detection.md: \(parameter.name)'s default")
                #expect(row.range == parameter.range.description, "detection.md: \(parameter.name)'s range")
            }
        }
        for row in rows where !DetectorConfiguration.parameters.contains(where: { $0.name == row.name }) {
            Issue.record("detection.md lists \(row.name), which is no detector parameter")
        }
        #expect(rows.count >= DetectorConfiguration.parameters.count)
    }

    @Test("every test detection.md cites (`SuiteTests` or `SuiteTests.function`) exists")
    func citedTests() throws {
        let text = try Self.document()
        let pattern = try NSRegularExpression(pattern: "`([A-Z][A-Za-z]*Tests)(?:\\.([A-Za-z]+))?`")
        let citations = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (
                String(text[Range(match.range(at: 1), in: text)!]),
                Range(match.range(at: 2), in: text).map { String(text[$0]) }
            )
        }
        #expect(!citations.isEmpty)
        let sources = try FileManager.default.subpathsOfDirectory(
            atPath: Self.root.appendingPathComponent("Tests").path
        )
        .filter { $0.hasSuffix(".swift") }
        .map { try String(contentsOf: Self.root.appendingPathComponent("Tests/\($0)"), encoding: .utf8) }
        for (suite, function) in citations {
            let holder = sources.first { $0.contains("struct \(suite) ") || $0.contains("struct \(suite) {") }
            let found = holder != nil
            #expect(found, "detection.md cites \(suite), which no test file declares")
            if let holder, let function {
                let declared = holder.contains("func \(function)(")
                #expect(declared, "detection.md cites \(suite).\(function), which it lacks")
            }
        }
    }
}
