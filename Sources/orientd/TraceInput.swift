#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A trace file (or standard input) read line by line through stdio, so that large traces and live
/// pipes are read as they come instead of being loaded whole.
final class TraceInput {
    /// The name used in error messages: the path, or "<stdin>".
    let displayName: String
    /// Set when reading stopped because of an I/O error rather than the end of the file.
    private(set) var readError: String?
    private let file: UnsafeMutablePointer<FILE>
    private let ownsFile: Bool
    private var buffer: UnsafeMutablePointer<CChar>?
    private var capacity = 0

    struct OpenError: Error, CustomStringConvertible {
        let path: String
        let errno: Int32
        var description: String { "cannot open \(path): \(String(cString: strerror(errno)))" }
    }

    init(path: String) throws {
        if path == "-" {
            guard let standardInput = fdopen(0, "r") else { throw OpenError(path: "<stdin>", errno: errno) }
            file = standardInput
            ownsFile = false
            displayName = "<stdin>"
        } else {
            guard let opened = fopen(path, "r") else { throw OpenError(path: path, errno: errno) }
            file = opened
            ownsFile = true
            displayName = path
        }
    }

    deinit {
        free(buffer)
        if ownsFile { fclose(file) }
    }

    /// The next line without its newline, or nil at the end (or on an error, see ``readError``).
    func readLine() -> String? {
        let length = getline(&buffer, &capacity, file)
        guard length >= 0, let buffer else {
            if ferror(file) != 0 { readError = String(cString: strerror(errno)) }
            return nil
        }
        return String(decoding: UnsafeRawBufferPointer(start: buffer, count: length), as: UTF8.self)
    }
}
