import Logging
import NIOConcurrencyHelpers
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: datagrams like `READY=1` to the socket in `$NOTIFY_SOCKET`.
public struct SystemdNotifier: Sendable {
    /// The notification socket, or nil when not run by systemd (then every call does nothing).
    public let socketPath: String?
    /// Half the watchdog timeout, when systemd asked for pings (`$WATCHDOG_USEC`, for this pid).
    public let watchdogInterval: Double?

    public init(environment: [String: String]) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        if let usec = environment["WATCHDOG_USEC"].flatMap(UInt64.init), usec > 0,
            environment["WATCHDOG_PID"].map({ $0 == String(getpid()) }) ?? true
        {
            watchdogInterval = Double(usec) / 2e6
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends `state` (e.g. "READY=1\nSTATUS=…"); failures are ignored, as sd_notify's callers do.
    public func notify(_ state: String) {
        guard let socketPath else { return }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(socketPath.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }  // abstract namespace
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
        _ = state.withCString { text in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, text, strlen(text), Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
    }
}

/// Socket activation (sd_listen_fds(3)): the listening socket systemd passes as descriptor 3.
public enum SocketActivation {
    /// The passed descriptor when `$LISTEN_PID` is this process and `$LISTEN_FDS` ≥ 1; the variables
    /// are removed so that children do not inherit them.
    public static func takeListeningDescriptor() -> Int32? {
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pid = getenv("LISTEN_PID").flatMap({ Int32(String(cString: $0)) }), pid == getpid(),
            let count = getenv("LISTEN_FDS").flatMap({ Int(String(cString: $0)) }), count >= 1
        else { return nil }
        let descriptor: Int32 = 3
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return descriptor
    }
}

/// swift-log to standard error, one line per message. Under systemd (`$JOURNAL_STREAM` set) each line
/// starts with the syslog priority (`<4>`) so journald records the level, and carries no timestamp
/// (journald adds its own); otherwise a timestamp and the level name lead.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level {
        get { LogLevelSetting.current }
        set { LogLevelSetting.current = newValue }
    }
    private let label: String
    private let journal: Bool

    public init(label: String, journal: Bool) {
        self.label = label
        self.journal = journal
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(
        level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt
    ) {
        let merged = metadata.merging(explicit ?? [:]) { $1 }
        let details = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.text(of: $0.value))" }.joined(
            separator: " ")
        // One entry, one line: journald starts a new entry at every newline.
        let body = String(
            ("\(label): \(message)" + (details.isEmpty ? "" : " \(details)")).map { $0 == "\n" ? " " : $0 })
        let text: String
        if journal {
            text = "<\(Self.priority(level))>\(body)\n"
        } else {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            var seconds = time_t(now.tv_sec)
            var parts = tm()
            localtime_r(&seconds, &parts)
            let stamp = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 32) { buffer in
                buffer.baseAddress![strftime(buffer.baseAddress!, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)] = 0
                return String(cString: buffer.baseAddress!)
            }
            text = "\(stamp) \(level.rawValue) \(body)\n"
        }
        text.withCString { _ = write(2, $0, strlen($0)) }
    }

    /// A metadata value in words: lists (ServiceLifecycle logs its services and signals as lists)
    /// without Swift's brackets and quotes, an empty one as "none".
    static func text(of value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text): text
        case .stringConvertible(let value): value.description
        case .array(let values): values.isEmpty ? "none" : values.map { text(of: $0) }.joined(separator: ", ")
        case .dictionary(let values):
            values.isEmpty
                ? "none"
                : values.sorted { $0.key < $1.key }.map { "\($0.key)=\(text(of: $0.value))" }.joined(separator: ", ")
        }
    }

    /// syslog priorities: debug 7, info 6, notice 5, warning 4, error 3, critical 2.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}

/// The process-wide log level, changeable at runtime (SIGHUP reload). Read by every log call, on
/// any thread: a lock threads share, so a pthread one (docs/architecture.md, "one lock rule").
public enum LogLevelSetting {
    private static let level = NIOLockedValueBox(Logger.Level.info)
    public static var current: Logger.Level {
        get { level.withLockedValue { $0 } }
        set { level.withLockedValue { $0 = newValue } }
    }
}
