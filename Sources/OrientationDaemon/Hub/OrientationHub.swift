import Logging
import NIOConcurrencyHelpers
import NIOCore
import OrientationCore
import OrientationProtocol
import SensorCore

/// The shell around ``HubStateMachine``: it feeds the machine its inputs (sensor events, front
/// ends' requests, timers) with the time they happened, and performs the actions it returns (the
/// sensor sampling or not, timers, events to the front end, systemd's status line, the log).
///
/// Confined to one event loop (the one all connections run on), so it needs no locks and events go
/// out in the order they happen: its mutable state is bound to the loop (``LoopState``), which every
/// access checks.
public final class OrientationHub: Sendable {
    public let eventLoop: any EventLoop
    /// `orientd.hub` (requests, claims, shutdown).
    let logger = Logger(label: "orientd.hub")
    /// `orientd.sensor` (sensor events).
    let sensorLogger = Logger(label: "orientd.sensor")
    private let source: any AccelerometerSource
    /// A convertible's keyboard-base sensor, when one is read.
    private let baseSource: (any AccelerometerSource)?
    /// The hinge-angle source (on every local device with a base source: it watches for a sensor),
    /// sampled with the base.
    private let hingeAngleSensor: (any HingeAngleSource)?
    /// Light, proximity and compass: each sampled while its topic is claimed.
    private let kindSources: [SensorKind: any KindSensorSource]
    /// A gyroscope of its own: the detection stage switches it; a sleep stops it with the rest.
    private let gyroscope: (any GyroscopeSource)?
    /// Shared with the sensor's thread, which feeds it (see ``DetectionStage``).
    let detection: DetectionStage
    /// The hinge angle and mode, fed by both sensors' threads; nil without a base sensor.
    let hinge: HingeStage?
    /// `orientd 0.9.0`, for hello and the log.
    let serverName: String
    /// Saves the lock when it changes (`persist-lock`), off the loop.
    private let lockKeeper: LockKeeper?
    /// The Unix socket's front end, made at its first use (from any thread; the part that binds
    /// the socket is not on the loop).
    private let socketFrontEnd = NIOLockedValueBox<SocketFrontEnd?>(nil)
    /// Goes off when the display sensor has been silent for the detector's timeout (see
    /// ``armSilenceAlarm()``). Its thread runs while the daemon's "silence alarm" part does.
    let silenceAlarm: MonotonicAlarm
    private let loopState: NIOLoopBoundBox<LoopState>

    /// What the hub changes, on its loop only.
    private final class LoopState {
        /// Told a one-line summary whenever the state or the number of clients changes (systemd
        /// STATUS=), at most once a second (see ``StatusThrottle``).
        var statusObserver: (@Sendable (String) -> Void)?
        var statusThrottle = StatusThrottle(interval: 1)
        var kindFaultLogs: [SensorKind: FaultLogLimiter] = [:]
        var machine: HubStateMachine
        /// net.hadess.SensorProxy's claimants, while the daemon serves the system bus.
        var sensorProxy: SensorProxyFrontEnd?
        /// libinput's tablet-mode switch, on a convertible.
        var tabletModeReporter: TabletModeReporter?
        var stopTask: Scheduled<Void>?
        var hingeCheckTask: Scheduled<Void>?
        /// The base sensor was found and not lost since (``holdDisplayPace()``).
        var basePresent = false
        /// Every fault episode changes the status; the log hears of each kind at most every 10 s.
        var faultLog = FaultLogLimiter()
        var baseFaultLog = FaultLogLimiter()
        /// The display sensor's matrix last announced, to log a change of it (a hwdb entry installed).
        var sensorMatrix: MountMatrix?
        /// How the display sensor waits at rest, as last announced (``SensorDescription/restPacing``).
        var sensorRestPacing: String?
        /// The gyroscope the sensor's description last named, as logged.
        var sensorGyroscope: String?
        /// The display sensor reads an IMU's gyroscope (its rates are the fused ones), and why that
        /// cannot be read now, as last logged.
        var sensorReadsGyroscope = false
        var sensorGyroscopeProblem: String?
        /// The display sensor's mount-matrix warnings, as last logged.
        var sensorMatrixProblems: [String] = []
        /// The gyroscope of its own found (`iio:device2 (gyro_3d)`), nil: none.
        var ownGyroscope: String?
        /// ``perform(_:)`` is carrying out a list: it must not be entered again.
        var performing = false
        /// Listeners whose connection closed while a list was carried out (a write that failed closes
        /// the socket, and SwiftNIO reports that at once): disconnected after the list, in it.
        var closedWhilePerforming: [ListenerID] = []
        /// How many listeners were disconnected that way (the tests' evidence that none nested).
        var disconnectsDeferred = 0
        /// Who waits for the sensors to stop before the system sleeps (logind's delay inhibitor).
        var sleepReady: [@Sendable () -> Void] = []
        /// What the bus front end was last handed to follow (nil: nothing yet).
        var busView: BusView?

        init(machine: HubStateMachine) {
            self.machine = machine
        }
    }

    /// The one door to the loop's state: SwiftNIO checks that the caller is on the loop.
    private var onLoop: LoopState { loopState.value }

