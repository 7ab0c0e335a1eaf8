import Foundation
import Testing

@Suite("orientd check-resolver")
struct CheckResolverCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/resolver")

    func temporaryFile(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orientd-vectors-\(UUID().uuidString).json")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test("the public vectors: one JSON line per step, then the count, exit 0")
    func publicVectors() throws {
        let result = try OrientdProcess.run([
            "check-resolver", Self.fixtures.appendingPathComponent("resolver-vectors.json").path,
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.lines.last == "89 passed, 0 failed")
        #expect(result.lines.count == 90)
        let first = try JSONSerialization.jsonObject(with: Data(result.lines[0].utf8)) as? [String: Any]
        #expect(first?["id"] as? String == "001-T1-R1")
        #expect(first?["step"] as? Int == 0)
        #expect(first?["ok"] as? Bool == true)
    }

    @Test("a failing step prints expected and actual and exits 1")
    func failing() throws {
        let file = try temporaryFile(
            """
            {"vectors": [{"id": "W", "initial": {"deviceOrientation": "portrait", "interfaceOrientation": "portrait",
              "root": {"kind": "scene", "id": "A"}},
              "steps": [{"action": {"type": "deviceOrientation", "value": "landscapeLeft"}, "expect": {"interface": \
              "landscapeLeft"}},
                        {"action": {"type": "deviceOrientation", "value": "portrait"}, "expect": {"interface": \
                        "portrait"}}]}]}
            """)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try OrientdProcess.run(["check-resolver", file.path])
        #expect(result.status == 1)
        #expect(
            result.lines == [
                #"{"id":"W","step":0,"ok":false,"expected":{"interface":"landscapeLeft"},"#
                    + #""actual":{"interface":"landscapeRight"}}"#,
                #"{"id":"W","step":1,"ok":true}"#,
                "1 passed, 1 failed",
            ])
        let failuresOnly = try OrientdProcess.run(["check-resolver", "--failures-only", file.path])
        #expect(failuresOnly.lines.count == 2)
    }

    @Test(
        "a malformed file names the vector and field, exit 65",
        arguments: [
            (
                #"""
                {"vectors": [{"id": "X", "initial": {"interfaceOrientation": "portrait", "root": {"kind": \#
                "scene", "id": "A"}}, "steps": []}]}
                """#,
                #"vectors[0] (id "X").initial.deviceOrientation: missing"#
            ),
            (#"{"vectors": [ "#, "not valid JSON"),
            // A number no Double holds: the decoder's words, not its error value printed by Swift.
            (#"{"vectors": [1e999]}"#, "not valid JSON: "),
        ])
    func malformed(text: String, message: String) throws {
        let file = try temporaryFile(text)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try OrientdProcess.run(["check-resolver", file.path])
        #expect(result.status == 65)
        #expect(result.standardError.contains(file.path))
        #expect(result.standardError.contains(message), "\(result.standardError)")
        for dump in ["DecodingError.Context(", "typeMismatch(", "dataCorrupted(", "Optional("] {
            #expect(!result.standardError.contains(dump), "\(result.standardError)")
        }
    }

    @Test(
        "an unreadable file is named with the reason, exit 66",
        arguments: [
            ("/nonexistent/vectors.json", "No such file or directory"), ("/tmp", "Is a directory"),
        ])
    func unreadable(path: String, reason: String) throws {
        let result = try OrientdProcess.run(["check-resolver", path])
        #expect(result.status == 66)
        #expect(result.standardError == "orientd check-resolver: cannot read \(path): \(reason)\n")
    }
}
