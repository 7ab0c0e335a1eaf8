#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file read whole, to its end (a /proc file's size is 0 to stat, so the size is never asked),
/// or why not, in strerror's words taken from the call that failed: a directory opens and fails at
/// the first read ("Is a directory").
public enum WholeFile {
    public static func read(_ path: String) -> Result<[UInt8], FileReadError> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(FileReadError(code: errno)) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return .failure(FileReadError(code: errno)) }
            guard count > 0 else { return .success(bytes) }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}

/// An errno from reading a file, said by strerror.
public struct FileReadError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public var description: String { String(cString: strerror(code)) }
}