    /// The hub the silence alarm rings into, set once `init` has made it.
    private struct WeakHub: Sendable {
        weak var hub: OrientationHub?
    }

    /// The Unix socket's clients.
    var socket: SocketFrontEnd {
        socketFrontEnd.withLockedValue { frontEnd in
            if let frontEnd { return frontEnd }
            let made = SocketFrontEnd(hub: self, serverName: serverName)
            frontEnd = made
            return made
        }
    }

    var statusObserver: (@Sendable (String) -> Void)? {
        get { onLoop.statusObserver }
        set { onLoop.statusObserver = newValue }
    }
    var sensorProxy: SensorProxyFrontEnd? {
        get { onLoop.sensorProxy }
        set { onLoop.sensorProxy = newValue }
    }
    var tabletModeReporter: TabletModeReporter? {
        get { onLoop.tabletModeReporter }
        set { onLoop.tabletModeReporter = newValue }
    }

    public init(
        eventLoop: any EventLoop, configuration: DaemonConfiguration, source: any AccelerometerSource,
        baseSource: (any AccelerometerSource)? = nil, hingeAngleSensor: (any HingeAngleSource)? = nil,
        gyroscope: (any GyroscopeSource)? = nil, kindSources: [any KindSensorSource] = [], serverName: String
    ) {
        self.eventLoop = eventLoop
        self.kindSources = Dictionary(kindSources.map { ($0.kind, $0) }, uniquingKeysWith: { first, _ in first })
        self.source = source
        self.baseSource = baseSource
        self.hingeAngleSensor = hingeAngleSensor
        self.gyroscope = gyroscope
        self.serverName = serverName
        lockKeeper = configuration.keptLockPath.map { LockKeeper(path: $0) }
        detection = DetectionStage(
            configuration: configuration.detector, pace: configuration.samplingPace(), readPace: source.readPace,
            gyroscopeSwitch: Self.gyroscopeSwitch(gyroscope))
        let convertible = baseSource != nil || hingeAngleSensor != nil
        hinge = convertible ? HingeStage(configuration: configuration.hinge) : nil
        let machine = HubStateMachine(configuration: configuration, hasBaseSensor: convertible)
        let launchError = machine.systemSessionLaunchError
        loopState = NIOLoopBoundBox.makeBoxSendingValue(LoopState(machine: machine), eventLoop: eventLoop)
        // Made before `self` is, so the alarm finds the hub through `ringing`, as weakly as before.
        let ringing = NIOLockedValueBox(WeakHub())
        silenceAlarm = MonotonicAlarm(name: "orientd-silence") {
            guard let hub = ringing.withLockedValue({ $0.hub }) else { return }
            eventLoop.execute { hub.silenceAlarmRang() }
        }
        ringing.withLockedValue { $0.hub = self }
        if let error = launchError {
            logger.error("system session cannot start", metadata: ["error": "\(error)"])
        }
    }

    /// How the detection stage switches a gyroscope of its own on and off.
    private static func gyroscopeSwitch(_ gyroscope: (any GyroscopeSource)?) -> (@Sendable (Bool) -> Void)? {
        guard let gyroscope else { return nil }
        return { on in
            if on { gyroscope.startSampling() } else { gyroscope.stopSampling() }
        }
    }

    var configuration: DaemonConfiguration { onLoop.machine.configuration }
    var state: DaemonState { onLoop.machine.state }
    var seq: Int { onLoop.machine.seq }
    /// The sensor of `kind` is sampling and its first reading has not come yet.
    func awaitsFirstReading(_ kind: SensorKind) -> Bool { onLoop.machine.awaitingFirstReading.contains(kind) }
    /// Listeners whose connection closed during an action list and were disconnected after it.
    var disconnectsDeferred: Int { onLoop.disconnectsDeferred }
    /// The summary systemd shows in `systemctl status`.
    var statusLine: String { onLoop.machine.statusLine }

    // MARK: - Inputs from front ends

    /// A front end's new client; refused (with the error to tell it) beyond the maximum.
    func connect(isPrivileged: Bool, frontEnd: FrontEnd = .socket) throws(ProtocolError) -> ListenerID {
        let (listener, actions) = try onLoop.machine.connect(isPrivileged: isPrivileged, frontEnd: frontEnd)
        perform(actions)
        return listener
    }

    /// A front end's client left. While an action list is carried out (a publish whose write found
    /// the client gone closes its socket, and SwiftNIO reports the close at once) it is noted and
    /// handled at the end of that list instead of in a list of its own.
    func disconnect(_ listener: ListenerID) {
        let state = onLoop
        if state.performing {
            state.closedWhilePerforming.append(listener)
            state.disconnectsDeferred += 1
            return
        }
        perform(state.machine.disconnect(listener))
    }

    /// A client's request: its events go out first, then the caller sends the reply.
    func handle(_ request: ClientRequest, from listener: ListenerID) -> Result<ReplyBody, ProtocolError> {
        let (actions, reply) = onLoop.machine.handle(request, from: listener, at: MonotonicClock.now())
        perform(actions)
        return reply
    }

