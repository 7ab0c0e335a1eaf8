#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A program run to completion with its output captured (posix_spawnp, not Foundation's Process,
/// which would pull Foundation's internationalization data into the self-contained binary).
public struct ExternalCommand: Sendable, Hashable {
    /// The exit status; 128 + N when killed by signal N; −1 when it could not be started.
    public var status: Int32
    /// What it wrote to standard output.
    public var output: String
    /// What it wrote to standard error (or why it could not be started).
    public var errors: String
    public var arguments: [String]

    public init(status: Int32, output: String, errors: String = "", arguments: [String]) {
        self.status = status
        self.output = output
        self.errors = errors
        self.arguments = arguments
    }

    /// "systemd-hwdb update exited with status 1: <its last line of errors, else of output>".
    public var summary: String {
        let said = errors.split(separator: "\n").last ?? output.split(separator: "\n").last
        return
            """
            \(arguments.joined(separator: " ")) \
            \(status < 0 ? "could not be run" : "exited with status \(status)")\(said.map { ": \($0)" } ?? "")
            """
    }

    /// Runs `arguments` (the first found on PATH) to completion, never through a shell; standard
    /// input is /dev/null.
    public static func run(_ arguments: [String]) -> ExternalCommand {
        var outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0]
        guard pipe(&outPipe) == 0 else { return failed(arguments, errno) }
        guard pipe(&errPipe) == 0 else {
            close(outPipe[0])
            close(outPipe[1])
            return failed(arguments, errno)
        }
        // Close-on-exec: the child gets only the dup2'ed copies, so a reader sees the end of file.
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        close(outPipe[1])
        close(errPipe[1])
        defer {
            close(outPipe[0])
            close(errPipe[0])
        }
        guard spawned == 0 else { return failed(arguments, spawned) }
        // Both pipes drained together: a child filling one while we block on the other would hang.
        var collected: [[UInt8]] = [[], []]
        var open = [outPipe[0], errPipe[0]]
        var buffer = [UInt8](repeating: 0, count: 4096)
        while open.contains(where: { $0 >= 0 }) {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in fds.indices where open[index] >= 0 && fds[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(open[index], $0.baseAddress, $0.count) }
                if count > 0 {
                    collected[index] += buffer[0..<count]
                } else if count == 0 || errno != EINTR {
                    open[index] = -1
                }
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let exit = (status & 0x7f) != 0 ? 128 + (status & 0x7f) : (status >> 8) & 0xff
        return ExternalCommand(
            status: exit, output: String(decoding: collected[0], as: UTF8.self),
            errors: String(decoding: collected[1], as: UTF8.self), arguments: arguments)
    }

    private static func failed(_ arguments: [String], _ code: Int32) -> ExternalCommand {
        ExternalCommand(
            status: -1, output: "", errors: "\(arguments.first ?? ""): \(String(cString: strerror(code)))",
            arguments: arguments)
    }
}
