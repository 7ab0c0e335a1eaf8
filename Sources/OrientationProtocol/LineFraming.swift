import NIOCore
import OrientationCore

/// Splits a byte stream into lines at `\n` (a `\r` before it is dropped), each at most `maximumLength`
/// bytes. A longer line is not buffered: the decoder fires ``LineTooLongError`` and discards input.
public struct LineFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    public let maximumLength: Int
    private var overflowed = false

    public init(maximumLength: Int = OrientationProtocol.maximumLineLength) {
        self.maximumLength = maximumLength
    }

    public struct LineTooLongError: Error, Sendable {}

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if overflowed {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > maximumLength {
                overflowed = true
                buffer.moveReaderIndex(to: buffer.writerIndex)
                throw LineTooLongError()
            }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex
        if length > maximumLength + 1 || (length == maximumLength + 1 && buffer.getInteger(at: newline - 1, as: UInt8.self) != UInt8(ascii: "\r")) {
            overflowed = true
            buffer.moveReaderIndex(to: buffer.writerIndex)
            throw LineTooLongError()
        }
        var line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        if line.readableBytes > 0, line.getInteger(at: line.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "\r") {
            line.moveWriterIndex(to: line.writerIndex - 1)
        }
        context.fireChannelRead(Self.wrapInboundOut(line))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A last line without a newline is still a line.
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0, !overflowed {
            let line = buffer.readSlice(length: buffer.readableBytes)!
            context.fireChannelRead(Self.wrapInboundOut(line))
        }
        return .needMoreData
    }
}

/// Parses a request line: a JSON object with `id` (number or string) and `op` (string).
public struct Request: Sendable {
    public let id: JSONValue
    public let op: String
    public let body: JSONReader

    /// A line that is not a usable request: the error to reply with, and the id (null when unreadable).
    public struct Rejection: Error, Sendable {
        public let id: JSONValue
        public let error: ProtocolError
    }

    /// Fails with a `bad-request` error that names the problem; `id` is null when it could not be read.
    public static func parse(_ bytes: ByteBuffer) -> Result<Request, Rejection> {
        guard let text = bytes.getString(at: bytes.readerIndex, length: bytes.readableBytes),
              text.utf8.elementsEqual(bytes.readableBytesView) else {
            return .failure(Rejection(id: .null, error: .badRequest("the line is not valid UTF-8")))
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(Array(text.utf8))
        } catch {
            return .failure(Rejection(id: .null, error: .badRequest("the line is not a JSON object")))
        }
        guard case .object = value else { return .failure(Rejection(id: .null, error: .badRequest("the line is not a JSON object"))) }
        let reader = JSONReader(value)
        let id = value["id"] ?? .null
        switch id {
        case .number, .string: break
        case .null: return .failure(Rejection(id: .null, error: .badRequest("missing field id (a number or string)")))
        default: return .failure(Rejection(id: .null, error: .badRequest("field id must be a number or a string")))
        }
        guard let opValue = value["op"] else { return .failure(Rejection(id: id, error: .badRequest("missing field op"))) }
        guard case .string(let op) = opValue else { return .failure(Rejection(id: id, error: .badRequest("field op must be a string"))) }
        return .success(Request(id: id, op: op, body: reader))
    }
}
