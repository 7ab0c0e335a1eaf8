import Foundation
import Testing
@testable import OrientationCore

/// docs/detection.md is the detector's specification: one numbered entry per rule, each with the
/// table of the parameters it reads (default and range as the code has them), the tests that pin it
/// and one line of why. A parameter added, renamed, moved to another rule or given another default
/// without the document, a rule without a test, a cited test renamed away, or a document grown past
/// 700 lines fails here.
@Suite("detection.md: the rule index, its parameters and the cited tests")
struct DetectionDocTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func document() throws -> String {
        try String(contentsOf: root.appendingPathComponent("docs/detection.md"), encoding: .utf8)
    }

    /// One entry of the rule index: `### Rule N: title` with the parameter group it lists
    /// (`` (`group`) `` at the heading's end, if any), and its lines up to the next heading.
    struct Entry {
        var number: Int
        var group: String?
        var lines: [Substring]
    }

    static func entries(_ text: String) -> [Entry] {
        var entries: [Entry] = []
        let heading = /^### Rule (\d+): .*?(?:\(`([a-z-]+)`\))?$/
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let match = line.wholeMatch(of: heading) {
                entries.append(Entry(number: Int(match.1)!, group: match.2.map(String.init), lines: []))
            } else if line.hasPrefix("#") {
                if !entries.isEmpty, entries[entries.count - 1].lines.last != "\u{0}" {
                    entries[entries.count - 1].lines.append("\u{0}")  // the entry has ended
                }
            } else if !entries.isEmpty, entries[entries.count - 1].lines.last != "\u{0}" {
                entries[entries.count - 1].lines.append(line)
            }
        }
        return entries
    }

    /// The rows of an entry's parameter table (`| name | default | unit | range | meaning |`):
    /// (name, the default's number, the range as the code writes it).
    static func parameterRows(_ lines: [Substring]) -> [(name: String, value: Double?, range: String)] {
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

    /// Tests cited as `SuiteTests` or `SuiteTests.function` in `text`.
    static func citations(_ text: String) -> [(suite: String, function: String?)] {
        text.matches(of: /`([A-Z][A-Za-z]*Tests)(?:\.([A-Za-z]+))?`/).map { (String($0.1), $0.2.map(String.init)) }
    }

    @Test("the rules are numbered 1, 2, 3, …, and each cites a test that pins it and says why")
    func ruleEntries() throws {
        let entries = Self.entries(try Self.document())
        #expect(entries.count >= 9)
        #expect(entries.map(\.number) == Array(1...entries.count), "rules numbered in order")
        for entry in entries {
            // The paragraph that begins "**Pinned by**".
            let pinned = entry.lines.drop { !$0.hasPrefix("**Pinned by**") }.prefix { !$0.isEmpty }
            #expect(!Self.citations(pinned.joined(separator: " ")).isEmpty, "rule \(entry.number) cites no test")
            #expect(entry.lines.contains { $0.hasPrefix("**Why**") }, "rule \(entry.number) says no why")
            #expect(
                entry.lines.contains { $0.hasPrefix("**Decides**") }, "rule \(entry.number) says not what it decides")
        }
    }

    @Test("every detector parameter has a row with its default and its range in its own rule's entry")
    func parameterTables() throws {
        let entries = Self.entries(try Self.document())
        let defaults = DetectorConfiguration()
        let groups = Set(DetectorConfiguration.parameters.map(\.rule))
        for group in groups {
            let holders = entries.filter { $0.group == group }
            #expect(holders.count == 1, "detection.md has \(holders.count) rule entries for the group \(group)")
        }
        for parameter in DetectorConfiguration.parameters {
            let entry = entries.first { $0.group == parameter.rule }
            let row = entry.flatMap { Self.parameterRows($0.lines).first { $0.name == parameter.name } }
            #expect(row != nil, "detection.md's rule for \(parameter.rule) lists no \(parameter.name)")
            if let row {
                #expect(row.value == parameter.value(in: defaults), "detection.md: \(parameter.name)'s default")
                #expect(row.range == parameter.range.description, "detection.md: \(parameter.name)'s range")
            }
        }
        for entry in entries {
            for row in Self.parameterRows(entry.lines) {
                let parameter = DetectorConfiguration.parameters.first { $0.name == row.name }
                #expect(
                    parameter?.rule == entry.group,
                    "detection.md's rule \(entry.number) lists \(row.name), which is not one of its parameters")
            }
        }
    }

    @Test("every test detection.md cites (`SuiteTests` or `SuiteTests.function`) exists")
    func citedTests() throws {
        let citations = Self.citations(try Self.document())
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

    @Test("detection.md is a specification of at most 700 lines; measurements live in detection-log.md")
    func length() throws {
        let lines = try Self.document().split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 700, "detection.md has \(lines) lines")
        let log = Self.root.appendingPathComponent("docs/detection-log.md").path
        #expect(FileManager.default.fileExists(atPath: log))
    }
}
