import ArgumentParser
import Foundation
import Logging
import OrientationCore
import OrientationDaemon
import SensorCore
import SensorIO
import ServiceLifecycle

/// `orientd serve` (the default): the daemon.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the daemon: read the sensor and serve orientation changes on a Unix socket (the default command).",
        discussion: """
            Clients connect to the socket (default /run/orientd/orientd.sock, or $ORIENTD_SOCKET) and \
            speak protocol v1: JSON objects, one per line (docs/protocol.md). The sensor is sampled \
            only while a client subscribes to device or interface changes. SIGTERM or SIGINT stops the \
            daemon gracefully: every client gets a goodbye message and the socket is removed.

            With --sensor replay:FILE or --sensor stdin the whole daemon runs on the mock sensor.

            Exit status: 0 after a graceful stop, 64 bad options, 69 the sensor cannot be watched, \
            71 the socket cannot be set up (another orientd listening, a missing directory).
            """
    )

    @OptionGroup var sensorOptions: SensorOptions
    @OptionGroup var detector: DetectorOptions

    @Option(help: ArgumentHelp("The socket to listen on (default $ORIENTD_SOCKET or /run/orientd/orientd.sock).", valueName: "path"))
    var socket: String?

    @Option(name: .customLong("socket-mode"), help: ArgumentHelp("Mode of the socket file, octal.", valueName: "mode"))
    var socketMode = "0666"

    @Option(name: .customLong("socket-group"), help: ArgumentHelp("Group of the socket file.", valueName: "group"))
    var socketGroup: String?

    @Option(name: .customLong("control-group"), help: ArgumentHelp("Members of this group may lock rotation and change the system session (besides root).", valueName: "group"))
    var controlGroup: String?

    @Option(help: ArgumentHelp("The system session's idiom: phone or pad (default pad).", valueName: "idiom"))
    var idiom: DeviceIdiom = .pad

    @Option(help: ArgumentHelp("The system session's supported orientations, comma-separated mask names (default all).", valueName: "mask"))
    var supported = "all"

    @Flag(help: "Start with the rotation lock engaged.")
    var locked = false

    @Option(name: .customLong("max-clients"), help: ArgumentHelp("Refuse connections beyond this many clients.", valueName: "n"))
    var maximumClients = 1024

    @Option(name: .customLong("stall-timeout"), help: ArgumentHelp("Disconnect a client that takes no events for this long.", valueName: "seconds"))
    var stallTimeout = 10.0

    @Option(name: .customLong("claim-linger"), help: ArgumentHelp("Keep sampling this long after the last claim ends.", valueName: "seconds"))
    var claimLinger = 2.0

    @Option(name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: Logger.Level = .info

    func run() async throws {
        var configuration = DaemonConfiguration()
        configuration.socketPath = socket ?? ProcessInfo.processInfo.environment["ORIENTD_SOCKET"] ?? configuration.socketPath
        guard let mode = UInt32(socketMode, radix: 8), mode <= 0o777 else { throw ValidationError("--socket-mode: \"\(socketMode)\" is not an octal mode like 0660") }
        configuration.socketMode = mode
        configuration.socketGroup = socketGroup
        configuration.controlGroup = controlGroup
        configuration.idiom = idiom
        var mask: InterfaceOrientationMask = []
        for name in supported.split(separator: ",") {
            guard let named = InterfaceOrientationMask(name: String(name)) else {
                throw ValidationError("--supported: \"\(name)\" is not one of \(InterfaceOrientationMask.namedMasks.map(\.name).joined(separator: ", "))")
            }
            mask.formUnion(named)
        }
        guard !mask.isEmpty else { throw ValidationError("--supported must name at least one orientation") }
        configuration.supportedOrientations = mask
        configuration.lockedAtStart = locked
        guard maximumClients > 0 else { throw ValidationError("--max-clients must be > 0") }
        configuration.maximumClients = maximumClients
        guard stallTimeout > 0, claimLinger >= 0 else { throw ValidationError("--stall-timeout must be > 0 and --claim-linger ≥ 0") }
        configuration.stallTimeout = stallTimeout
        configuration.claimLinger = claimLinger
        configuration.detector = try detector.configuration()
        let sensorConfiguration = try sensorOptions.configuration()

        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "orientd")
        let source: any AccelerometerSource
        do {
            source = try SensorFactory.makeSource(sensorConfiguration)
        } catch {
            logger.critical("\(error)")
            if case .trace = error { throw ExitCode(66) }
            throw ExitCode(69)
        }
        let service = OrientationDaemonService(configuration: configuration, source: source, serverName: "orientd \(orientdVersion)", logger: logger)
        let group = ServiceGroup(configuration: .init(services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as SocketSetupError {
            logger.critical("\(error.description)")
            throw ExitCode(71)
        } catch {
            logger.critical("\(error)")
            throw ExitCode(70)
        }
    }
}

extension DeviceIdiom: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}
