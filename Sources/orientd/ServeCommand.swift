import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Logging
import OrientationCore
import OrientationDaemon
import OrientationProtocol
import SensorCore
import SensorIO
import ServiceLifecycle
import UnixSignals

/// The daemon's options; each one given overrides the configuration file, which overrides the
/// defaults. Names, help and parsing come from ``DaemonSetting/all``.
struct DaemonOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The configuration file (default \(ConfigurationFile.defaultPath) when it exists).", valueName: "file"))
    var config: String?

    @OptionGroup var sensorOptions: SensorOptions
    @OptionGroup var detector: DetectorOptions
    @Option(name: .customLong("rest-rate"), help: SettingHelp.of("rest-rate")) var restRate: String?
    @Option(name: .customLong("held-rate"), help: SettingHelp.of("held-rate")) var heldRate: String?
    @Option(name: .customLong("gyroscope-rate"), help: SettingHelp.of("gyroscope-rate")) var gyroscopeRate: String?
    @Option(name: .customLong("motion-margin"), help: SettingHelp.of("motion-margin")) var motionMargin: String?

    @Option(name: .customLong("socket"), help: SettingHelp.of("socket")) var socket: String?
    @Option(name: .customLong("socket-mode"), help: SettingHelp.of("socket-mode")) var socketMode: String?
    @Option(name: .customLong("socket-group"), help: SettingHelp.of("socket-group")) var socketGroup: String?
    @Option(name: .customLong("control-group"), help: SettingHelp.of("control-group")) var controlGroup: String?
    @Option(name: .customLong("idiom"), help: SettingHelp.of("idiom")) var idiom: DeviceIdiom?
    @Option(name: .customLong("supported"), help: SettingHelp.of("supported")) var supported: String?
    @Flag(name: .customLong("locked"), inversion: .prefixedNo, help: SettingHelp.of("locked")) var locked: Bool?
    @Flag(name: .customLong("persist-lock"), inversion: .prefixedNo, help: SettingHelp.of("persist-lock"))
    var persistLock: Bool?
    @Option(name: .customLong("max-clients"), help: SettingHelp.of("max-clients")) var maximumClients: String?
    @Option(name: .customLong("stall-timeout"), help: SettingHelp.of("stall-timeout")) var stallTimeout: String?
    @Option(name: .customLong("claim-linger"), help: SettingHelp.of("claim-linger")) var claimLinger: String?
    @Option(name: .customLong("dbus"), help: SettingHelp.of("dbus")) var dbus: DBusMode?
    @Flag(name: .customLong("dbus-polkit"), inversion: .prefixedNo, help: SettingHelp.of("dbus-polkit")) var dbusPolkit:
        Bool?
    @Flag(name: .customLong("dbus-follows-lock"), inversion: .prefixedNo, help: SettingHelp.of("dbus-follows-lock"))
    var dbusFollowsLock: Bool?
    @Option(name: .customLong("base-sensor"), help: SettingHelp.of("base-sensor")) var baseSensor: String?
    @Option(name: .customLong("base-mount-matrix"), help: SettingHelp.of("base-mount-matrix")) var baseMountMatrix:
        String?
    @Flag(name: .customLong("laptop-keeps-normal"), inversion: .prefixedNo, help: SettingHelp.of("laptop-keeps-normal"))
    var laptopKeepsNormal: Bool?
    @Option(name: .customLong("tablet-mode-switch"), help: SettingHelp.of("tablet-mode-switch")) var tabletModeSwitch:
        TabletModeSwitchMode?
    @Option(name: .customLong("log-level"), help: SettingHelp.of("log-level")) var logLevel: Logger.Level?

    /// Defaults, then the file, then these options, for a command: a bad file is printed with its
    /// file and line and exits 78 (EX_CONFIG); a bad option is a usage error (64).
    func resolveForCommand() throws -> (settings: ServeSettings, file: String?) {
        do {
            return try resolve()
        } catch {
            switch error {
            case .file(let problem):
                printError("orientd: \(problem.description)")
                throw ExitCode(78)
            case .option(let message):
                throw ValidationError(message)
            }
        }
    }

    /// Defaults, then the file, then these options; what is wrong, in words, for the caller to
    /// print or log (a reload logs it: the log line carries the file, line and reason).
    func resolve() throws(SettingsError) -> (settings: ServeSettings, file: String?) {
        var settings = ServeSettings()
        var path = config
        if path == nil, FileManager.default.fileExists(atPath: ConfigurationFile.defaultPath) {
            path = ConfigurationFile.defaultPath
        }
        if let path {
            do {
                settings = try ConfigurationFile.load(path: path)
            } catch {
                throw .file(error)
            }
        }
        do {
            try resolveOptions(into: &settings)
        } catch {
            throw .option(error.message)
        }
        return (settings, path)
    }

    private func resolveOptions(into settings: inout ServeSettings) throws(ValidationError) {
        if let environment = ProcessInfo.processInfo.environment["ORIENTD_SOCKET"] {
            try SettingHelp.apply([("socket", environment)], to: &settings)
        }
        // Typed apart from the sensor's options: Swift 6.2 (Debian's, which builds the arm64 package)
        // gives up type-checking the whole sum at once.
        let given: [(option: String, value: String?)] = [
            ("rest-rate", restRate), ("held-rate", heldRate), ("gyroscope-rate", gyroscopeRate),
            ("motion-margin", motionMargin), ("socket", socket),
            ("socket-mode", socketMode),
            ("socket-group", socketGroup), ("control-group", controlGroup),
            ("idiom", idiom?.rawValue), ("supported", supported), ("locked", locked.map { "\($0)" }),
            ("persist-lock", persistLock.map { "\($0)" }),
            ("max-clients", maximumClients),
            ("stall-timeout", stallTimeout), ("claim-linger", claimLinger), ("dbus", dbus?.rawValue),
            ("dbus-polkit", dbusPolkit.map { "\($0)" }), ("dbus-follows-lock", dbusFollowsLock.map { "\($0)" }),
            ("base-sensor", baseSensor), ("base-mount-matrix", baseMountMatrix),
            ("laptop-keeps-normal", laptopKeepsNormal.map { "\($0)" }),
            ("tablet-mode-switch", tabletModeSwitch?.rawValue), ("log-level", logLevel?.rawValue),
        ]
        try SettingHelp.apply(sensorOptions.given + given, to: &settings)
        settings.daemon.detector = try detector.configuration(base: settings.daemon.detector)
    }
}

