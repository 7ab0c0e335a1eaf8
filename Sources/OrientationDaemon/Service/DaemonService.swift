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
    /// What the daemon reads: its sensors and switches, as SensorCore's protocols (`orientd serve`
    /// hands it SensorIO's).
    struct Sources: Sendable {
        let display: any AccelerometerSource
        let base: (any AccelerometerSource)?
        let hingeAngle: (any HingeAngleSource)?
        let gyroscope: (any GyroscopeSource)?
        let kinds: [any KindSensorSource]
        let lidSwitch: (any LidSwitchSource)?
        let tabletModeSwitch: TabletModeSwitchAccess?
    }

    private let logger = Logger(label: "orientd.hub")
    private let notifier: SystemdNotifier
    private let hub: OrientationHub
    private let bus: SensorProxyService
    /// Between readiness and the start of the shutdown: when a reload may apply.
    private let ready = NIOLockedValueBox(false)
    private let parts: [DaemonPart]

    /// - Parameters:
    ///   - notifier: readiness, status, watchdog and stopping go to systemd through it.
    ///   - activatedSocket: a listening socket passed by systemd (socket activation), adopted instead
    ///     of binding `configuration.socketPath`.
    ///   - baseSource: a convertible's keyboard-base sensor, when one is to be read.
    ///   - hingeAngleSensor: the device's own hinge-angle sensor, when it has one.
    ///   - gyroscope: a gyroscope in a device of its own, read while the device moves.
    ///   - tabletModeSwitch: uinput, for libinput's tablet-mode switch on a convertible.
    ///   - lidSwitch: the lid switch, which settles closed versus folded back on a convertible.
    ///   - kindSources: light, proximity and compass sources, each sampled while claimed.
    public init(
        configuration: DaemonConfiguration, source: any AccelerometerSource,
        baseSource: (any AccelerometerSource)? = nil,
        hingeAngleSensor: (any HingeAngleSource)? = nil, gyroscope: (any GyroscopeSource)? = nil,
        tabletModeSwitch: TabletModeSwitchAccess? = nil,
        lidSwitch: (any LidSwitchSource)? = nil,
        kindSources: [any KindSensorSource] = [], serverName: String, notifier: SystemdNotifier, activatedSocket: Int32?
    ) {
        self.notifier = notifier
        // One loop for the hub and every connection: ordering without locks. It is SwiftNIO's
        // singleton group's (one thread, `Orientd.main`), which also runs Swift Concurrency's jobs:
        // one event-loop group in the process, one thread asleep at rest. It outlives the daemon,
        // so the parts stop what runs on it, not the loop.
        hub = OrientationHub(
            eventLoop: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, source: source,
            baseSource: baseSource, hingeAngleSensor: hingeAngleSensor, gyroscope: gyroscope, kindSources: kindSources,
            serverName: serverName)
        bus = SensorProxyService(hub: hub)
        parts = Self.parts(
            hub: hub, bus: bus,
            sources: Sources(
                display: source, base: baseSource, hingeAngle: hingeAngleSensor, gyroscope: gyroscope,
                kinds: kindSources,
                lidSwitch: lidSwitch, tabletModeSwitch: tabletModeSwitch),
            configuration: configuration, notifier: notifier, activatedSocket: activatedSocket, ready: ready,
            logger: logger)
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

    /// The one list, built once. Start order is dependency order: the hub is wired to every source
    /// before any source watches; the sensors have said whether they exist before the socket opens
    /// (so the first hello is true); the socket and the bus open before readiness. Stopping runs it
    /// backwards: readiness ends (the hub's shutting-down state: sensors stop, nobody is accepted;
    /// STOPPING=1), the bus's claimants leave, the socket stops accepting then says goodbye, the
    /// switches and sensors stop, the silence alarm's thread ends, the hub's timers last.
    private static func parts(
        hub: OrientationHub, bus: SensorProxyService, sources: Sources, configuration: DaemonConfiguration,
        notifier: SystemdNotifier, activatedSocket: Int32?, ready: NIOLockedValueBox<Bool>, logger: Logger
    ) -> [DaemonPart] {
        let (firstEvent, firstEventSeen) = AsyncStream<Void>.makeStream()
        let convertible = sources.base != nil || sources.hingeAngle != nil
        var parts: [DaemonPart] = [
            .hub(hub) { wire(sources, to: hub, firstEventSeen: firstEventSeen) },
            .silenceAlarm(hub.silenceAlarm),
            .sensor("display-sensor", start: sources.display.start, stop: sources.display.shutdown),
        ]
        if let base = sources.base { parts.append(.sensor("base-sensor", start: base.start, stop: base.shutdown)) }
        if let hingeAngle = sources.hingeAngle {
            parts.append(
                .sensor("hinge-angle-sensor", start: hingeAngle.start, stop: hingeAngle.shutdown))
        }
        if let gyroscope = sources.gyroscope {
            // A gyroscope whose udev watch fails is logged and left out: the accelerometer decides.
            let start: @Sendable () -> Void = {
                do throws(SensorStartError) { try gyroscope.start() } catch { logger.error("\(error)") }
            }
            parts.append(.sensor("gyroscope", start: start, stop: gyroscope.shutdown))
        }
        for kind in sources.kinds {
            // A kind whose udev watch fails is logged and left out, as one never found.
            let start: @Sendable () -> Void = {
                do throws(SensorStartError) { try kind.start() } catch { logger.error("\(error)") }
            }
            parts.append(.sensor("\(kind.kind.rawValue)-sensor", start: start, stop: kind.shutdown))
        }
        if convertible, let lid = sources.lidSwitch {
            // Read from its start, not with the base: its events cost nothing at rest, and a state
            // an event told stays known (EVIOCGSW is not every driver's).
            // A lid switch whose udev watch fails is logged and left out, as a kind's is.
            let start: @Sendable () -> Void = {
                do throws(SensorStartError) { try lid.start() } catch { logger.error("\(error)") }
                lid.startSampling()
            }
            parts.append(.sensor("lid-switch", start: start, stop: lid.shutdown))
        }
        if convertible, let tabletMode = sources.tabletModeSwitch {
            parts.append(.tabletModeSwitch(tabletMode, hub: hub, configuration: configuration))
        }
        parts += [
            .socket(
                hub, configuration: configuration, activated: activatedSocket, firstEvent: firstEvent,
                firstEventSeen: firstEventSeen, logger: logger),
            .bus(bus, configuration: configuration),
            .sleepWatch(hub, logger: logger),
            .readiness(
                hub, notifier: notifier, ready: ready, configuration: configuration, activated: activatedSocket,
                logger: logger),
        ]
        return parts
    }

    /// Connects every source to the hub. The display sensor's detection runs on the sensor's
    /// thread, which wakes the loop only when there is news; `firstEventSeen` hears the display
    /// sensor's first event (the socket waits for it).
    private static func wire(
        _ sources: Sources, to hub: OrientationHub, firstEventSeen: AsyncStream<Void>.Continuation
    ) {
        let loop = hub.eventLoop, detection = hub.detection, hinge = hub.hinge
        // Moved from the sensor's thread with every sample that moves the detector's deadline: the
        // alarm is a timerfd any thread may set without waking anyone, not a hub method.
        let silenceAlarm = hub.silenceAlarm
        sources.display.deliver { event in
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
        for kindSource in sources.kinds {
            let kind = kindSource.kind
            kindSource.outlet.deliver { event in loop.execute { hub.handle(event, of: kind) } }
        }
        if let baseSource = sources.base, let hinge {
            baseSource.deliver { event in
                let outcome = hinge.observe(event, from: .base)
                if case .sample = event, !outcome.isNews { return }
                loop.execute { hub.handleBase(event, outcome: outcome) }
            }
        }
        if let lid = sources.lidSwitch, sources.base != nil || sources.hingeAngle != nil {
            lid.deliver { event in loop.execute { hub.handleLidSwitch(event) } }
        }
        if let gyroscope = sources.gyroscope {
            // Rates go to the detection stage where they come; only the rest wakes the loop.
            gyroscope.deliver { event in
                let givesRates = detection.observe(event)
                if case .rate = event {
                    // The first rate after a read failed: it works again.
                    if givesRates == true { loop.execute { hub.gyroscopeReadsAgain() } }
                    return
                }
                loop.execute { hub.handleGyroscope(event) }
            }
        }
        if let hingeAngleSensor = sources.hingeAngle, let hinge {
            hingeAngleSensor.deliver { reading in
                let outcome = hinge.observe(reading)
                if case .angle = reading, !outcome.isNews { return }
                loop.execute { hub.handleHingeAngle(reading, outcome: outcome) }
            }
        }
    }
}
