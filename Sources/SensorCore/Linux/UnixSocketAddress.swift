#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The address of a Unix socket file, shared by the daemon (bind, the stale-socket probe) and the
/// benchmark's client and floor server.
public enum UnixSocketAddress {
    /// The longest path a socket address holds (`sun_path` less its terminating NUL).
    public static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// The address of `path`, or nil when the path does not fit (it is never truncated).
    public static func make(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count <= maximumPathLength else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }
}
