import Foundation
import OrientationProtocol
import Testing

/// Every program of the package answers `--version` with the package's version, which is
/// debian/changelog's.
@Suite("--version")
struct VersionTests {
    @Test("orientd and orientctl print the package's version and exit 0", arguments: ["orientd", "orientctl"])
    func printsThePackageVersion(program: String) throws {
        let result = try OrientdProcess.run(["--version"], program: program)
        #expect(result.status == 0, "\(program) --version: \(result.standardError)")
        #expect(result.standardOutput == orientdPackageVersion + "\n")
    }

    @Test("the version is debian/changelog's")
    func matchesTheChangelog() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let changelog = try String(contentsOf: root.appendingPathComponent("debian/changelog"), encoding: .utf8)
        let firstLine = try #require(changelog.split(separator: "\n").first)
        #expect(firstLine.hasPrefix("orientd (\(orientdPackageVersion)) "), "debian/changelog begins: \(firstLine)")
    }
}
