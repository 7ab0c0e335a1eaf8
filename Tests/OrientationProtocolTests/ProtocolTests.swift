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
        guard case .success(let request) = parse(#"{"id": "a", "op": "get", "x": 1}"#) else { Issue.record("refused"); return }
        #expect(request.id == "a")
        #expect(request.op == "get")
        for (text, id) in [("[]", JSONValue.null), ("nonsense", .null), (#"{"op":"get"}"#, .null), (#"{"id":true,"op":"get"}"#, .null),
                           (#"{"id":5}"#, .number(5)), (#"{"id":5,"op":7}"#, .number(5))] {
            guard case .failure(let rejection) = parse(text) else { Issue.record("accepted \(text)"); continue }
            #expect(rejection.id == id, "\(text)")
            #expect(rejection.error.code == .badRequest)
        }
    }

    @Test("the state reads back from its JSON")
    func stateRoundTrip() throws {
        let state = DaemonState(device: .faceUp, interface: .landscapeLeft, sensor: .active, locked: true, sensorName: "iio:device0")
        #expect(try DaemonState(json: JSONReader(state.json)) == state)
    }
}
