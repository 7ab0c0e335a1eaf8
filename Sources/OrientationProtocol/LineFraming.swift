import NIOCore
import OrientationCore

/// Splits a byte stream into lines at `\n` (a `\r` before it is dropped), each at most `maximumLength`
/// bytes. A longer line is not buffered: the decoder fires ``LineTooLongError`` and discards input.
public struct LineFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    public let maximumLength: Int
    private var overflowed = false

    public init(maximumLength: Int = ProtocolV1.maximumLineLength) {
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
        if length > maximumLength + 1
            || (length == maximumLength + 1 && buffer.getInteger(at: newline - 1, as: UInt8.self) != UInt8(ascii: "\r"))
        {
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

    public mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        // A last line without a newline is still a line.
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0, !overflowed {
            let line = buffer.readSlice(length: buffer.readableBytes)!
            context.fireChannelRead(Self.wrapInboundOut(line))
        }
        return .needMoreData
    }
}