    // MARK: - Sensor events

    /// One event of the display sensor, with what the detection and hinge stages decided from it on
    /// the sensor's thread: one input, one action list, so the bus follows one sample once.
    func handle(
        _ event: SensorEvent, detection: DetectionStage.Detection = .init(), hinge: HingeStage.Outcome = .init()
    ) {
        let now = MonotonicClock.now()
        var actions: [HubAction] = []
        switch event {
        case .available(let description):
            if state.sensor == .absent || state.sensorName != description.identifier {
                sensorLogger.info(
                    "sensor available",
                    metadata: [
                        "sensor.device": "\(description.identifier)", "sensor.name": "\(description.name)",
                        "sensor.mode": "\(description.acquisition?.rawValue ?? "mock")",
                        "sensor.matrix": "\(description.mountMatrix.text) (\(description.mountMatrixOrigin.rawValue))",
                        "sensor.selection": "\(description.selection ?? "")",
                    ])
                if let pacing = description.restPacing {
                    sensorLogger.info(
                        "at rest the sensor is read by \(pacing)",
                        metadata: ["sensor.device": "\(description.identifier)"])
                }
            } else if description.restPacing != onLoop.sensorRestPacing, let pacing = description.restPacing {
                // The sensor opened (the first description came from discovery), or its motion
                // interrupt failed.
                let failed = onLoop.sensorRestPacing != nil
                sensorLogger.log(
                    level: failed ? .warning : .info, "at rest the sensor is read by \(pacing)",
                    metadata: ["sensor.device": "\(description.identifier)"])
            } else if let previous = onLoop.sensorMatrix, previous != description.mountMatrix {
                // The same sensor re-read after a udev change (a hwdb entry installed).
                sensorLogger.info(
                    "mount matrix changed",
                    metadata: [
                        "sensor.device": "\(description.identifier)",
                        "sensor.matrix": "\(description.mountMatrix.text) (\(description.mountMatrixOrigin.rawValue))",
                        "sensor.previous": "\(previous.text)",
                    ])
            }
            onLoop.sensorMatrix = description.mountMatrix
            onLoop.sensorRestPacing = description.restPacing
            if description.gyroscope != onLoop.sensorGyroscope, let gyroscope = description.gyroscope {
                // One that is there but not read is worth a warning: detection goes without it.
                sensorLogger.log(
                    level: description.readsGyroscope ? .info : .warning, "gyroscope: \(gyroscope)",
                    metadata: ["sensor.device": "\(description.identifier)"])
            }
            onLoop.sensorGyroscope = description.gyroscope
            onLoop.sensorReadsGyroscope = description.readsGyroscope
            if description.gyroscopeProblem != onLoop.sensorGyroscopeProblem {
                if let problem = description.gyroscopeProblem {
                    sensorLogger.warning(
                        "gyroscope cannot be read: \(problem); the accelerometer decides alone meanwhile",
                        metadata: ["sensor.device": "\(description.identifier)"])
                } else {
                    sensorLogger.info(
                        "gyroscope read again: its rates are fused again",
                        metadata: ["sensor.device": "\(description.identifier)"])
                }
                onLoop.sensorGyroscopeProblem = description.gyroscopeProblem
            }
            // Said once: the description comes again when the acquisition learns more.
            for problem in description.mountMatrixProblems where !onLoop.sensorMatrixProblems.contains(problem) {
                sensorLogger.warning("\(problem)")
            }
            onLoop.sensorMatrixProblems = description.mountMatrixProblems
            actions = onLoop.machine.sensorAvailable(
                name: description.identifier, rate: description.samplingFrequency,
                maximumRate: description.availableFrequencies.flatMap {
                    SamplingFrequencyChoice.nearest(to: 1e9, available: $0)
                }, gyroscope: description.readsGyroscope, gyroscopeProblem: description.gyroscopeProblem, at: now)
        case .unavailable(let reason):
            sensorLogger.warning("sensor unavailable", metadata: ["reason": "\(reason)"])
            onLoop.sensorMatrixProblems = []
            actions = onLoop.machine.sensorLost(at: now)
        case .sample:
            break
        case .fault(let fault):
            if onLoop.faultLog.logFault(fault.kind, at: now) {
                sensorLogger.warning(
                    "sensor fault",
                    metadata: [
                        "sensor.device": "\(fault.device)", "fault": "\(fault.kind.rawValue)",
                        "detail": "\(fault.detail)",
                    ])
            }
            actions = onLoop.machine.sensorFault(fault, unixTime: MonotonicClock.unixTime(), at: now)
        case .recovered(let kind, let device):
            if onLoop.faultLog.logRecovery(kind) {
                sensorLogger.info(
                    "sensor recovered", metadata: ["sensor.device": "\(device)", "fault": "\(kind.rawValue)"])
            }
            actions = onLoop.machine.sensorRecovered(kind, at: now)
        case .ended:
            sensorLogger.info("sensor input ended")
            actions = onLoop.machine.sensorLost(at: now)
        case .note(let note):
            sensorLogger.notice("\(note)", metadata: ["sensor.device": "\(state.sensorName ?? "?")"])
        }
        if let gravity = detection.gravity { logGravityScale(gravity) }
        // The gyroscope judged: the IMU's, read with the sensor, else the one of its own.
        let gyroscope = (onLoop.sensorReadsGyroscope ? nil : onLoop.ownGyroscope) ?? state.sensorName ?? "?"
        switch detection.gyroscope {
        case .failed(let detail)?:
            sensorLogger.warning(
                "gyroscope fault: \(detail); the orientation comes from the accelerometer alone",
                metadata: ["sensor.device": "\(gyroscope)"])
        case .working?:
            sensorLogger.info(
                "gyroscope recovered: its rates are fused again", metadata: ["sensor.device": "\(gyroscope)"])
        case nil:
            break
        }
        if let rate = detection.readRate { logReadRate(rate) }
        if let slept = detection.sleptUnannounced { sleptUnannounced(slept) }
        actions += hingeActions(
            hinge, orientation: detection.change?.to, tilt: detection.tilt,
            restRate: detection.readRate.map(\.restRate), motion: detection.motion, gyroscope: detection.gyroscope,
            at: now)
        perform(actions)
    }

