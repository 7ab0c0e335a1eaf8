import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Logging
import OrientationCore
import OrientationDaemon
import SensorCore
import SensorIO
import ServiceLifecycle

/// The daemon's options; each one given overrides the configuration file, which overrides the
/// defaults.
struct DaemonOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The configuration file (default \(ConfigurationFile.defaultPath) when it exists).", valueName: "file"))
    var config: String?

    @OptionGroup var sensorOptions: SensorOptions
    @OptionGroup var detector: DetectorOptions

    @Option(help: ArgumentHelp("The socket to listen on (default $ORIENTD_SOCKET or /run/orientd/orientd.sock).", valueName: "path"))
    var socket: String?

    @Option(name: .customLong("socket-mode"), help: ArgumentHelp("Mode of the socket file, octal (default 0666).", valueName: "mode"))
    var socketMode: String?

    @Option(name: .customLong("socket-group"), help: ArgumentHelp("Group of the socket file.", valueName: "group"))
    var socketGroup: String?

    @Option(name: .customLong("control-group"), help: ArgumentHelp("Members of this group may lock rotation and change the system session (besides root).", valueName: "group"))
    var controlGroup: String?

    @Option(help: ArgumentHelp("The system session's idiom: phone or pad (default pad).", valueName: "idiom"))
    var idiom: DeviceIdiom?

    @Option(help: ArgumentHelp("The system session's supported orientations, comma-separated mask names (default all).", valueName: "mask"))
    var supported: String?

    @Flag(inversion: .prefixedNo, help: "Start with the rotation lock engaged (default off).")
    var locked: Bool?

    @Option(name: .customLong("max-clients"), help: ArgumentHelp("Refuse connections beyond this many clients (default 1024).", valueName: "n"))
    var maximumClients: Int?

    @Option(name: .customLong("stall-timeout"), help: ArgumentHelp("Disconnect a client that takes no events for this long (default 10).", valueName: "seconds"))
    var stallTimeout: Double?

    @Option(name: .customLong("claim-linger"), help: ArgumentHelp("Keep sampling this long after the last claim ends (default 2).", valueName: "seconds"))
    var claimLinger: Double?

    @Option(name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info (default), notice, warning, error or critical.", valueName: "level"))
    var logLevel: Logger.Level?

    /// Defaults, then the file, then these options. A bad file exits 78 (EX_CONFIG) with file and line.
    func resolve() throws -> (daemon: DaemonConfiguration, sensor: SensorConfiguration, logLevel: Logger.Level, file: String?) {
        var daemon = DaemonConfiguration()
        var sensor = SensorConfiguration()
        var level = Logger.Level.info
        var file: String?
        var path = config
        if path == nil, FileManager.default.fileExists(atPath: ConfigurationFile.defaultPath) { path = ConfigurationFile.defaultPath }
        if let path {
            let values: ConfigurationValues
            do {
                values = try ConfigurationFile.load(path: path)
            } catch {
                printError("orientd: \(error.description)")
                throw ExitCode(78)
            }
            file = path
            if let value = values.sensor { sensor.specification = value }
            if let value = values.mountMatrix { sensor.mountMatrix = value }
            if let value = values.rate { sensor.rate = value }
            if let value = values.acquisition { sensor.acquisition = value }
            for (name, value) in values.detector { try? daemon.detector.set(name, to: value) }
            if let value = values.idiom { daemon.idiom = value }
            if let value = values.supported { daemon.supportedOrientations = value }
            if let value = values.locked { daemon.lockedAtStart = value }
            if let value = values.socketPath { daemon.socketPath = value }
            if let value = values.socketMode { daemon.socketMode = value }
            if let value = values.socketGroup { daemon.socketGroup = value }
            if let value = values.controlGroup { daemon.controlGroup = value }
            if let value = values.maximumClients { daemon.maximumClients = value }
            if let value = values.stallTimeout { daemon.stallTimeout = value }
            if let value = values.claimLinger { daemon.claimLinger = value }
            if let value = values.logLevel, let parsed = Logger.Level(rawValue: value) { level = parsed }
        }
        if let environment = ProcessInfo.processInfo.environment["ORIENTD_SOCKET"] { daemon.socketPath = environment }
        if let socket { daemon.socketPath = socket }
        if let socketMode {
            guard let mode = UInt32(socketMode, radix: 8), mode <= 0o777 else { throw ValidationError("--socket-mode: \"\(socketMode)\" is not an octal mode like 0660") }
            daemon.socketMode = mode
        }
        if let socketGroup { daemon.socketGroup = socketGroup }
        if let controlGroup { daemon.controlGroup = controlGroup }
        if let idiom { daemon.idiom = idiom }
        if let supported {
            var mask: InterfaceOrientationMask = []
            for name in supported.split(separator: ",") {
                guard let named = InterfaceOrientationMask(name: String(name)) else {
                    throw ValidationError("--supported: \"\(name)\" is not one of \(InterfaceOrientationMask.namedMasks.map(\.name).joined(separator: ", "))")
                }
                mask.formUnion(named)
            }
            guard !mask.isEmpty else { throw ValidationError("--supported must name at least one orientation") }
            daemon.supportedOrientations = mask
        }
        if let locked { daemon.lockedAtStart = locked }
        if let maximumClients {
            guard maximumClients > 0 else { throw ValidationError("--max-clients must be > 0") }
            daemon.maximumClients = maximumClients
        }
        if let stallTimeout {
            guard stallTimeout > 0 else { throw ValidationError("--stall-timeout must be > 0") }
            daemon.stallTimeout = stallTimeout
        }
        if let claimLinger {
            guard claimLinger >= 0 else { throw ValidationError("--claim-linger must be ≥ 0") }
            daemon.claimLinger = claimLinger
        }
        if let logLevel { level = logLevel }
        daemon.detector = try detector.configuration(base: daemon.detector)
        sensor = try sensorOptions.configuration(base: sensor)
        return (daemon, sensor, level, file)
    }
}

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

            Settings come from the defaults, then the configuration file (--config, or \
            /etc/orientd/orientd.toml when it exists), then the options given here.

            With --sensor replay:FILE or --sensor stdin the whole daemon runs on the mock sensor.

            Exit status: 0 after a graceful stop, 64 bad options, 66 unreadable trace, 69 the sensor \
            cannot be watched, 71 the socket cannot be set up, 78 an invalid configuration file.
            """
    )

    @OptionGroup var options: DaemonOptions

    func run() async throws {
        let (configuration, sensorConfiguration, level, file) = try options.resolve()
        let environment = ProcessInfo.processInfo.environment
        let journal = environment["JOURNAL_STREAM"] != nil
        LogLevelSetting.current = level
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label, journal: journal) }
        let logger = Logger(label: "orientd")
        if let file { logger.info("configuration read", metadata: ["config.file": "\(file)"]) }
        let source: any AccelerometerSource
        do {
            source = try SensorFactory.makeSource(sensorConfiguration)
        } catch {
            logger.critical("\(error)")
            if case .trace = error { throw ExitCode(66) }
            throw ExitCode(69)
        }
        let service = OrientationDaemonService(
            configuration: configuration, source: source, serverName: "orientd \(orientdVersion)",
            notifier: SystemdNotifier(environment: environment), activatedSocket: SocketActivation.takeListeningDescriptor())

        // SIGHUP: read the configuration again and apply what can change without a restart.
        signal(SIGHUP, SIG_IGN)
        let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        let options = self.options
        hangup.setEventHandler {
            Task {
                do {
                    let (new, newSensor, newLevel, _) = try options.resolve()
                    LogLevelSetting.current = newLevel
                    var restart = await service.reload(new) ?? []
                    if newSensor != sensorConfiguration { restart.append("sensor settings") }
                    logger.notice("configuration reloaded", metadata: restart.isEmpty ? [:] : ["needs.restart": "\(restart.joined(separator: ", "))"])
                } catch {
                    logger.error("configuration reload failed; keeping the running configuration", metadata: ["error": "\(error)"])
                }
            }
        }
        hangup.resume()
        defer { hangup.cancel() }

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

/// `orientd check-config [FILE]`: validates a configuration file and prints the effective settings.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a configuration file and print the effective configuration.",
        discussion: """
            FILE defaults to \(ConfigurationFile.defaultPath). The effective configuration (defaults, \
            the file, and any options given, as serve would use them) is printed in the file's format. \
            An invalid file is reported with file, line and the expected form; exit status 78.
            """
    )

    @Argument(help: ArgumentHelp("The configuration file.", valueName: "file"))
    var file: String?

    @OptionGroup var options: DaemonOptions

    func run() throws {
        var options = self.options
        options.config = file ?? options.config ?? ConfigurationFile.defaultPath
        let (daemon, sensor, level, _) = try options.resolve()
        print(ConfigurationRendering.render(daemon, sensor: sensor, logLevel: level.rawValue), terminator: "")
    }
}

extension DeviceIdiom: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}
