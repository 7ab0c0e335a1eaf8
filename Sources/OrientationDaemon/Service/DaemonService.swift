import Logging
import NIOCore
import NIOPosix
import OrientationCore
import OrientationProtocol
import SensorCore
import ServiceLifecycle
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// The daemon as one service: it binds the socket, feeds sensor events to the hub, and on graceful
/// shutdown says goodbye to every client, removes the socket and releases the sensor.
public final class OrientationDaemonService: Service, CustomStringConvertible, Sendable {
    /// ServiceLifecycle names services in its debug log by their description.
    public var description: String { "orientation daemon" }

    private let configuration: DaemonConfiguration
    private let source: any AccelerometerSource
    private let baseSource: (any AccelerometerSource)?
    private let hingeAngleSensor: (any HingeAngleSensor)?
    private let tabletModeSwitch: TabletModeSwitchAccess?
    private let lidSwitch: LidSwitchAccess?
    private let kindSources: [any KindSensorSource]
    private let logger = Logger(label: "orientd.hub")
    private let serverName: String
    private let notifier: SystemdNotifier
    private let activatedSocket: Int32?
    /// A pthread lock, which ThreadSanitizer sees (see ``DetectionStage``).
    private let hubLock = NIOLockedValueBox<OrientationHub?>(nil)
    private let busLock = NIOLockedValueBox<SensorProxyService?>(nil)

    /// - Parameters:
    ///   - notifier: readiness, status, watchdog and stopping go to systemd through it.
    ///   - activatedSocket: a listening socket passed by systemd (socket activation), adopted instead
    ///     of binding `configuration.socketPath`.
    ///   - baseSource: a convertible's keyboard-base sensor, when one is to be read.
    ///   - hingeAngleSensor: the device's own hinge-angle sensor, when it has one.
    ///   - tabletModeSwitch: uinput, for libinput's tablet-mode switch on a convertible.
    ///   - lidSwitch: the lid switch, which settles closed versus folded back on a convertible.
    ///   - kindSources: light, proximity and compass sources, each sampled while claimed.
    public init(
        configuration: DaemonConfiguration, source: any AccelerometerSource,
        baseSource: (any AccelerometerSource)? = nil,
        hingeAngleSensor: (any HingeAngleSensor)? = nil, tabletModeSwitch: TabletModeSwitchAccess? = nil,
        lidSwitch: LidSwitchAccess? = nil,
        kindSources: [any KindSensorSource] = [], serverName: String, notifier: SystemdNotifier, activatedSocket: Int32?
    ) {
        self.kindSources = kindSources
        self.configuration = configuration
        self.source = source
        self.baseSource = baseSource
        self.hingeAngleSensor = hingeAngleSensor
        self.tabletModeSwitch = tabletModeSwitch
        self.lidSwitch = lidSwitch
        self.serverName = serverName
        self.notifier = notifier
        self.activatedSocket = activatedSocket
    }

    /// Applies a re-read configuration (SIGHUP); returns what needs a restart, or nil when the
    /// daemon is not running yet.
    public func reload(_ new: DaemonConfiguration) async -> [String]? {
        guard let hub = hubLock.withLockedValue({ $0 }) else { return nil }
        notifier.notify("RELOADING=1")
        let restart = try? await hub.eventLoop.submit { hub.reload(new) }.get()
        try? await busLock.withLockedValue({ $0 })?.apply(new, atStart: false)
        notifier.notify("READY=1\nSTATUS=\((try? await hub.eventLoop.submit { hub.statusLine }.get()) ?? "")")
        return restart
    }