    /// An event of a light, proximity or compass source (on the loop).
    func handle(_ event: KindSensorEvent, of kind: SensorKind) {
        let now = MonotonicClock.now()
        switch event {
        case .available(let description):
            sensorLogger.info(
                "\(kind) available",
                metadata: [
                    "sensor.device": "\(description.identifier)", "sensor.name": "\(description.name)",
                    "sensor.mode": "\(description.acquisition.rawValue)", "sensor.reading": "\(description.reading)",
                ])
            for problem in description.problems {
                sensorLogger.warning("\(problem)", metadata: ["sensor.device": "\(description.identifier)"])
            }
            perform(
                onLoop.machine.kindSensorAvailable(kind, name: description.identifier, unit: description.unit, at: now))
        case .unavailable(let reason):
            sensorLogger.notice("no \(kind)", metadata: ["reason": "\(reason)"])
            perform(onLoop.machine.kindSensorLost(kind, at: now))
        case .reading(let reading, _):
            let actions = onLoop.machine.kindReading(reading, at: now)
            sensorLogger.debug(
                "\(kind) reading", metadata: ["reading": "\(reading)", "published": "\(!actions.isEmpty)"])
            perform(actions)
        case .fault(let fault):
            if onLoop.kindFaultLogs[kind, default: FaultLogLimiter()].logFault(fault.kind, at: now) {
                sensorLogger.warning(
                    "\(kind) fault",
                    metadata: [
                        "sensor.device": "\(fault.device)", "fault": "\(fault.kind.rawValue)",
                        "detail": "\(fault.detail)",
                    ])
            }
        case .recovered(let faultKind, let device):
            if onLoop.kindFaultLogs[kind, default: FaultLogLimiter()].logRecovery(faultKind) {
                sensorLogger.info(
                    "\(kind) recovered", metadata: ["sensor.device": "\(device)", "fault": "\(faultKind.rawValue)"])
            }
        }
    }

    /// The detection stage changed the rate the sensor is read at (it alone decides it): said in
    /// the debug log.
    private func logReadRate(_ rate: DetectionStage.ReadRate) {
        let restRate = rate.restRate
        if rate == .motionEvents {
            sensorLogger.debug(
                """
                the device rests: read on the motion interrupt, and every \
                \(SamplingFrequencyChoice.text(MotionEvents.checkInterval)) s
                """
            )
        } else if case .rest(let hertz, held: true) = rate {
            sensorLogger.debug(
                "the device rests, held (it sways): read at \(SamplingFrequencyChoice.text(hertz)) Hz")
        } else {
            sensorLogger.debug(
                restRate.map { "the device rests: read at \(SamplingFrequencyChoice.text($0)) Hz" }
                    ?? "the device moves: read at the sampling rate")
        }
    }

    /// The detection stage measured gravity at rest far from 1 g and rescales the sensor's readings
    /// (``GravityScaleLearner``): said once per new factor, with what was measured.
    private func logGravityScale(_ measurement: GravityScaleLearner.Measurement) {
        func rounded(_ value: Double, _ places: Double) -> Double { (value * places).rounded() / places }
        sensorLogger.notice(
            """
            sensor scale corrected: gravity at rest reads \(rounded(measurement.measuredGravity, 100)) m/s² \
            (\(rounded(measurement.measuredGravity / 9.81, 100)) g); readings are multiplied by \
            \(rounded(measurement.factor, 1e5))
            """,
            metadata: [
                "sensor.device": "\(state.sensorName ?? "?")"
            ])
    }

