#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import OrientationCore

/// The rotation lock as it is kept across a restart of the daemon, an upgrade of the package and a
/// reboot (`[session] persist-lock`): whether it is engaged, and the device orientation it pins
/// (the system session's pin: portrait on a phone, the orientation shown when it was engaged on a
/// pad). People who lock rotation to read in bed expect it to stay locked after a resume or a
/// reboot; a lock kept only in memory was lost at each.
public struct KeptLock: Sendable, Hashable {
    public var locked: Bool
    public var pin: DeviceOrientation

    public init(locked: Bool, pin: DeviceOrientation) {
        self.locked = locked
        self.pin = pin
    }
}

/// Where and how the lock is kept: `lock` in the unit's state directory (`$STATE_DIRECTORY`, which
/// systemd sets from `StateDirectory=`; `/var/lib/orientd` without it), two `key = value` lines,
/// written atomically (a temporary file beside it, fsync, rename, fsync of the directory), so a
/// power cut leaves the old lock or the new one, never half of one.
public enum KeptLockFile {
    /// The file in `environment`'s state directory (the first of a colon-separated list, as systemd
    /// sets it for several).
    public static func path(environment: [String: String]) -> String {
        let directory =
            environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }
            ?? "/var/lib/orientd"
        return directory + "/lock"
    }

    /// What loading found.
    public enum Loaded: Sendable, Equatable {
        /// No file yet: the defaults hold.
        case missing
        case kept(KeptLock)
        /// Unreadable or corrupt: a warning that names the file; the defaults hold.
        case unusable(String)
    }

    public static func load(path: String) -> Loaded {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            return code == ENOENT ? .missing : .unusable("\(path): cannot be read: \(String(cString: strerror(code)))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while bytes.count <= 4096 {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 { return .unusable("\(path): cannot be read: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        guard bytes.count <= 4096, let text = String(validating: bytes, as: UTF8.self) else {
            return .unusable("\(path): not a lock file (not short UTF-8 text)")
        }
        return parse(text, path: path)
    }

    /// The two lines `locked = true|false` and `pinned = "ORIENTATION"`; comments and blank lines
    /// aside, nothing else.
    static func parse(_ text: String, path: String) -> Loaded {
        var locked: Bool?
        var pin: DeviceOrientation?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: "=", maxSplits: 1).map { String($0.trimmingWhitespace()) }
            guard parts.count == 2 else { return .unusable("\(path):\(index + 1): expected key = value") }
            switch parts[0] {
            case "locked" where parts[1] == "true" || parts[1] == "false":
                locked = parts[1] == "true"
            case "pinned":
                let name =
                    parts[1].hasPrefix("\"") && parts[1].hasSuffix("\"") && parts[1].count >= 2
                    ? String(parts[1].dropFirst().dropLast()) : parts[1]
                guard let orientation = DeviceOrientation(rawValue: name), orientation != .unknown else {
                    return .unusable("\(path):\(index + 1): pinned: \"\(name)\" is no device orientation")
                }
                pin = orientation
            default:
                return .unusable("\(path):\(index + 1): unexpected \"\(line)\"")
            }
        }
        guard let locked, let pin else { return .unusable("\(path): locked or pinned is missing") }
        return .kept(KeptLock(locked: locked, pin: pin))
    }

    static func text(_ lock: KeptLock) -> String {
        """
        # orientd's rotation lock, kept across restarts ([session] persist-lock in orientd.toml).
        locked = \(lock.locked)
        pinned = "\(lock.pin.rawValue)"

        """
    }

    /// Writes `lock` to `path` atomically; the error names the file and what failed.
    public static func save(_ lock: KeptLock, path: String) throws(KeptLockError) {
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw KeptLockError(path: temporary, operation: "create", code: errno) }
        let bytes = Array(text(lock).utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written != bytes.count {
            let code = written < 0 ? errno : EIO
            close(descriptor)
            unlink(temporary)
            throw KeptLockError(path: temporary, operation: "write", code: code)
        }
        if fsync(descriptor) != 0 {
            let code = errno
            close(descriptor)
            unlink(temporary)
            throw KeptLockError(path: temporary, operation: "fsync", code: code)
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw KeptLockError(path: path, operation: "rename", code: code)
        }
        // The rename itself survives a power cut once the directory is synced.
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        let directory = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }
}

/// A lock that could not be written: the file, the step and the system's reason.
public struct KeptLockError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var operation: String
    public var code: Int32

    public var description: String { "\(path): \(operation) failed: \(String(cString: strerror(code)))" }
}
