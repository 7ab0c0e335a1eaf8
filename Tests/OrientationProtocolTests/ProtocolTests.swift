import Foundation
import NIOCore
import NIOEmbedded
import Testing
import OrientationCore
@testable import OrientationProtocol

@Suite("Protocol v1 framing and requests")
struct ProtocolTests {
    func lines(_ chunks: [String], maximum: Int = 16) throws -> (lines: [String], tooLong: Bool) {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFrameDecoder(maximumLength: maximum)))
        var tooLong = false
        for chunk in chunks {
            do {
                try channel.writeInbound(ByteBuffer(string: chunk))
            } catch is LineFrameDecoder.LineTooLongError {
                tooLong = true
            }
        }
        var result: [String] = []
        while let buffer = try channel.readInbound(as: ByteBuffer.self) { result.append(String(buffer: buffer)) }
        _ = try? channel.finish()
        return (result, tooLong)
    }

    @Test("lines are split at newlines across chunks, carriage returns dropped")
    func framing() throws {
        let result = try lines(["{\"a\"", ":1}\n{\"b\":2}\r\n\n", "x\n"])
        #expect(result.lines == ["{\"a\":1}", "{\"b\":2}", "", "x"])
        #expect(!result.tooLong)
    }

    @Test("a line at the limit passes; one byte more is refused, even before its newline arrives")
    func limit() throws {
        #expect(try lines([String(repeating: "a", count: 16) + "\n"]).lines.count == 1)
        #expect(try lines([String(repeating: "a", count: 17) + "\n"]).tooLong)
        #expect(try lines([String(repeating: "a", count: 40)]).tooLong)
    }

    @Test("requests need an object with a number or string id and a string op")
    func parsing() {
        func parse(_ text: String) -> Result<Request, Request.Rejection> { Request.parse(ByteBuffer(string: text)) }
        guard case .success(let request) = parse(#"{"id": "a", "op": "get", "x": 1}"#) else {
            Issue.record("refused")
            return
        }
        #expect(request.id == "a")
        #expect(request.op == "get")
        for (text, id) in [
            ("[]", JSONValue.null), ("nonsense", .null), (#"{"op":"get"}"#, .null), (#"{"id":true,"op":"get"}"#, .null),
            (#"{"id":5}"#, .number(5)), (#"{"id":5,"op":7}"#, .number(5)),
        ] {
            guard case .failure(let rejection) = parse(text) else {
                Issue.record("accepted \(text)")
                continue
            }
            #expect(rejection.id == id, "\(text)")
            #expect(rejection.error.code == .badRequest)
        }
    }

    @Test("the state reads back from its JSON")
    func stateRoundTrip() throws {
        var state = DaemonState(
            device: .faceUp, interface: .landscapeLeft, sensor: .active, locked: true, sensorName: "iio:device0")
        #expect(try DaemonState(json: JSONReader(state.json)) == state)
        state.sensor = .failed
        state.faults = [
            SensorFaultState(
                kind: "axis-stuck", device: "iio:device0", detail: "the z axis…", since: "2026-11-26T08:01:02Z"),
            SensorFaultState(kind: "read-failed", device: "iio:device0", detail: "EIO", since: "2026-11-26T08:01:03Z"),
        ]
        #expect(try DaemonState(json: JSONReader(state.json)) == state)
        #expect(
            state.json.serialized.contains(
                #"""
                "faults":[{"kind":"axis-stuck","device":"iio:device0","detail":"the z \#
                axis…","since":"2026-11-26T08:01:02Z"}
                """#
            ))
        state.tilt = .tiltedUp
        #expect(try DaemonState(json: JSONReader(state.json)) == state)
        #expect(state.json.serialized.contains(#""tilt":"tiltedUp""#))
        // A server older than the fields sends none: no faults and no tilt, not an error.
        var older = state.json
        if case .object(let members) = older {
            older = .object(members.filter { $0.key != "faults" && $0.key != "tilt" })
        }
        #expect(try DaemonState(json: JSONReader(older)).faults.isEmpty)
        #expect(try DaemonState(json: JSONReader(older)).tilt == nil)
        // A malformed one names the field.
        if case .object(let members) = older {
            let bad = JSONValue.object(members + [("faults", .array([.object([("kind", .number(1))])]))])
            #expect(throws: JSONFieldError.self) { try DaemonState(json: JSONReader(bad)) }
        }
    }

    @Test("each kind's state reads back from its JSON, in the members its kind names; a wrong type names the field")
    func kindsRoundTrip() throws {
        var state = DaemonState(device: .portrait, interface: .portrait, sensor: .active)
        state.kinds[.light] = KindSensorState(
            sensor: "hwmon:applesmc.768", unit: .vendor, reading: .light(level: 42, unit: .vendor))
        state.kinds[.proximity] = KindSensorState(sensor: "iio:device2", reading: .proximity(near: true))
        state.kinds[.compass] = KindSensorState(sensor: "iio:device3")
        #expect(try DaemonState(json: JSONReader(state.json)) == state)
        let text = state.json.serialized
        #expect(text.contains(#""light":{"sensor":"hwmon:applesmc.768","level":42,"unit":"vendor"}"#), "\(text)")
        #expect(text.contains(#""proximity":{"sensor":"iio:device2","near":true}"#), "\(text)")
        #expect(text.contains(#""heading":{"sensor":"iio:device3","degrees":null}"#), "\(text)")
        #expect(SensorKind.json(.proximity(near: false)) == .string("far"))
        for (kind, member, value) in [
            (SensorKind.proximity, "near", JSONValue.string("near")), (.light, "unit", .string("candela")),
            (.compass, "degrees", .bool(true)),
        ] {
            let bad = JSONValue.object([("sensor", .string("iio:device9")), (member, value)])
            #expect(throws: JSONFieldError.self, "\(kind).\(member)") { try kind.state(json: JSONReader(bad)) }
        }
    }

    func decode(_ text: String) -> Result<ClientRequest, ProtocolError> {
        guard case .success(let request) = Request.parse(ByteBuffer(string: text)) else {
            return .failure(.badRequest("unparsed"))
        }
        return request.decode()
    }

    @Test("requests decode into the values the hub acts on")
    func decoding() throws {
        #expect(try decode(#"{"id":1,"op":"get"}"#).get() == .get)
        #expect(
            try decode(#"{"id":1,"op":"subscribe","topics":["lock","device"]}"#).get() == .subscribe([.lock, .device]))
        #expect(try decode(#"{"id":1,"op":"lock","on":false}"#).get() == .lock(false))
        #expect(
            try decode(#"{"id":1,"op":"system.setSupportedOrientations","mask":["portrait","landscapeLeft"]}"#).get()
                == .setSystemSupportedOrientations([.portrait, .landscapeLeft]))
        #expect(try decode(#"{"id":1,"op":"session.open"}"#).get() == .openSession(initial: nil))
        #expect(
            try decode(#"{"id":1,"op":"scene.push","node":{"kind":"scene","id":"A"},"container":"nav"}"#).get()
                == .scene(.scenePush, .push(.scene("A"), container: "nav")))
        // scene.update names its scene `scene`, because `id` is the request's.
        #expect(
            try decode(#"{"id":7,"op":"scene.update","scene":"A","preferred":null}"#).get()
                == .scene(.sceneUpdate, .updateScene(id: "A", preferred: .set(nil))))
        for operation in Operation.allCases where operation.rawValue.hasPrefix("scene.") {
            #expect(operation.sceneActionType != nil, "\(operation)")
        }
    }

    @Test(
        "a bad request names the op or the field",
        arguments: [
            (#"{"id":1,"op":"explode"}"#, "unknown-op", "unknown op \"explode\""),
            (#"{"id":1,"op":"subscribe","topics":"device"}"#, "bad-request", "topics: expected an array"),
            (#"{"id":1,"op":"subscribe","topics":["session"]}"#, "bad-request", "topics[0]: unknown topic \"session\""),
            (#"{"id":1,"op":"lock"}"#, "bad-request", "on: missing"),
            (#"{"id":1,"op":"system.setSupportedOrientations","mask":[]}"#, "bad-request", "mask must not be empty"),
            (
                #"{"id":1,"op":"scene.update","preferred":"portrait"}"#, "bad-request",
                "scene.update: missing field scene"
            ),
            (
                #"{"id":1,"op":"scene.forceRotation","to":"unknown"}"#, "bad-request",
                "to: forceRotation cannot target unknown"
            ),
        ])
    func refusals(text: String, code: String, message: String) {
        guard case .failure(let error) = decode(text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(error.code.rawValue == code)
        #expect(error.message.contains(message), "\(error.message)")
    }

    /// docs/protocol.md, which clients read instead of the code.
    static let document = try? String(
        contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/protocol.md"), encoding: .utf8)

    @Test("every op, topic and error code of the vocabulary is in docs/protocol.md")
    func documented() throws {
        let document = try #require(Self.document)
        for operation in Operation.allCases {
            #expect(document.contains("`\(operation.rawValue)`"), "\(operation.rawValue)")
        }
        for topic in Topic.allCases { #expect(document.contains("`\(topic.rawValue)`"), "\(topic.rawValue)") }
        for code in ProtocolErrorCode.protocolCodes + ResolverError.Code.allCases.map(ProtocolErrorCode.init) {
            #expect(document.contains("`\(code.rawValue)`"), "\(code.rawValue)")
        }
    }
}
