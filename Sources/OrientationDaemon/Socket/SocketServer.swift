import Logging
import NIOCore
import NIOPosix
import OrientationCore
import OrientationProtocol
import SensorCore
import CLinux

#if canImport(Glibc)
import Glibc
#endif

/// Why the socket could not be set up; the message names the path.
public struct SocketSetupError: Error, CustomStringConvertible {
    public let description: String
}

/// The Unix stream socket clients connect to.
enum SocketServer {
    /// Binds `path` (replacing a stale socket file, refusing a live one), applies mode and group, and
    /// accepts connections for the socket front end; or, with socket activation, accepts on the socket systemd
    /// bound (and set mode and group on).
    static func bind(
        _ frontEnd: SocketFrontEnd, configuration: DaemonConfiguration, activated descriptor: Int32? = nil
    ) throws -> ConnectionAcceptor {
        if let descriptor {
            var accepting: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0, accepting == 1 else {
                throw SocketSetupError(
                    description:
                        "cannot use the socket systemd passed (descriptor \(descriptor)): it is not a listening socket")
            }
            return try ConnectionAcceptor(listening: descriptor, ownsListeningSocket: false, frontEnd: frontEnd)
        }
        let path = configuration.socketPath
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        var status = stat()
        if !directory.isEmpty, stat(directory, &status) != 0 || status.st_mode & S_IFMT != S_IFDIR {
            throw SocketSetupError(
                description:
                    """
                    cannot listen on \(path): the directory \(directory) does not exist (create it, or choose \
                    another --socket)
                    """
            )
        }
        try removeStaleSocket(at: path, logger: frontEnd.logger)
        // Bound, listening and given its mode and group under a temporary name in the same directory,
        // then renamed into place: the path appears only once it accepts, so a client that sees the
        // file never gets ECONNREFUSED, nor a socket with the umask's mode. A temporary name too long
        // for a socket address leaves binding in place.
        let temporary = (directory.isEmpty ? "" : directory + "/") + ".orientd-\(getpid()).sock"
        let staging = UnixSocketAddress.make(temporary) != nil ? temporary : path
        guard var address = UnixSocketAddress.make(staging) else {
            throw SocketSetupError(
                description:
                    """
                    cannot listen on \(path): the path is longer than a socket address holds \
                    (\(UnixSocketAddress.maximumPathLength) bytes)
                    """
            )
        }
        if staging != path { unlink(staging) }  // left by a run of the same pid that was killed
        let listening = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listening >= 0 else {
            throw SocketSetupError(description: "cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(listening, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listening, 256) == 0 else {
            let reason = String(cString: strerror(errno))
            close(listening)
            if bound == 0 { unlink(staging) }
            throw SocketSetupError(description: "cannot listen on \(path): \(reason)")
        }
        do {
            if chmod(staging, mode_t(configuration.socketMode)) != 0 {
                throw SocketSetupError(
                    description:
                        """
                        cannot set mode \(String(configuration.socketMode, radix: 8)) on \(path): \
                        \(String(cString: strerror(errno)))
                        """
                )
            }
            if let group = configuration.socketGroup {
                guard let gid = Authorization.groupID(named: group) else {
                    throw SocketSetupError(description: "socket group \"\(group)\" does not exist")
                }
                if chown(staging, uid_t.max, gid) != 0 {
                    throw SocketSetupError(
                        description: "cannot give \(path) to group \(group): \(String(cString: strerror(errno)))")
                }
            }
            if staging != path, rename(staging, path) != 0 {
                throw SocketSetupError(
                    description: "cannot listen on \(path): rename from \(staging): \(String(cString: strerror(errno)))"
                )
            }
            return try ConnectionAcceptor(listening: listening, ownsListeningSocket: true, frontEnd: frontEnd)
        } catch {
            close(listening)
            unlink(staging)
            unlink(path)
            throw error
        }
    }

    /// A socket file whose listener is gone (a crashed run) is removed; one that accepts connections
    /// belongs to a running orientd and is left alone; anything else is not ours to delete.
    static func removeStaleSocket(at path: String, logger: Logger) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw SocketSetupError(description: "\(path) exists and is not a socket; not replacing it")
        }
        if canConnect(to: path) {
            throw SocketSetupError(description: "another orientd is listening on \(path)")
        }
        logger.info("replacing stale socket", metadata: ["socket.path": "\(path)"])
        unlink(path)
    }

    static func canConnect(to path: String) -> Bool {
        guard var address = UnixSocketAddress.make(path) else { return false }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}

/// Peer credentials and the privilege they carry.
enum Authorization {
    /// SO_PEERCRED of a Unix socket: the pid, uid and gid of the process that connected.
    static func peerCredentials(of descriptor: Int32) -> PeerCredentials? {
        var credentials = orientd_peer_credentials()
        var length = socklen_t(MemoryLayout<orientd_peer_credentials>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }

    /// Root, or a member (primary or supplementary) of the control group.
    static func isPrivileged(_ credentials: PeerCredentials, controlGroup: String?) -> Bool {
        if credentials.uid == 0 { return true }
        guard let controlGroup, let controlGID = groupID(named: controlGroup) else { return false }
        if credentials.gid == controlGID { return true }
        guard let user = userName(of: credentials.uid) else { return false }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(user, credentials.gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            _ = getgrouplist(user, credentials.gid, &groups, &count)
        }
        return groups.prefix(Int(max(0, count))).contains(controlGID)
    }

    static func groupID(named name: String) -> gid_t? {
        var group = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getgrnam_r(name, &group, &buffer, buffer.count, &result) == 0, result != nil else {
            return UInt32(name).map { gid_t($0) }
        }
        return group.gr_gid
    }

    static func userName(of uid: UInt32) -> String? {
        var user = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &user, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return String(cString: user.pw_name)
    }
}