    /// A base-sensor event the hinge stage has already observed (on that sensor's thread).
    func handleBase(_ event: SensorEvent, outcome: HingeStage.Outcome) {
        let now = MonotonicClock.now()
        var restRate: Double??
        switch event {
        case .available(let description):
            onLoop.basePresent = true
            restRate = holdDisplayPace()
            sensorLogger.info(
                "base sensor available",
                metadata: [
                    "sensor.device": "\(description.identifier)", "sensor.name": "\(description.name)",
                    "sensor.matrix": "\(description.mountMatrix.text) (\(description.mountMatrixOrigin.rawValue))",
                    "sensor.selection": "\(description.selection ?? "")",
                ])
            for problem in description.mountMatrixProblems { sensorLogger.warning("\(problem)") }
        case .unavailable(let reason):
            onLoop.basePresent = false
            restRate = holdDisplayPace()
            sensorLogger.notice(
                "base sensor unavailable: no hinge angle or mode (the mode holds)", metadata: ["reason": "\(reason)"])
        case .fault(let fault):
            if onLoop.baseFaultLog.logFault(fault.kind, at: now) {
                sensorLogger.warning(
                    "base sensor fault",
                    metadata: [
                        "sensor.device": "\(fault.device)", "fault": "\(fault.kind.rawValue)",
                        "detail": "\(fault.detail)",
                    ])
            }
        case .recovered(let kind, let device):
            if onLoop.baseFaultLog.logRecovery(kind) {
                sensorLogger.info(
                    "base sensor recovered", metadata: ["sensor.device": "\(device)", "fault": "\(kind.rawValue)"])
            }
        case .note(let note):
            sensorLogger.notice("base sensor: \(note)")
        case .ended:
            onLoop.basePresent = false
            restRate = holdDisplayPace()
            sensorLogger.info("base sensor input ended")
        case .sample:
            break
        }
        perform(hingeActions(outcome, restRate: restRate, at: now))
    }

    /// The hinge angle compares each display reading with the base's and forgets one older than
    /// 0.5 s: while the base is present and sampled, the display is not slowed to the rest pace.
    /// (Only then: `--base-sensor auto` watches for a base on every device, most of which have none.)
    /// Returns the rest rate for the machine when the read rate changed.
    private func holdDisplayPace() -> Double?? {
        guard let rate = detection.holdFast(onLoop.basePresent && onLoop.machine.sampling.contains(.base)) else {
            return nil
        }
        logReadRate(rate)
        return .some(rate.restRate)
    }

    /// A gyroscope of its own was found, lost or failed to read (its rates go to the detection stage
    /// on its own thread, not here).
    func handleGyroscope(_ event: GyroscopeEvent) {
        let now = MonotonicClock.now()
        switch event {
        case .available(let name, _, let problems):
            sensorLogger.info("gyroscope: \(name), read with the accelerometer while the device moves")
            for problem in problems { sensorLogger.warning("\(problem)") }
            onLoop.ownGyroscope = name
            perform(onLoop.machine.gyroscopeAvailable(true, at: now))
        case .unavailable(let reason, let unusable):
            // A gyroscope that is there but cannot be read is worth a warning.
            sensorLogger.log(level: unusable ? .warning : .info, "no gyroscope of its own: \(reason)")
            onLoop.ownGyroscope = nil
            perform(onLoop.machine.gyroscopeAvailable(false, at: now))
        case .lost(let reason):
            sensorLogger.warning("gyroscope cannot be read: \(reason); the accelerometer decides alone meanwhile")
            perform(onLoop.machine.gyroscopeUnreadable(reason, at: now))
        case .rate:
            break
        }
    }

    /// A gyroscope of its own that could not be read gives rates again.
    func gyroscopeReadsAgain() {
        sensorLogger.info("gyroscope read again: its rates are fused again")
        perform(onLoop.machine.gyroscopeUnreadable(nil, at: MonotonicClock.now()))
    }

    /// The lid switch was found, lost, or moved: near closed and folded back it settles the mode.
    func handleLidSwitch(_ event: LidSwitchEvent) {
        switch event {
        case .available(let device):
            sensorLogger.info("lid switch found", metadata: ["input.device": "\(device)"])
        case .unavailable(let reason):
            sensorLogger.info("no lid switch read: \(reason); near closed and folded back the hinge decides alone")
            hinge?.lidSwitch(closed: nil)
        case .changed(let closed):
            sensorLogger.info("lid switch \(closed ? "closed" : "open")")
            hinge?.lidSwitch(closed: closed)
        case .unreadable(let reason):
            sensorLogger.warning("lid switch state cannot be asked: \(reason); the last state holds")
        }
    }

    /// The hinge-angle source found, lost or failed to read its sensor, or read an angle that is
    /// news; its angles reach the hub only as the hinge stage's outcomes.
    func handleHingeAngle(_ reading: HingeAngleReading, outcome: HingeStage.Outcome) {
        switch reading {
        case .available(let name):
            sensorLogger.info("hinge-angle sensor read with the base", metadata: ["sensor": "\(name)"])
        case .unavailable(let reason):
            sensorLogger.info(
                "no hinge-angle sensor: the accelerometers decide alone", metadata: ["reason": "\(reason)"])
        case .lost(let reason):
            sensorLogger.warning(
                "hinge-angle sensor cannot be read: the accelerometers decide alone", metadata: ["reason": "\(reason)"])
        case .angle:
            break
        }
        hingeChanged(outcome)
    }

