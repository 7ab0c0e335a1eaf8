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

/// The daemon as its parts: the hub, its silence alarm, each sensor, the lid and tablet-mode
/// switches, the socket, net.hadess.SensorProxy and readiness, in one list (``parts``), run as the
/// services of one `ServiceGroup` (``services(failingAtStart:)``), started in that order and
/// stopped in reverse on every way out (see ``PartService``).
public final class OrientationDaemonService: Sendable {
    private let configuration: DaemonConfiguration
    private let source: any AccelerometerSource
    private let baseSource: (any AccelerometerSource)?
    private let hingeAngleSensor: (any HingeAngleSensor)?
    private let tabletModeSwitch: TabletModeSwitchAccess?
    private let lidSwitch: LidSwitchAccess?
    private let kindSources: [any KindSensorSource]
    private let logger = Logger(label: "orientd.hub")
    private let notifier: SystemdNotifier
    private let activatedSocket: Int32?
    private let hub: OrientationHub
    private let bus: SensorProxyService
    /// Between readiness and the start of the shutdown: when a reload may apply.
    private let ready = NIOLockedValueBox(false)

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
        self.notifier = notifier
        self.activatedSocket = activatedSocket
        // One loop for the hub and every connection: ordering without locks. It is SwiftNIO's
        // singleton group's (one thread, `Orientd.main`), which also runs Swift Concurrency's jobs:
        // one event-loop group in the process, one thread asleep at rest. It outlives the daemon,
        // so the parts stop what runs on it, not the loop.
        hub = OrientationHub(
            eventLoop: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, source: source,
            baseSource: baseSource, hingeAngleSensor: hingeAngleSensor, kindSources: kindSources,
            serverName: serverName)
        bus = SensorProxyService(hub: hub)
    }

    /// Applies a re-read configuration (SIGHUP); returns what needs a restart, or nil when the
    /// daemon is not running (not ready yet, or stopping).
    public func reload(_ new: DaemonConfiguration) async -> [String]? {
        guard ready.withLockedValue({ $0 }) else { return nil }
        let hub = self.hub
        notifier.notify("RELOADING=1")
        let restart = try? await hub.eventLoop.submit { hub.reload(new) }.get()
        try? await bus.apply(new, atStart: false)
        notifier.notify("READY=1\nSTATUS=\((try? await hub.eventLoop.submit { hub.statusLine }.get()) ?? "")")
        return restart
    }

    /// The parts as the services of one `ServiceGroup`, in start order; `failingAtStart` names a
    /// part that throws instead of starting (`--fail-at-start`, for tests).
    public func services(failingAtStart: String? = nil) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        PartService.chain(parts, failingAtStart: failingAtStart, logger: logger)
    }

    /// Every part's name, in start order.
    public var partNames: [String] { parts.map(\.name) }

    /// The one list. Start order is dependency order: the hub is wired to every source before any
    /// source watches; the sensors have said whether they exist before the socket opens (so the
    /// first hello is true); the socket and the bus open before readiness. Stopping runs it
    /// backwards: readiness ends (STOPPING=1, the hub's shutting-down state: sensors stop, nobody is
    /// accepted), the bus's claimants leave, the socket stops accepting then says goodbye, the
    /// switches and sensors stop, the silence alarm's thread ends, the hub's timers last.
    private var parts: [DaemonPart] {
        let hub = self.hub, loop = hub.eventLoop, logger = self.logger, configuration = self.configuration
        let (firstEvent, firstEventSeen) = AsyncStream<Void>.makeStream()
        let convertible = baseSource != nil || hingeAngleSensor != nil
        var parts: [DaemonPart] = []

        parts.append(
            DaemonPart(
                "hub", start: { [self] in wire(to: hub, firstEventSeen: firstEventSeen) },
                stop: { try? await loop.submit { hub.stopTimers() }.get() }))
        parts.append(
            DaemonPart(
                "silence-alarm", start: { hub.silenceAlarm.start() }, stop: { hub.silenceAlarm.stop() }))

        let source = self.source
        parts.append(
            DaemonPart(
                "display-sensor", start: { try source.start() },
                stop: { source.shutdown() }))  // returns after the last event was passed on
        if let baseSource {
            parts.append(
                DaemonPart("base-sensor", start: { try baseSource.start() }, stop: { baseSource.shutdown() }))
        }
        if let hingeAngleSensor {
            parts.append(
                DaemonPart(
                    "hinge-angle-sensor",
                    start: {
                        try hingeAngleSensor.start()
                        logger.info(
                            "hinge-angle sensor read with the base", metadata: ["sensor": "\(hingeAngleSensor.name)"])
                    }, stop: { hingeAngleSensor.shutdown() }))
        }
        for kindSource in kindSources {
            parts.append(
                DaemonPart(
                    "\(kindSource.kind.rawValue)-sensor",
                    start: {
                        // A kind whose udev watch fails is logged and left out, as one never found.
                        do throws(SensorStartError) {
                            try kindSource.start()
                        } catch {
                            logger.error("\(error)")
                        }
                    }, stop: { kindSource.shutdown() }))
        }

        if convertible, let lidSwitch {
            let stopReading = NIOLockedValueBox<(@Sendable () -> Void)?>(nil)
            parts.append(
                DaemonPart(
                    "lid-switch",
                    start: {
                        switch lidSwitch.start({ closed in loop.execute { hub.lidSwitchChanged(closed) } }) {
                        case .success(let started):
                            logger.info("lid switch read", metadata: ["input.device": "\(started.device)"])
                            stopReading.withLockedValue { $0 = started.stop }
                        case .failure(let reason):
                            logger.info(
                                "no lid switch read: \(reason); near closed and folded back the hinge decides alone")
                        }
                    },
                    stop: {
                        stopReading.withLockedValue { $0 }?()
                        stopReading.withLockedValue { $0 = nil }
                    }))
        }
        if convertible, let access = tabletModeSwitch {
            parts.append(
                DaemonPart(
                    "tablet-mode-switch",
                    start: {
                        try await loop.submit {
                            hub.tabletModeReporter = TabletModeReporter(
                                setting: configuration.tabletModeSwitch, uinputPath: configuration.uinputPath,
                                probe: access.probe, create: access.create)
                        }.get()
                    },
                    stop: {
                        try? await loop.submit {
                            hub.tabletModeReporter?.stop()
                            hub.tabletModeReporter = nil
                        }.get()
                    }))
        }

        let activatedSocket = self.activatedSocket
        let acceptor = NIOLockedValueBox<ConnectionAcceptor?>(nil)
        parts.append(
            DaemonPart(
                "socket",
                start: { [self] in
                    // Every source states at once whether it has a sensor; that first event is
                    // handled before the socket opens, so the first hello is already true. A loop
                    // timer, not Task.sleep: that sleeps on a libdispatch global-queue worker,
                    // whose first run starts libdispatch's 1 Hz monitor for good (see Orientd.main).
                    let timeout = loop.scheduleTask(in: .seconds(2)) { firstEventSeen.finish() }
                    for await _ in firstEvent { break }
                    timeout.cancel()
                    raiseDescriptorLimit(clients: configuration.maximumClients)
                    let bound = try SocketServer.bind(
                        hub.socket, configuration: configuration, activated: activatedSocket)
                    acceptor.withLockedValue { $0 = bound }
                },
                stop: {
                    guard let bound = acceptor.withLockedValue({ $0 }) else { return }
                    bound.stop()  // no new client from here on, before the goodbye
                    try? await loop.flatSubmit {
                        hub.beginShutdown()
                        return hub.closeAll(reason: "orientd is shutting down")
                    }.get()
                    if activatedSocket == nil { unlink(configuration.socketPath) }  // an activated one is systemd's
                }))

        let bus = self.bus
        parts.append(
            DaemonPart(
                "dbus", start: { try await bus.apply(configuration, atStart: true) }, stop: { await bus.stop() }))

        let notifier = self.notifier, ready = self.ready
        let timers = NIOLockedValueBox<[Scheduled<Void>]>([])
        let watchdog = NIOLockedValueBox<RepeatedTask?>(nil)
        parts.append(
            DaemonPart(
                "readiness",
                start: { [self] in
                    // Ready: the socket accepts connections, the sensor is open or known absent, and
                    // the bus is served or known not to be ("listening" has meant all three).
                    logger.notice(
                        "listening",
                        metadata: [
                            "socket.path": "\(configuration.socketPath)", "server": "\(hub.serverName)",
                            "socket.activated": "\(activatedSocket != nil)",
                        ])
                    let status = try await loop.submit {
                        hub.statusObserver = { status in notifier.notify("STATUS=\(status)") }  // every change
                        return hub.statusLine
                    }.get()
                    ready.withLockedValue { $0 = true }
                    notifier.notify("READY=1\nSTATUS=\(status)")
                    releaseStartupPages(stage: "readiness")
                    let laterRelease = loop.scheduleTask(in: StartupPageRelease.secondReleaseDelay) { [self] in
                        releaseStartupPages(stage: "first-minute")
                    }
                    timers.withLockedValue { $0 = [laterRelease] }
                    // Watchdog pings come from the hub's own loop, so they stop when the pipeline hangs.
                    let pings = notifier.watchdogInterval.map { interval in
                        loop.scheduleRepeatedTask(initialDelay: .zero, delay: .nanoseconds(Int64(interval * 1e9))) {
                            _ in
                            notifier.notify("WATCHDOG=1")
                        }
                    }
                    watchdog.withLockedValue { $0 = pings }
                },
                stop: {
                    ready.withLockedValue { $0 = false }
                    watchdog.withLockedValue { $0 }?.cancel()
                    for timer in timers.withLockedValue({ $0 }) { timer.cancel() }
                    // "shutting down" stays systemd's last word; the hub stops its sensors and
                    // accepts nobody from here on.
                    try? await loop.submit {
                        hub.statusObserver = nil
                        hub.beginShutdown()
                    }.get()
                    notifier.notify("STOPPING=1\nSTATUS=shutting down")
                    logger.notice("shutting down")
                }))
        return parts
    }

    /// Connects every source to the hub. The display sensor's detection runs on the sensor's
    /// thread, which wakes the loop only when there is news; `firstEventSeen` hears the display
    /// sensor's first event (the socket waits for it).
    private func wire(to hub: OrientationHub, firstEventSeen: AsyncStream<Void>.Continuation) {
        let loop = hub.eventLoop, detection = hub.detection, hinge = hub.hinge
        // Moved from the sensor's thread with every sample that moves the detector's deadline: the
        // alarm is a timerfd any thread may set without waking anyone, not a hub method.
        let silenceAlarm = hub.silenceAlarm
        source.deliver { event in
            let detected = detection.observe(event)
            let hinged = hinge?.observe(event, from: .display) ?? HingeStage.Outcome()
            if let deadline = detected.silenceDeadline { silenceAlarm.set(at: deadline) }
            if case .sample = event, !detected.isNews, !hinged.isNews { return }
            loop.execute {
                hub.handle(event, detection: detected, hinge: hinged)
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
            hingeAngleSensor.deliver { reading in
                let outcome = hinge.observe(reading)
                if case .lost(let reason) = reading {
                    loop.execute { hub.hingeAngleLost(reason, outcome: outcome) }
                } else if outcome.isNews {
                    loop.execute { hub.hingeChanged(outcome) }
                }
            }
        }
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