    public func run() async throws {
        // One loop for the hub and every connection: ordering without locks. It is SwiftNIO's
        // singleton group's (one thread, `Orientd.main`), which also runs Swift Concurrency's jobs:
        // one event-loop group in the process, one thread asleep at rest. It outlives the service,
        // so the list below stops what runs on it, not the loop.
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        // One list of what runs, in start order, stopped in reverse on every way out: a part that
        // fails to start, an error, a normal stop. The sources (watching udev since they were made)
        // stop last, after the last event they pass on is handled.
        var running = RunningParts(logger: logger)
        let source = self.source, baseSource = self.baseSource, hingeAngleSensor = self.hingeAngleSensor,
            kindSources = self.kindSources
        running.started("sensors") {
            hingeAngleSensor?.shutdown()
            for kindSource in kindSources { kindSource.shutdown() }
            source.shutdown()  // returns after the last event was passed on
            baseSource?.shutdown()
        }
        let hub = OrientationHub(
            eventLoop: loop, configuration: configuration, source: source, baseSource: baseSource,
            hingeAngleSensor: hingeAngleSensor, kindSources: kindSources, serverName: serverName)
        let notifier = self.notifier
        hubLock.withLockedValue { $0 = hub }
        // Goodbye to every client (after the socket stopped accepting), the hub's timers and its
        // silence alarm's thread.
        running.started("hub") {
            try? await loop.flatSubmit { hub.closeAll(reason: "orientd is shutting down") }.get()
        }
        let convertible = baseSource != nil || hingeAngleSensor != nil
        if convertible, let access = tabletModeSwitch {
            hub.tabletModeReporter = TabletModeReporter(
                setting: configuration.tabletModeSwitch, uinputPath: configuration.uinputPath,
                probe: access.probe, create: access.create)
        }
        // Every source states at once whether it has a sensor; that first event is handled before
        // the socket opens, so the first hello is already true (and readiness means something).
        let (firstEvent, firstEventSeen) = AsyncStream<Void>.makeStream()
        let detection = hub.detection
        // Moved from the sensor's thread with every sample that moves the detector's deadline: the
        // alarm is a timerfd any thread may set without waking anyone, not a hub method.
        let silenceAlarm = hub.silenceAlarm!
        let hinge = hub.hinge
        source.deliver { event in
            // On the sensor's thread: decide here, and wake the loop only when there is news.
            let detected = detection.observe(event)
            let hinged = hinge?.observe(event, from: .display) ?? HingeStage.Outcome()
            if let deadline = detected.silenceDeadline { silenceAlarm.set(at: deadline) }
            if case .sample = event, !detected.isNews, !hinged.isNews { return }
            loop.execute {
                hub.handle(event, detected: detected.change, tilt: detected.tilt)
                if let gravity = detected.gravity { hub.gravityScaleLearned(gravity) }
                if hinged.isNews { hub.hingeChanged(hinged) }
                if let pace = detected.pace { hub.paceChanged(pace) }
                firstEventSeen.yield()
                firstEventSeen.finish()
            }
        }
        for kindSource in kindSources {
            let kind = kindSource.kind
            kindSource.outlet.deliver { event in loop.execute { hub.handle(event, of: kind) } }
        }
        if let baseSource, let hinge {
            baseSource.deliver { event in
                let outcome = hinge.observe(event, from: .base)
                if case .sample = event, !outcome.isNews { return }
                loop.execute { hub.handleBase(event, outcome: outcome) }
            }
        }
        if let hingeAngleSensor, let hinge {
            logger.info("hinge-angle sensor read with the base", metadata: ["sensor": "\(hingeAngleSensor.name)"])
            hingeAngleSensor.deliver { reading in
                let outcome = hinge.observe(reading)
                if case .lost(let reason) = reading {
                    loop.execute { hub.hingeAngleLost(reason, outcome: outcome) }
                } else if outcome.isNews {
                    loop.execute { hub.hingeChanged(outcome) }
                }
            }
        }
        if convertible, let lidSwitch {
            switch lidSwitch.start({ closed in loop.execute { hub.lidSwitchChanged(closed) } }) {
            case .success(let reading):
                logger.info("lid switch read", metadata: ["input.device": "\(reading.device)"])
                running.started("lid switch") { reading.stop() }
            case .failure(let reason):
                logger.info("no lid switch read: \(reason); near closed and folded back the hinge decides alone")
            }
        }
        // A loop timer, not Task.sleep: that sleeps on a libdispatch global-queue worker, whose
        // first run starts libdispatch's 1 Hz monitor for good (see Orientd.main).
        let timeout = loop.scheduleTask(in: .seconds(2)) { firstEventSeen.finish() }
        for await _ in firstEvent { break }
        timeout.cancel()
        raiseDescriptorLimit(clients: configuration.maximumClients)
        do {
            let acceptor = try SocketServer.bind(hub.socket, configuration: configuration, activated: activatedSocket)
            let socketPath = configuration.socketPath, activated = activatedSocket != nil
            running.started("socket") {
                acceptor.stop()  // no new client from here on, before the goodbye
                if !activated { unlink(socketPath) }  // an activated socket is systemd's
            }
            let bus = SensorProxyService(hub: hub)
            busLock.withLockedValue { $0 = bus }
            try await bus.apply(configuration, atStart: true)
            running.started("net.hadess.SensorProxy") { await bus.stop() }
        } catch {
            await running.stopAll(reason: "a part failed to start")
            throw error
        }
        logger.notice(
            "listening",
            metadata: [
                "socket.path": "\(configuration.socketPath)", "server": "\(serverName)",
                "socket.activated": "\(activatedSocket != nil)",
            ])
        // Ready: the socket accepts connections and the sensor is open or known absent.
        let status =
            (try? await loop.submit {
                hub.statusObserver = { status in notifier.notify("STATUS=\(status)") }  // from now on, every change
                return hub.statusLine
            }.get()) ?? ""
        notifier.notify("READY=1\nSTATUS=\(status)")
        releaseStartupPages(stage: "readiness")
        let laterRelease = loop.scheduleTask(in: StartupPageRelease.secondReleaseDelay) { [self] in
            releaseStartupPages(stage: "first-minute")
        }
        // Watchdog pings come from the hub's own loop, so they stop when the pipeline hangs.
        let watchdog = notifier.watchdogInterval.map { interval in
            loop.scheduleRepeatedTask(initialDelay: .zero, delay: .nanoseconds(Int64(interval * 1e9))) { _ in
                notifier.notify("WATCHDOG=1")
            }
        }

        running.started("readiness timers") {
            watchdog?.cancel()
            laterRelease.cancel()
        }

        try? await gracefulShutdown()

        try? await loop.submit { hub.statusObserver = nil }.get()  // "shutting down" stays the last word
        notifier.notify("STOPPING=1\nSTATUS=shutting down")
        logger.notice("shutting down")
        await running.stopAll(reason: "shutting down")
    }