    /// Publishes what the hinge stage decided.
    private func hingeChanged(_ outcome: HingeStage.Outcome) {
        perform(hingeActions(outcome, at: MonotonicClock.now()))
    }

    /// What a sensor's reading decided, as the machine's one input (``HubStateMachine/detected(_:at:)``):
    /// the hinge stage's outcome logged, the machine's actions returned, so that ``perform(_:)``
    /// takes those of a sensor it stopped into its own list instead of calling itself.
    private func hingeActions(
        _ outcome: HingeStage.Outcome, orientation: DeviceOrientation? = nil, tilt: ScreenTilt? = nil,
        restRate: Double?? = nil, motion: MotionSample? = nil, gyroscope: GyroscopeCheck.Verdict? = nil,
        at now: Double
    ) -> [HubAction] {
        var hingeAngle = state.hinge
        for event in outcome.events {
            switch event {
            case .angle(let angle):
                if angle == nil, let loss = outcome.angleLost {
                    if loss.isNews {
                        sensorLogger.warning(
                            "hinge angle unknown: \(loss.reason); the mode holds",
                            metadata: ["mode": "\(state.mode?.rawValue ?? "unknown")"])
                    } else {
                        sensorLogger.debug("hinge angle unknown: \(loss.reason)")
                    }
                } else if angle != nil, hingeAngle == nil {
                    sensorLogger.debug("hinge angle known again")
                }
                hingeAngle = angle
            case .mode(let mode):
                sensorLogger.info(
                    "mode \(mode.rawValue)",
                    metadata: ["hinge": "\(hingeAngle.map { String(Int($0.rounded())) } ?? "unknown")"])
            }
        }
        let wasKnown = state.hinge != nil
        let actions = onLoop.machine.detected(
            SensorDecision(
                orientation: orientation, tilt: tilt, restRate: restRate, hinge: outcome.events, motion: motion,
                gyroscope: gyroscope),
            at: now)
        if !wasKnown, state.hinge != nil { armHingeCheck() }
        return actions
    }

    /// Sets the silence alarm at the detector's deadline (the last sample plus its timeout, or a
    /// timeout from now before the first): the sensor's thread moves it on with every sample (it
    /// sets the timerfd itself), so it goes off only when the sensor really falls silent and a
    /// device at rest is woken by nothing but its reads.
    private func armSilenceAlarm() {
        guard onLoop.machine.readsDisplay else { return silenceAlarm.cancel() }
        silenceAlarm.set(
            at: detection.silenceDeadline ?? MonotonicClock.now() + configuration.detector.estimate.silenceTimeout)
    }

    /// The silence alarm went off: the orientation may become unknown; the alarm waits again.
    private func silenceAlarmRang() {
        guard onLoop.machine.readsDisplay else { return }
        let now = MonotonicClock.now()
        // Thawed from a sleep nobody announced: the freeze and thaw around it are no silence.
        if let slept = detection.lookForSleep() { return sleptUnannounced(slept) }
        if let change = detection.advance(to: now) {
            perform(onLoop.machine.detected(SensorDecision(orientation: change.to), at: now))
        }
        armSilenceAlarm()
    }

    /// While a convertible's hinge angle is known, its staleness (shorter than the detector's
    /// silence) is checked every half second; a device with one accelerometer has a base source
    /// too, which never finds a sensor and never makes an angle, and is not checked.
    private func armHingeCheck() {
        onLoop.hingeCheckTask?.cancel()
        onLoop.hingeCheckTask = nil
        guard onLoop.machine.isSampling, onLoop.machine.sampling.contains(.base), state.hinge != nil else { return }
        onLoop.hingeCheckTask = eventLoop.scheduleTask(in: .milliseconds(500)) { [weak self] in
            guard let self, let hinge else { return }
            hingeChanged(hinge.advance(to: MonotonicClock.now()))
            armHingeCheck()
        }
    }

    // MARK: - Sleep

    /// The system is about to sleep (logind's `PrepareForSleep(true)`): every sensor read stops
    /// and its buffer closes; `ready` is called (on any thread) once all have, so logind's delay
    /// ends as soon as nothing is read any more, never later than that.
    func systemSleeps(then ready: @escaping @Sendable () -> Void) {
        let actions = onLoop.machine.sleeps(at: MonotonicClock.now())
        guard !actions.isEmpty else { return ready() }
        logger.notice("the system is going to sleep: sensors stop reading until it resumes")
        onLoop.sleepReady.append(ready)
        perform(actions)
        if let ready = onLoop.sleepReady.popLast() { ready() }  // nothing was sampling
    }

    /// The system resumed (logind's `PrepareForSleep(false)`): every claimed sensor reads afresh and
    /// the orientation shown is the one the device holds now.
    func systemResumed() {
        let actions = onLoop.machine.resumes(at: MonotonicClock.now())
        guard !actions.isEmpty else { return }
        logger.notice("the system resumed: sensors read afresh")
        perform(actions)
    }