/// Why the settings could not be put together.
enum SettingsError: Error, CustomStringConvertible {
    /// The configuration file: its description names the file, the line and the expected form.
    case file(ConfigurationError)
    /// An option or $ORIENTD_SOCKET.
    case option(String)

    var description: String {
        switch self {
        case .file(let problem): problem.description
        case .option(let message): message
        }
    }
}

/// `orientd serve` (the default): the daemon.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Run the daemon: read the sensor and serve orientation changes on a Unix socket (the default command).",
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

    /// For the tests of the one lifecycle (docs/testing.md), hidden from --help, which is for users.
    @Option(
        help: ArgumentHelp(
            "Testing: PART throws instead of starting, and everything started before it stops.", valueName: "part",
            visibility: .hidden))
    var failAtStart: String?

    @Flag(
        help: ArgumentHelp(
            "Testing: hold before anything is made (the sources, the hub, the parts) and after the last part "
                + "stops, each time until standard input gives a line, so that /proc can be read.",
            visibility: .hidden))
    var hold = false

    /// The lock kept across restarts (`persist-lock`), if any, becomes the lock at start; a file that
    /// cannot be read or makes no sense is a warning naming it, and the configured lock holds.
    static func restoreLock(
        into configuration: inout DaemonConfiguration, environment: [String: String], logger: Logger
    ) {
        let path = KeptLockFile.path(environment: environment)
        configuration.keptLockPath = path
        switch KeptLockFile.load(path: path) {
        case .missing:
            logger.debug("no rotation lock kept yet", metadata: ["file": "\(path)"])
        case .kept(let lock):
            configuration.lockedAtStart = lock.locked
            configuration.lockPinAtStart = lock.pin
            logger.info(
                "rotation lock restored: \(lock.locked ? "locked, pinned \(lock.pin.rawValue)" : "unlocked")",
                metadata: ["file": "\(path)"])
        case .unusable(let problem):
            let configured = "the lock starts as configured (locked = \(configuration.lockedAtStart))"
            logger.warning("rotation lock not restored: \(problem); \(configured)")
        }
    }

    func run() async throws {
        let (settings, file) = try options.resolveForCommand()
        var (configuration, sensorConfiguration, level) = (settings.daemon, settings.sensor, settings.logLevel)
        if let pace = configuration.samplingPace() { sensorConfiguration.firstValueWithin = 1 / pace.restRate }
        let environment = ProcessInfo.processInfo.environment
        let journal = environment["JOURNAL_STREAM"] != nil
        LogLevelSetting.current = level
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label, journal: journal) }
        let logger = Logger(label: "orientd")
        if let file { logger.info("configuration read", metadata: ["config.file": "\(file)"]) }
        if !ConcurrencyOnEventLoop.installed {
            let why = "its workqueue monitor wakes the daemon once a second"
            logger.warning("Swift Concurrency runs on libdispatch's global queues: \(why)")
        }
        logger.debug("effective configuration", metadata: ConfigurationFile.metadata(settings))
        if configuration.persistLock {
            Self.restoreLock(into: &configuration, environment: environment, logger: logger)
        }
        // Before anything is made: what the parts open, they open in `start` and close in `stop`, so
        // the process holds after the last stop what it held here (Tests/integration/test_lifecycle.py).
        if hold { Self.hold("before the first part starts") }
        let source: any AccelerometerSource
        do {
            source = try SensorFactory.makeSource(sensorConfiguration)
        } catch {
            logger.critical("\(error)")
            if case .trace = error { throw ExitCode(66) }
            throw ExitCode(69)
        }
        // A convertible's base sensor is an extra: without it the daemon serves as on a tablet.
        var baseSource: (any AccelerometerSource)?
        if let baseConfiguration = settings.baseSensorConfiguration {
            do {
                baseSource = try SensorFactory.makeSource(baseConfiguration)
            } catch {
                logger.error("base sensor: \(error); no hinge angle or mode")
            }
        }
        // A device that measures its own hinge (read where a base sensor would be), watched for as
        // the base is.
        let hingeAngleSensor: (any HingeAngleSource)? =
            settings.baseSensor == .none || !sensorConfiguration.specification.isLocal ? nil : UdevHingeAngleSource()
        // Light and proximity are served where the accelerometer is a local one (the mock sensors
        // stand for a device without them); a kind whose udev watch fails is logged and left out.
        let kindSources: [any KindSensorSource] =
            sensorConfiguration.specification.isLocal ? SensorKind.allCases.map { UdevKindSource(kind: $0) } : []
        // A gyroscope in a device of its own, read at the accelerometer's rate while the device moves
        // (its faster rate while something wants one: the accelerometer's read pace says).
        let gyroscope: (any GyroscopeSource)? =
            sensorConfiguration.specification.isLocal
            ? UdevGyroscopeSource(interval: 1 / sensorConfiguration.rate, pace: source.readPace) : nil
        let service = OrientationDaemonService(
            configuration: configuration, source: source, baseSource: baseSource, hingeAngleSensor: hingeAngleSensor,
            gyroscope: gyroscope,
            tabletModeSwitch: TabletModeSwitchAccess(
                probe: { path in
                    (
                        UInputTabletModeSwitch.isWritable(path),
                        InputSwitches.devices(with: InputEvent.tabletModeSwitch).map(\.name)
                    )
                },
                create: { path throws(InputDeviceError) in try UInputTabletModeSwitch(path: path) }),
            lidSwitch: EvdevLidSwitchSource(),
            kindSources: kindSources, serverName: "orientd \(orientdPackageVersion)",
            notifier: SystemdNotifier(environment: environment),
            activatedSocket: SocketActivation.takeListeningDescriptor())

        // Until the reload service traps SIGHUP, one must not end the daemon (its default action).
        signal(SIGHUP, SIG_IGN)
        let reload = ConfigurationReloadService(
            options: options, daemon: service, runningSensor: sensorConfiguration,
            runningBaseSensor: settings.baseSensorConfiguration, logger: logger)
        if let failAtStart, !service.partNames.contains(failAtStart) {
            let parts = service.partNames.joined(separator: ", ")
            throw ValidationError("--fail-at-start: no part \"\(failAtStart)\" here; the parts are \(parts)")
        }
        let group = ServiceGroup(
            configuration: .init(
                services: service.services(failingAtStart: failAtStart)
                    + [
                        .init(
                            service: reload, successTerminationBehavior: .gracefullyShutdownGroup,
                            failureTerminationBehavior: .gracefullyShutdownGroup)
                    ],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        defer { if hold { Self.hold("after the last part stopped") } }
        do {
            try await group.run()
        } catch let error as InjectedStartFailure {
            logger.critical("\(error)")
            throw ExitCode(70)
        } catch let error as SensorStartError {
            logger.critical("\(error)")
            throw ExitCode(69)
        } catch let error as SocketSetupError {
            logger.critical("\(error.description)")
            throw ExitCode(71)
        } catch let error as SystemBusError {
            logger.critical("--dbus on: \(error.description)")
            throw ExitCode(69)
        } catch {
            logger.critical("\(error)")
            throw ExitCode(70)
        }
    }
}