    /// Code that ran once goes back to the kernel: at readiness, start-up's; a minute later, that of
    /// the first clients and detections (see ``StartupPageRelease``).
    private func releaseStartupPages(stage: String) {
        let outcome = StartupPageRelease.releaseNow()
        if let failure = outcome.failure {
            logger.info("start-up pages kept", metadata: ["stage": "\(stage)", "reason": "\(failure)"])
        }
        logger.debug(
            "start-up pages released",
            metadata: [
                "stage": "\(stage)",
                "advised.kib": "\(outcome.advisedBytes / 1024)",
                "rss.kib.before": "\(outcome.residentKiBBefore.map(String.init) ?? "?")",
                "rss.kib.after": "\(outcome.residentKiBAfter.map(String.init) ?? "?")",
            ])
    }

    /// Every client takes two descriptors (SwiftNIO's and the writer's duplicate); systemd starts
    /// services with a soft limit of 1,024, so the soft limit is raised towards the hard one as far
    /// as `clients` need, and a hard limit too low for them is said at start, not found at the
    /// 500th client.
    private func raiseDescriptorLimit(clients: Int) {
        let needed = rlim_t(2 * clients + 64)
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < needed else { return }
        limit.rlim_cur = min(needed, limit.rlim_max)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 || limit.rlim_cur < needed {
            logger.warning(
                "the open-file limit is too low for the maximum number of clients",
                metadata: [
                    "limit": "\(limit.rlim_cur)", "needed": "\(needed)", "clients.max": "\(clients)",
                ])
        }
    }
}

/// What the daemon has started, in order, each with how it stops: one list for every way out, so a
/// part that fails to start stops everything started before it and a normal stop stops everything
/// in reverse (the bus, then the socket's accepting, the goodbye, the sensors, the loop).
struct RunningParts {
    private var parts: [(name: String, stop: @Sendable () async -> Void)] = []
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// `name` runs from now on; `stop` ends it.
    mutating func started(_ name: String, stop: @escaping @Sendable () async -> Void) {
        parts.append((name, stop))
    }

    /// Stops every part, the last started first.
    mutating func stopAll(reason: String) async {
        for part in parts.reversed() {
            logger.debug("stopping", metadata: ["part": "\(part.name)", "reason": "\(reason)"])
            await part.stop()
        }
        parts = []
    }
}
