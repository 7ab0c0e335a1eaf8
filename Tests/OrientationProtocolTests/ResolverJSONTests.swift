import Foundation
import Testing
import OrientationCore
@testable import OrientationProtocol

@Suite("Resolver vectors: reading and running")
struct ResolverJSONTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/resolver")

    func load(_ name: String) throws -> ResolverVectorFile {
        try ResolverVectorFile(json: try JSONValue.parse(Data(contentsOf: Self.fixtures.appendingPathComponent(name))))
    }

    @Test("every public vector step passes (Tests/Fixtures/resolver/resolver-vectors.json)")
    func publicVectors() throws {
        let file = try load("resolver-vectors.json")
        #expect(file.vectors.count == 39)
        let results = file.run()
        #expect(results.count == 89)
        for failure in results where !failure.ok {
            Issue.record("\(failure.json.serialized)")
        }
    }

    @Test("orientd's own vectors from 001's tables 2 and 3 and the dismiss pitfall pass")
    func seedTableVectors() throws {
        let results = try load("seed-table-vectors.json").run()
        #expect(results.count == 41)
        for failure in results where !failure.ok {
            Issue.record("\(failure.json.serialized)")
        }
    }

    @Test("a wrong expectation is reported with only the differing fields")
    func failureReport() throws {
        let text = """
            {"vectors": [{"id": "W", "initial": {"deviceOrientation": "portrait", "interfaceOrientation": "portrait",
              "root": {"kind": "scene", "id": "A"}},
              "steps": [{"action": {"type": "deviceOrientation", "value": "landscapeLeft"},
                         "expect": {"interface": "landscapeLeft", "decider": "A", "events": [], "error": null}}]}]}
            """
        let results = try ResolverVectorFile(json: try JSONValue.parse(Data(text.utf8))).run()
        let result = try #require(results.first)
        #expect(!result.ok)
        #expect(result.expected?["interface"] == "landscapeLeft")
        #expect(result.actual?["interface"] == "landscapeRight")
        #expect(result.expected?["decider"] == nil)  // equal fields are left out
        #expect(
            result.json.serialized.hasPrefix(
                #"{"id":"W","step":0,"ok":false,"expected":{"interface":"landscapeLeft","events":[]}"#))
    }

    static let validInitial =
        #"""
        "initial": {"deviceOrientation": "portrait", "interfaceOrientation": "portrait", "root": {"kind": \#
        "scene", "id": "A"}}
        """#

    @Test(
        "malformed files name the vector and the field",
        arguments: [
            (
                #"""
                {"vectors": [{"id": "V1", "initial": {"interfaceOrientation": "portrait", "root": {"kind": \#
                "scene", "id": "A"}}, "steps": []}]}
                """#,
                #"vectors[0] (id "V1").initial.deviceOrientation: missing"#
            ),
            (
                #"""
                {"vectors": [{"id": "V1", \#(validInitial), "steps": [{"action": {"type": "spin"}, "expect": \#
                {}}]}]}
                """#,
                #"vectors[0] (id "V1").steps[0].action.type: unknown action type "spin""#
            ),
            (
                #"""
                {"vectors": [{"id": "V1", \#(validInitial), "steps": [{"action": {"type": "push", "node": \#
                {"kind": "scene", "id": "B", "supported": ["sideways"]}}, "expect": {}}]}]}
                """#,
                #"vectors[0] (id "V1").steps[0].action.node.supported[0]: "sideways" is not a mask name"#
            ),
            (
                #"""
                {"vectors": [{"id": "V1", \#(validInitial), "steps": [{"action": {"type": "setLock", "on": 1}, \#
                "expect": {}}]}]}
                """#,
                #"vectors[0] (id "V1").steps[0].action.on: expected true or false, found a number"#
            ),
            (
                #"""
                {"vectors": [{"id": "V1", \#(validInitial), "steps": [{"action": {"type": "forceRotation", "to": \#
                "unknown"}, "expect": {}}]}]}
                """#,
                #"vectors[0] (id "V1").steps[0].action.to: forceRotation cannot target unknown"#
            ),
            (
                #"""
                {"vectors": [{"id": "V1", "initial": {"deviceOrientation": "portrait", "interfaceOrientation": \#
                "portrait", "root": {"kind": "tab", "id": "t", "tabs": [{"kind": "scene", "id": "A"}], \#
                "selected": 3}}, "steps": []}]}
                """#,
                #"vectors[0] (id "V1").initial.root.selected: selected tab 3 does not exist (1 tabs)"#
            ),
            (
                #"""
                {"vectors": [{"id": "V1", "initial": {"deviceOrientation": "sideways", "interfaceOrientation": \#
                "portrait", "root": {"kind": "scene", "id": "A"}}, "steps": []}]}
                """#,
                #"vectors[0] (id "V1").initial.deviceOrientation: "sideways" is not one of unknown, portrait"#
            ),
            (
                #"""
                {"vectors": [{"id": "V1", \#(validInitial), "steps": [{"action": {"type": "dismiss"}, "expect": \#
                []}]}]}
                """#,
                #"vectors[0] (id "V1").steps[0].expect: expected an object, found an array"#
            ),
            (#"{"vectors": [{"initial": {}}]}"#, "vectors[0].id: missing"),
            (#"{"tests": []}"#, "vectors: missing"),
        ])
    func malformed(text: String, message: String) throws {
        do {
            _ = try ResolverVectorFile(json: try JSONValue.parse(Data(text.utf8)))
            Issue.record("accepted: \(text)")
        } catch let error as JSONFieldError {
            #expect(error.description.hasPrefix(message), "\(error.description)")
        }
    }

    @Test("JSON values keep booleans, numbers and nulls apart and serialise in order")
    func jsonValue() throws {
        let value = try JSONValue.parse(Data(#"{"b": true, "n": 1, "z": null, "s": "a\"\n", "a": [1.5, false]}"#.utf8))
        #expect(value["b"] == .bool(true))
        #expect(value["n"] == .number(1))
        #expect(value["z"] == .null)
        #expect(value["s"] == .string("a\"\n"))
        let ordered = JSONValue.object([("z", 1), ("a", .array([.number(1.5), false, nil])), ("s", "a\"\u{1}")])
        #expect(ordered.serialized == #"{"z":1,"a":[1.5,false,null],"s":"a\"\u0001"}"#)
    }
}
