import CLinux
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// A client's socket for writing without SwiftNIO: a duplicate of the connection's descriptor,
/// owned by this object alone and closed by it (``close()``, or at the latest when it is released).
///
/// Why: SwiftNIO does not give out a channel's descriptor, and its write path (pipeline, pending-write
/// queue, flush, writability) costs about three times the write(2) itself per subscriber; at 1,000
/// subscribers that was most of an event's fan-out time (docs/benchmarks.md §3). The duplicate is
/// ours, so its number cannot be reused for another client while we still hold it, whatever SwiftNIO
/// does with its own descriptor. ``Connection`` writes here only while SwiftNIO has nothing queued for
/// the connection, and hands SwiftNIO whatever the socket does not take, so the bytes stay in order
/// and SwiftNIO still reports when the socket drains.
///
/// Not Sendable: the accepting thread creates it and moves it to the hub's loop (in a
/// `NIOLoopBoundBox`), where alone it is used from then on.
final class SocketWriter {
    /// What one nonblocking write did.
    enum Outcome: Equatable {
        /// This many bytes went to the socket (0 when its buffer is full, or after ``close()``).
        case wrote(Int)
        /// The connection is gone or broken (the errno, e.g. EPIPE or ECONNRESET).
        case failed(Int32)
    }

    private var descriptor: Int32

    /// Takes ownership of `descriptor`.
    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        close()
    }

    /// Writes as much of `buffer` as the socket takes now, never blocking and never raising SIGPIPE.
    func write(_ buffer: ByteBuffer) -> Outcome {
        guard descriptor >= 0 else { return .wrote(0) }
        while true {
            let written = buffer.withUnsafeReadableBytes { bytes in
                send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if written >= 0 { return .wrote(written) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wrote(0)
            case let code: return .failed(code)
            }
        }
    }

    /// What the client has not read yet, in the kernel's count (each queued write's whole buffer);
    /// nil once closed or when the kernel does not say.
    var unreadBytes: Int? {
        guard descriptor >= 0 else { return nil }
        var bytes: Int32 = 0
        return orientd_socket_unread(descriptor, &bytes) == 0 ? Int(bytes) : nil
    }

    /// Closes the duplicate (the connection itself stays open until SwiftNIO closes its descriptor).
    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }
}