extension ServeCommand {
    /// `--hold`: waits for a line on standard input (or its end), so that a test can read the
    /// process's threads and descriptors from /proc at this point. Nothing else runs meanwhile.
    static func hold(_ moment: String) {
        Logger(label: "orientd").notice("holding \(moment) (--hold); a line on standard input goes on")
        _ = readLine()
    }
}

/// SIGHUP: reads the configuration again (defaults, file, the same options) and applies what can
/// change without a restart, logging what cannot. A service of the daemon's group, so the signal is
/// trapped for as long as the daemon runs and the service ends with the group.
struct ConfigurationReloadService: Service, CustomStringConvertible {
    /// ServiceLifecycle names services in its debug log by their description (not a dump of the options).
    var description: String { "configuration reload on SIGHUP" }
    let options: DaemonOptions
    let daemon: OrientationDaemonService
    let runningSensor: SensorConfiguration
    let runningBaseSensor: SensorConfiguration?
    let logger: Logger

    /// Why `cancelWhenGracefulShutdown` and not `cancelOnGracefulShutdown()`: the latter merges the
    /// signals with the shutdown through swift-async-algorithms' `merge`, whose `next()` holds a lock
    /// across `withUnsafeThrowingContinuation` (apple/swift-async-algorithms#430). Swift 6.3 may
    /// re-enqueue that job before the closure runs; on the one-thread executor orientd installs,
    /// the merge's other task then waited for the lock on the only thread, and SIGTERM after a
    /// SIGHUP left the daemon hanging about once in 200 runs (gdb showed the thread in
    /// MergeStorage's lock). Cancelling the signal loop's task needs no lock of the kind.
    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            // An AsyncStream underneath: its iteration ends when the task is cancelled.
            for await _ in await UnixSignalsSequence(trapping: .sighup) { await reload() }
        }
    }

    private func reload() async {
        do {
            let (new, _) = try options.resolve()
            LogLevelSetting.current = new.logLevel
            var restart = await daemon.reload(new.daemon) ?? []
            if new.sensor != runningSensor { restart.append("sensor settings") }
            if new.baseSensorConfiguration != runningBaseSensor { restart.append("base sensor settings") }
            logger.notice(
                "configuration reloaded",
                metadata: restart.isEmpty ? [:] : ["needs.restart": "\(restart.joined(separator: ", "))"])
        } catch {
            logger.error("configuration reload failed, keeping the running configuration: \(error.description)")
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

            With --example it prints the commented example instead: every setting with what it does \
            and its default (the file installed as \(ConfigurationFile.defaultPath)).
            """
    )

    @Argument(help: ArgumentHelp("The configuration file.", valueName: "file"))
    var file: String?

    @Flag(help: "Print the commented example configuration (every setting, its help and its default) and exit.")
    var example = false

    @Flag(help: "Print the manual page orientd.toml(5), in troff, and exit.")
    var manualPage = false

    @OptionGroup var options: DaemonOptions

    func run() throws {
        if example {
            print(ConfigurationFile.example, terminator: "")
            return
        }
        if manualPage {
            print(ConfigurationFile.manualPage(version: orientdPackageVersion), terminator: "")
            return
        }
        var options = self.options
        options.config = file ?? options.config ?? ConfigurationFile.defaultPath
        print(ConfigurationFile.render(try options.resolveForCommand().settings), terminator: "")
    }
}