    /// The clock shows a sleep of `seconds` that logind did not announce (none runs, or the system
    /// was suspended behind its back): the sensors are read afresh as after an announced one.
    private func sleptUnannounced(_ seconds: Double) {
        guard !onLoop.machine.isAsleep else { return }
        logger.notice(
            """
            the system slept \((seconds * 10).rounded() / 10) s unannounced (CLOCK_BOOTTIME ran on): \
            sensors read afresh
            """)
        perform(onLoop.machine.sleeps(at: MonotonicClock.now()))
        perform(onLoop.machine.resumes(at: MonotonicClock.now()))
    }

    /// Stops each sensor of `roles` reading; the sleep's `ready` is called once all have stopped (on
    /// the thread of the last to stop: a count, not a DispatchGroup, whose notify would need a
    /// global queue and with it libdispatch's 1 Hz workqueue monitor, ``ConcurrencyOnEventLoop``).
    private func suspend(_ roles: Set<SampledSensor>) {
        let ready = onLoop.sleepReady
        onLoop.sleepReady.removeAll()
        let running = NIOLockedValueBox(1)  // the stops asked for, and this function's own
        let stopped: @Sendable () -> Void = {
            guard
                running.withLockedValue({ count in
                    count -= 1
                    return count == 0
                })
            else { return }
            ready.forEach { $0() }
        }
        func stop(_ source: (any SensorSource)?) {
            guard let source else { return }
            running.withLockedValue { $0 += 1 }
            source.stopSampling(then: stopped)
        }
        for role in roles {
            switch role {
            case .display:
                stop(source)
                detection.sleeps()
                stop(gyroscope)
                silenceAlarm.cancel()
                onLoop.hingeCheckTask?.cancel()
                onLoop.hingeCheckTask = nil
            case .base:
                stop(baseSource)
                stop(hingeAngleSensor)
            case .kind(let kind):
                stop(kindSources[kind])
            }
        }
        stopped()
    }

    /// Starts each sensor of `roles` reading again after a sleep.
    private func resume(_ roles: Set<SampledSensor>) {
        for role in SampledSensor.allCases where roles.contains(role) {
            switch role {
            case .display:
                detection.resumes(at: MonotonicClock.now())
                source.startSampling()
                armSilenceAlarm()
            case .base:
                baseSource?.startSampling()
                hingeAngleSensor?.startSampling()
            case .kind(let kind):
                kindSources[kind]?.startSampling()
            }
        }
        armHingeCheck()
    }

    /// What became of net.hadess.SensorProxy (``SensorProxyService``).
    func setSystemBusStatus(_ status: String) {
        perform(onLoop.machine.systemBusStatusChanged(status))
    }

    // MARK: - Configuration and shutdown

    /// Applies a re-read configuration (SIGHUP); returns what needs a restart to change.
    func reload(_ new: DaemonConfiguration) -> [String] {
        if new.detector != configuration.detector {
            detection.restart(configuration: new.detector)  // the machine's pace starts fast again with it
            logger.notice("detector parameters changed: detection starts afresh")
        }
        if new.hinge != configuration.hinge, let hinge {
            hinge.restart(configuration: new.hinge)
            logger.notice("hinge parameters changed: the hinge detector starts afresh")
        }
        let (actions, restart) = onLoop.machine.reload(new, at: MonotonicClock.now())
        socket.setStallTimeout(new.stallTimeout)
        perform(actions)
        return restart
    }

    /// The daemon is stopping: the machine's shutting-down state (every sensor stops, no client is
    /// accepted, nothing more is published). Idempotent.
    func beginShutdown() {
        guard !onLoop.machine.isShuttingDown else { return }
        logger.debug("shutting down: no client accepted, sensors stopped")
        perform(onLoop.machine.beginShutdown())
    }

    /// Cancels the hub's own timers (the hinge check, a pending stop) and waits for a lock being
    /// saved: the last of the hub.
    func stopTimers() {
        lockKeeper?.flush()
        onLoop.hingeCheckTask?.cancel()
        onLoop.hingeCheckTask = nil
        onLoop.stopTask?.cancel()
        onLoop.stopTask = nil
    }

    /// Says goodbye to every socket client and ends each connection gracefully; completes when all
    /// are closed, at most `linger` later.
    func closeAll(reason: String, linger: TimeAmount = .seconds(1)) -> EventLoopFuture<Void> {
        return socket.closeAll(reason: reason, linger: linger)
    }

    // MARK: - Actions

    /// Carries out the machine's actions in order. One list: an action whose effect brings more (a
    /// stopped sensor's hinge outcome, a client whose socket closed when written to) appends them
    /// here rather than calling back into this, which would publish from the middle of a list. A
    /// nested call traps in debug builds.
    private func perform(_ actions: [HubAction]) {
        let state = onLoop  // the loop checked once for the list
        assert(!state.performing, "OrientationHub.perform entered again from one of its actions")
        state.performing = true
        defer {
            // The bus's one door: after what changed, once, and only when something it serves may
            // have (a motion sample, up to 100 a second, changes nothing it serves).
            let view = BusView(state.machine)
            if view != state.busView {
                state.busView = view
                state.sensorProxy?.follow(state.machine.state)
            }
            state.performing = false
        }
        var pending = actions[...]
        while true {
            guard let action = pending.popFirst() else {
                guard !state.closedWhilePerforming.isEmpty else { break }
                let closed = state.closedWhilePerforming
                state.closedWhilePerforming.removeAll()
                for listener in closed { pending += state.machine.disconnect(listener) }
                continue
            }
            switch action {
            case .startSampling(.display):
                detection.samplingStarts()
                source.startSampling()
                logger.info("sensor claimed: sampling starts", metadata: ["claims": "\(state.machine.claims)"])
                armSilenceAlarm()
                armHingeCheck()
            case .startSampling(.base):
                baseSource?.startSampling()
                hingeAngleSensor?.startSampling()
                logger.info(
                    "base sensor claimed: sampling starts", metadata: ["claims.hinge": "\(state.machine.baseClaims)"])
                if let restRate = holdDisplayPace() {
                    pending += state.machine.detected(SensorDecision(restRate: restRate), at: MonotonicClock.now())
                }
                armHingeCheck()
            case .scheduleStop(let seconds):
                state.stopTask = eventLoop.scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) { [weak self] in
                    guard let self else { return }
                    onLoop.stopTask = nil
                    perform(onLoop.machine.scheduledStopDue(at: MonotonicClock.now()))
                }
            case .cancelScheduledStop:
                state.stopTask?.cancel()
                state.stopTask = nil
            case .stopSampling(.display):
                source.stopSampling()
                detection.samplingStops()
                onLoop.sensorGyroscopeProblem = nil  // as the state machine forgets it
                silenceAlarm.cancel()
                state.hingeCheckTask?.cancel()
                state.hingeCheckTask = nil
                logger.info("no claims left: sampling stops")
                if let hinge { pending += hingeActions(hinge.forget(.display), at: MonotonicClock.now()) }
            case .stopSampling(.base):
                baseSource?.stopSampling()
                hingeAngleSensor?.stopSampling()
                let restRate = holdDisplayPace()
                logger.info("no claims on the hinge left: base sensor sampling stops")
                pending += hingeActions(hinge?.forget(.base) ?? .init(), restRate: restRate, at: MonotonicClock.now())
                if let hinge, hingeAngleSensor != nil {
                    pending += hingeActions(hinge.forgetMeasured(), at: MonotonicClock.now())
                }
            case .suspendSampling(let roles):
                suspend(roles)
            case .resumeSampling(let roles):
                resume(roles)
            case .startSampling(.kind(let kind)):
                kindSources[kind]?.startSampling()
                logger.info("\(kind) claimed: sampling starts")
            case .stopSampling(.kind(let kind)):
                kindSources[kind]?.stopSampling()
                logger.info("no claims on the \(kind) left: sampling stops")
            case .publish(let event, let listeners):
                deliver(event, to: listeners)
            case .send(let event, let listener):
                deliver(event, to: [listener])
            case .statusChanged:
                reportStatus()
            case .systemSessionRejected(let action, let error):
                logger.warning("system session rejected \(action)", metadata: ["error": "\(error)"])
            case .reportTabletMode(let mode):
                state.tabletModeReporter?.modeChanged(mode)
            case .keepLock(let lock):
                lockKeeper?.keep(lock)
            case .streamMotion(let hertz):
                logger.info(
                    hertz.map {
                        "motion subscribed: read at the sampling rate, at least \(SamplingFrequencyChoice.text($0)) Hz"
                    }
                        ?? "no motion subscriber left")
                if let rate = detection.streamMotion(hertz: hertz) {
                    logReadRate(rate)
                    pending += state.machine.detected(
                        SensorDecision(restRate: .some(rate.restRate)), at: MonotonicClock.now())
                }
            }
        }
    }

    /// What net.hadess.SensorProxy's values are made of (``SensorProxyFrontEnd/follow(_:)``): the
    /// state, the configuration (how the lock and laptop mode apply), and the sensors whose first
    /// reading a claim waits for (a first reading equal to the last answers a claim).
    fileprivate struct BusView: Equatable {
        let state: DaemonState
        let configuration: DaemonConfiguration
        let awaitingFirstReading: Set<SensorKind>

        init(_ machine: HubStateMachine) {
            state = machine.state
            configuration = machine.configuration
            awaitingFirstReading = machine.awaitingFirstReading
        }
    }

    /// The socket's listeners get each event; the bus's follow the state once the actions are
    /// performed (``SensorProxyFrontEnd/follow(_:)``).
    private func deliver(_ event: Event, to listeners: [ListenerID]) {
        socket.deliver(event, to: listeners.filter { $0.frontEnd == .socket })
    }

    private func reportStatus() {
        let state = onLoop
        guard let statusObserver = state.statusObserver else { return }
        let now = MonotonicClock.now()
        switch state.statusThrottle.statusChanged(at: now) {
        case .sendNow:
            statusObserver(statusLine)
        case .sendAt(let time):
            eventLoop.scheduleTask(in: .nanoseconds(Int64(max(0, time - now) * 1e9))) { [weak self] in
                guard let self else { return }
                onLoop.statusThrottle.heldStatusSent(at: MonotonicClock.now())
                self.statusObserver?(statusLine)
            }
        case .alreadyHeld:
            break
        }
    }
}
