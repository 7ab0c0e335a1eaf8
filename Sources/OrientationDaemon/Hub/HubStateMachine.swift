import OrientationCore
import OrientationProtocol
import SensorCore

/// The front ends a listener can belong to: its events go back through the one it came from.
public enum FrontEnd: Hashable, Sendable {
    /// orientd's own socket protocol.
    case socket
    /// net.hadess.SensorProxy on the system bus.
    case sensorProxy
}

/// One listener of the hub: a client of a front end (a socket connection, a D-Bus name).
public struct ListenerID: Hashable, Sendable, CustomStringConvertible {
    let value: Int
    let frontEnd: FrontEnd

    init(value: Int, frontEnd: FrontEnd = .socket) {
        self.value = value
        self.frontEnd = frontEnd
    }

    public var description: String { "listener \(value)" }
}

/// A sensor the hub starts and stops: the accelerometers by role, the other kinds by kind (a new
/// kind needs no case here).
enum SampledSensor: Hashable, Sendable, CaseIterable {
    case display
    case base
    case kind(SensorKind)

    /// In start order: the accelerometers first.
    static let allCases: [SampledSensor] = [.display, .base] + SensorKind.allCases.map(SampledSensor.kind)
}

/// What the hub decided, for its shell to carry out, in order.
enum HubAction: Hashable, Sendable {
    /// A sensor starts sampling: the display's with the first claim (and the shell watches for
    /// its silence); a convertible's base with the first claim that needs the hinge; a light,
    /// proximity or compass sensor with the first claim on its topic.
    case startSampling(SampledSensor)
    /// The last claim ended: call ``HubStateMachine/scheduledStopDue()`` after `seconds` (the
    /// claim linger), unless the stop is cancelled first.
    case scheduleStop(after: Double)
    /// A claim came back during the linger.
    case cancelScheduledStop
    /// The linger passed with no claim that needs it: the sensor stops sampling.
    case stopSampling(SampledSensor)
    /// The system is about to sleep: these sensors stop reading (their buffers closed) but stay
    /// claimed; the shell tells logind it may sleep once they have stopped.
    case suspendSampling(Set<SampledSensor>)
    /// The system resumed: these sensors, claimed all along, read afresh; the display's detector
    /// starts afresh keeping what it showed (``DetectionStage/resumes(at:)``).
    case resumeSampling(Set<SampledSensor>)
    /// A change of the daemon's state for every listener subscribed to its topic (possibly none).
    case publish(Event, to: [ListenerID])
    /// An event for one listener only (its session's).
    case send(Event, to: ListenerID)
    /// The daemon's summary (``HubStateMachine/statusLine``) may read differently now.
    case statusChanged
    /// The system session refused an action (a mask that excludes every orientation): worth a
    /// warning in the log, nothing for clients.
    case systemSessionRejected(action: String, ResolverError)
    /// A convertible's mode changed: libinput's tablet-mode switch says so (``TabletModeReporter``).
    case reportTabletMode(DeviceMode)
    /// The lock changed and is kept across restarts (`persist-lock`): the shell saves it.
    case keepLock(KeptLock)
    /// The `motion` topic's subscribers want this many samples a second (nil: none is left): the
    /// detection stage computes the motion of every reading, and the display sensor is read at its
    /// sampling rate, or at this one when faster, only meanwhile.
    case streamMotion(hertz: Double?)
}

/// What one reading of a sensor decided (``HubStateMachine/detected(_:at:)``); nil and empty parts
/// changed nothing.
struct SensorDecision: Equatable, Sendable {
    /// The device orientation the detector decided.
    var orientation: DeviceOrientation?
    /// The screen's tilt, classified anew.
    var tilt: ScreenTilt?
    /// The display sensor is now read at this rest rate (`.some(nil)`: at the sampling rate).
    var restRate: Double??
    /// The hinge detector's decisions, in order.
    var hinge: [HingeEvent] = []
    /// The reading's motion, while the `motion` topic is streamed.
    var motion: MotionSample?
    /// The gyroscope's verdict, when the reading changed it.
    var gyroscope: GyroscopeCheck.Verdict?
}

/// Every decision of the daemon, as a value: its state and sequence numbers, the listeners and the
/// topics each wants, claims on the sensor and their linger, the system resolver session and every
/// listener's own (``ResolverSessions``).
///
/// Inputs come in as method calls (a client's request, what a sensor's reading decided, a sensor
/// event, the linger's timer firing, a new configuration), each with the time it happened where
/// events need one; each returns the ``HubAction``s the shell (``OrientationHub``) performs. No
/// clock, no I/O and no JSON: front ends turn their wire format into ``ClientRequest``s and the
/// actions back into theirs, and tests drive it with plain values.
struct HubStateMachine {
    private struct Listener {
        var isPrivileged: Bool
        /// Nested subscriptions per topic: each subscribe adds one, each unsubscribe removes one.
        var topicCounts: [Topic: Int] = [:]
        /// While subscribed to `motion`: the rate it asked for (nil: the default), and when its next
        /// motion event is due.
        var motionRate: Double?
        var motionDue = -Double.infinity
        /// The stream's attitude at this listener's first motion event with one, inverted: its
        /// events' attitudes are counted from there (nil until then).
        var motionReference: Quaternion?

        var subscribedTopics: [Topic] { Topic.subscribable.filter { topicCounts[$0] != nil } }
    }

    private(set) var configuration: DaemonConfiguration
    private(set) var state: DaemonState
    /// Grows by one with every published change.
    private(set) var seq = 0
    /// Why the system session could not launch, if it could not (logged at start).
    let systemSessionLaunchError: ResolverError?

    private var listeners: [ListenerID: Listener] = [:]
    /// Per topic, its subscribers in subscription order: a publish names exactly these.
    private var subscribers: [Topic: [ListenerID]] = [:]
    private var nextListener = 0
    private var systemSession: InterfaceOrientationResolver
    private var sessions: ResolverSessions
    /// Subscriptions to each claiming topic, every listener's together (nested ones count).
    private var topicClaims: [Topic: Int] = [:]
    /// Claims on the accelerometer.
    var claims: Int { topicClaims.reduce(0) { $0 + ($1.key.claimedSensor == .accelerometer ? $1.value : 0) } }
    /// Claims on the hinge and the mode, which need the base sensor too.
    var baseClaims: Int { topicClaims.reduce(0) { $0 + ($1.key.needsBaseSensor ? $1.value : 0) } }
    /// The sensors sampling now.
    private(set) var sampling: Set<SampledSensor> = []
    /// Light, proximity and compass sensors started and present, whose first reading has not come:
    /// the D-Bus front end answers a claim only after it, so that the property a client reads right
    /// after its claim returns holds a value, as the incumbent's first claim does.
    private(set) var awaitingFirstReading: Set<SensorKind> = []
    /// The display sensor's sampling rate (Hz), and the rest rate while the device rests.
    private var sensorRate: Double?
    private var sensorMaximumRate: Double?
    private var restRate: Double?
    var isSampling: Bool { sampling.contains(.display) }
    /// Between ``sleeps(at:)`` and ``resumes(at:)``: nothing is read, claims stand.
    private(set) var isAsleep = false
    /// The display sensor is read now: claimed, and the system awake.
    var readsDisplay: Bool { isSampling && !isAsleep }
    /// Whether a base sensor is read (a convertible, or one configured): without it the base is
    /// never asked to sample.
    let hasBaseSensor: Bool
    /// The device orientation the resolver sessions were last given: the display's, or in laptop
    /// mode the natural one (``ConvertibleRotation``).
    private var followedDevice: DeviceOrientation = .unknown
    private var stopScheduled = false
    /// The rate the `motion` topic's subscribers want, while it has any.
    private var streamingMotion: Double?
    /// The accelerometer's samples carry an IMU's rates; a gyroscope of its own is present.
    private var sensorReadsGyroscope = false
    private var hasOwnGyroscope = false
    /// The detector's last verdict on the gyroscope (nil: none yet for this sensor), and why a
    /// gyroscope of its own cannot be read now: the state's `gyroscope` follows both
    /// (``updateGyroscopeState()``).
    private var gyroscopeVerdict: GyroscopeCheck.Verdict?
    private var ownGyroscopeUnreadable: String?
    /// Why an IMU's gyroscope, read with the sensor, cannot be read now.
    private var sensorGyroscopeUnreadable: String?
    /// Set by ``beginShutdown()``: no listener is accepted, no sensor samples and nothing more is
    /// published; the front ends then say goodbye and close.
    private(set) var isShuttingDown = false
    private var sensorPresent = false
    /// What the input being handled decided so far.
    private var output: [HubAction] = []

    init(configuration: DaemonConfiguration, hasBaseSensor: Bool = false) {
        self.configuration = configuration
        self.hasBaseSensor = hasBaseSensor
        sessions = ResolverSessions(maximumNodes: configuration.maximumSessionNodes)
        systemSession = Self.makeSystemSession(
            configuration, device: .unknown, interface: .unknown, locked: configuration.lockedAtStart,
            pin: configuration.lockPinAtStart)
        state = DaemonState(
            device: .unknown, interface: .unknown, sensor: .absent, locked: configuration.lockedAtStart, dbus: "off")
        systemSessionLaunchError = systemSession.apply(.launch).error
        state.interface = systemSession.state.interface
    }

    /// The system session: one scene supporting the configured orientations, following the device.
    private static func makeSystemSession(
        _ configuration: DaemonConfiguration, device: DeviceOrientation,
        interface: InterfaceOrientation, locked: Bool, pin: DeviceOrientation? = nil
    ) -> InterfaceOrientationResolver {
        var state = ResolverState(
            profile: .ios16, idiom: configuration.idiom, infoPlistMask: configuration.supportedOrientations,
            lock: locked, physicalDevice: device, interface: interface,
            root: .scene("system", supported: configuration.supportedOrientations))
        // A kept lock pins what it pinned before the restart, not what engaging it now would choose.
        if locked, let pin { state.lockPin = pin }
        return InterfaceOrientationResolver(state: state)
    }

    /// The summary systemd shows in `systemctl status`.
    var statusLine: String {
        let sensor =
            state.sensorName.map { "sensor \(state.sensor.rawValue) (\($0))" } ?? "sensor \(state.sensor.rawValue)"
        return
            """
            \(sensor); \(listeners.count) client\(listeners.count == 1 ? "" : "s"); device \
            \(state.device.rawValue), interface \(state.interface.rawValue)\(state.locked ? ", locked" : "")\
            \(isAsleep ? "; asleep" : "")
            """
    }

    func subscribedTopics(of listener: ListenerID) -> [Topic] { listeners[listener]?.subscribedTopics ?? [] }

    /// The rate a listener's motion events come at, while it is subscribed to `motion`.
    func motionRate(of id: ListenerID) -> Double? {
        guard let listener = listeners[id], listener.topicCounts[.motion] != nil else { return nil }
        return MotionRate.granted(
            asked: listener.motionRate, isPrivileged: listener.isPrivileged, sensorRate: sensorMaximumRate ?? sensorRate
        )
    }
    func hasSession(_ listener: ListenerID) -> Bool { sessions.hasSession(listener) }

    // MARK: - Listeners

    /// A new listener of `frontEnd`, privileged (root or the control group) or not; refused beyond
    /// the maximum, which counts every front end's listeners.
    mutating func connect(
        isPrivileged: Bool, frontEnd: FrontEnd = .socket
    ) throws(ProtocolError) -> (ListenerID, [HubAction]) {
        guard !isShuttingDown else { throw ProtocolError(.internalError, "orientd is shutting down") }
        guard listeners.count < configuration.maximumClients else {
            throw .tooManyClients(maximum: configuration.maximumClients)
        }
        let id = ListenerID(value: nextListener, frontEnd: frontEnd)
        nextListener += 1
        listeners[id] = Listener(isPrivileged: isPrivileged)
        return (id, [.statusChanged])
    }

    /// The listener is gone: its subscriptions, claims and session end.
    mutating func disconnect(_ id: ListenerID) -> [HubAction] {
        guard let listener = listeners.removeValue(forKey: id) else { return [] }
        for topic in listener.topicCounts.keys { subscribers[topic]?.removeAll { $0 == id } }
        sessions.remove(id)
        for (topic, count) in listener.topicCounts where topic.claimsSensor { topicClaims[topic, default: 0] -= count }
        updateSampling(at: 0)
        updateMotionStream()
        output.append(.statusChanged)
        return takeOutput()
    }

    // MARK: - Requests

    /// A listener's request: the actions it causes (events, sampling), then its reply.
    mutating func handle(
        _ request: ClientRequest, from id: ListenerID, at time: Double
    ) -> (actions: [HubAction], reply: Result<ReplyBody, ProtocolError>) {
        guard let listener = listeners[id] else {
            return ([], .failure(ProtocolError(.internalError, "unknown listener")))
        }
        if request.operation.isPrivileged, !listener.isPrivileged { return ([], .failure(.permissionDenied)) }
        let reply: Result<ReplyBody, ProtocolError>
        do throws(ProtocolError) {
            reply = .success(try perform(request, from: id, at: time))
        } catch {
            reply = .failure(error)
        }
        return (takeOutput(), reply)
    }

    private mutating func perform(
        _ request: ClientRequest, from id: ListenerID, at time: Double
    ) throws(ProtocolError) -> ReplyBody {
        switch request {
        case .get:
            return .snapshot(seq: seq, state: state)

        case .subscribe(let topics, _), .unsubscribe(let topics):
            if case .subscribe(_, let motionRate) = request {
                if let privileged = topics.first(where: \.isPrivileged), !listeners[id]!.isPrivileged {
                    throw ProtocolError(
                        .permissionDenied, "only root and the control group may subscribe to \(privileged.rawValue)")
                }
                subscribe(id, to: topics)
                // The latest subscribe to motion sets the rate (nested subscriptions share one stream).
                if topics.contains(.motion) { listeners[id]!.motionRate = motionRate }
            } else {
                unsubscribe(id, from: topics)
            }
            updateSampling(at: time)
            updateMotionStream()
            return .subscriptions(
                topics: listeners[id]!.subscribedTopics, seq: seq, state: state, motionRate: motionRate(of: id))

        case .lock(let on):
            if on != state.locked {
                state.locked = on
                publish(.lock(on), at: time)
                applyToSystemSession(.setLock(on), at: time)
                applyToSessions(.setLock(on), at: time)
                if configuration.keptLockPath != nil {
                    output.append(.keepLock(KeptLock(locked: on, pin: systemSession.state.lockPin)))
                }
            }
            return .state(state)

        case .setSystemSupportedOrientations(let mask):
            _ = systemSession.apply(.updateScene(id: "system", supported: .set(mask)))
            applyToSystemSession(.updateSupportedOrientations, at: time)
            return .state(state)

        case .openSession(let initial):
            return try sessions.open(
                for: id, initial: initial, idiom: configuration.idiom, device: followedDevice, locked: state.locked)

        case .closeSession:
            try sessions.close(for: id)
            return .empty

        case .getSession:
            return .session(try sessions.snapshot(for: id))

        case .scene(let operation, let action):
            let (reply, event) = try sessions.perform(operation, action, for: id)
            if let event { output.append(.send(Event(seq: seq, time: time, state: state, payload: event), to: id)) }
            return reply
        }
    }

    private mutating func subscribe(_ id: ListenerID, to topics: [Topic]) {
        for topic in topics {
            if listeners[id]!.topicCounts[topic] == nil { subscribers[topic, default: []].append(id) }
            listeners[id]!.topicCounts[topic, default: 0] += 1
            if topic.claimsSensor { topicClaims[topic, default: 0] += 1 }
        }
    }

    private mutating func unsubscribe(_ id: ListenerID, from topics: [Topic]) {
        for topic in topics {
            guard let count = listeners[id]!.topicCounts[topic] else { continue }
            if topic.claimsSensor { topicClaims[topic, default: 0] -= 1 }
            if count > 1 {
                listeners[id]!.topicCounts[topic] = count - 1
            } else {
                listeners[id]!.topicCounts[topic] = nil
                subscribers[topic]?.removeAll { $0 == id }
                if topic == .motion {
                    listeners[id]!.motionRate = nil
                    listeners[id]!.motionReference = nil
                }
            }
        }
    }

    // MARK: - Claims

    /// The sensors the claims need: the display for any claim; the base for a claim on the hinge
    /// or the mode, or for any claim when the mode decides the rotation (laptop keeps normal).
    /// A light, proximity or compass sensor for a claim on its topic.
    private var wantedSensors: Set<SampledSensor> {
        var wanted: Set<SampledSensor> = []
        guard !isShuttingDown else { return wanted }
        if claims > 0 {
            wanted.insert(.display)
            if hasBaseSensor && (baseClaims > 0 || configuration.laptopKeepsNormal) { wanted.insert(.base) }
        }
        for kind in SensorKind.allCases where topicClaims[Topic(kind), default: 0] > 0 { wanted.insert(.kind(kind)) }
        return wanted
    }

    /// Starts what the claims need at once; what they no longer need stops after the linger.
    /// `time` only matters when a start changes the sensor's status (a release changes nothing).
    private mutating func updateSampling(at time: Double) {
        let wanted = wantedSensors
        for role in SampledSensor.allCases where wanted.contains(role) && !sampling.contains(role) {
            sampling.insert(role)
            if !isAsleep { output.append(.startSampling(role)) }  // else with the resume
            if case .kind(let kind) = role, state.kinds[kind] != nil { awaitingFirstReading.insert(kind) }
            if role == .display {
                restRate = nil  // the detection stage starts at the fast pace
                updateSensorStatus(at: time)
            }
        }
        let unneeded = !sampling.isSubset(of: wanted)
        if unneeded, !stopScheduled {
            stopScheduled = true
            output.append(.scheduleStop(after: configuration.claimLinger))
        } else if !unneeded, stopScheduled {
            stopScheduled = false
            output.append(.cancelScheduledStop)
        }
    }

    /// The daemon is stopping: every sensor stops at once (no linger), no listener is accepted and
    /// no event is published from here on. Idempotent.
    mutating func beginShutdown() -> [HubAction] {
        guard !isShuttingDown else { return [] }
        isShuttingDown = true
        if stopScheduled {
            stopScheduled = false
            output.append(.cancelScheduledStop)
        }
        for role in SampledSensor.allCases.reversed() where sampling.contains(role) {
            sampling.remove(role)
            output.append(.stopSampling(role))
        }
        awaitingFirstReading = []
        updateMotionStream()
        return takeOutput()
    }

    // MARK: - Sleep

    /// The system is about to sleep (logind's `PrepareForSleep`): every sensor sampling stops reading
    /// (its claims stand, and the display sensor is idle meanwhile). Nothing else changes: the
    /// orientation shown stays until a reading after the resume replaces it. Idempotent.
    mutating func sleeps(at time: Double) -> [HubAction] {
        guard !isAsleep, !isShuttingDown else { return [] }
        isAsleep = true
        if !sampling.isEmpty { output.append(.suspendSampling(sampling)) }
        updateSensorStatus(at: time)
        output.append(.statusChanged)
        return takeOutput()
    }

    /// The system resumed: every sensor claimed reads afresh, those claimed during the sleep too.
    mutating func resumes(at time: Double) -> [HubAction] {
        guard isAsleep else { return [] }
        isAsleep = false
        if !sampling.isEmpty, !isShuttingDown { output.append(.resumeSampling(sampling)) }
        if isSampling { restRate = nil }  // the detection stage starts at the fast pace
        updateSensorStatus(at: time)
        output.append(.statusChanged)
        return takeOutput()
    }

    /// The linger after the last claim (on a sensor) has passed: what is still unneeded stops.
    mutating func scheduledStopDue(at time: Double) -> [HubAction] {
        guard stopScheduled else { return [] }
        stopScheduled = false
        let wanted = wantedSensors
        for role in SampledSensor.allCases.reversed() where sampling.contains(role) && !wanted.contains(role) {
            sampling.remove(role)
            output.append(.stopSampling(role))
            if case .kind(let kind) = role { awaitingFirstReading.remove(kind) }
            if role == .display {
                // Nothing is read now, so nothing fails to read: the next acquisition says afresh.
                sensorGyroscopeUnreadable = nil
                updateGyroscopeState()
                updateSensorStatus(at: time)
            }
        }
        return takeOutput()
    }

    // MARK: - The sensor

    /// A sensor was found (or replaced by another).
    /// `rate`: the sensor's sampling rate in Hz, when it reports one.
    /// `gyroscope`: its samples carry a gyroscope's rates; `gyroscopeProblem`: why that gyroscope
    /// cannot be read now.
    /// `maximumRate`: the fastest the device offers (`sampling_frequency_available`), which a motion
    /// subscriber may have.
    mutating func sensorAvailable(
        name: String, rate: Double? = nil, maximumRate: Double? = nil, gyroscope: Bool = false,
        gyroscopeProblem: String? = nil, at time: Double
    ) -> [HubAction] {
        sensorPresent = true
        sensorMaximumRate = maximumRate.map { max($0, rate ?? $0) }
        sensorReadsGyroscope = gyroscope
        sensorGyroscopeUnreadable = gyroscopeProblem
        if state.sensorName != name { gyroscopeVerdict = nil }  // a new detector judges afresh
        state.sensorName = name
        updateGyroscopeState()
        sensorRate = rate
        updateSensorStatus(at: time)
        updateMotionStream()  // the grants follow the sensor's rates
        return takeOutput()
    }

    /// A gyroscope of its own was found (true) or lost: the state says whether one is read.
    mutating func gyroscopeAvailable(_ available: Bool, at time: Double) -> [HubAction] {
        hasOwnGyroscope = available
        ownGyroscopeUnreadable = nil
        updateGyroscopeState()
        return [.statusChanged]
    }

    /// A gyroscope of its own cannot be read (`reason`), or gives rates again (nil): while it
    /// cannot, the state says it failed, as the accelerometer decides alone.
    mutating func gyroscopeUnreadable(_ reason: String?, at time: Double) -> [HubAction] {
        guard ownGyroscopeUnreadable != reason else { return [] }
        ownGyroscopeUnreadable = reason
        updateGyroscopeState()
        return [.statusChanged]
    }

    /// The state's `gyroscope`: none without one that the accelerometer's samples can take (an IMU's,
    /// or one of its own beside a sensor that is present); failed with the detector's evidence, or
    /// while one of its own cannot be read; else working.
    private mutating func updateGyroscopeState() {
        guard sensorPresent, sensorReadsGyroscope || hasOwnGyroscope else {
            state.gyroscope = nil
            return
        }
        if case .failed(let detail) = gyroscopeVerdict {
            state.gyroscope = GyroscopeState(status: .failed, detail: detail)
        } else if let reason = sensorReadsGyroscope ? sensorGyroscopeUnreadable : ownGyroscopeUnreadable {
            state.gyroscope = GyroscopeState(status: .failed, detail: "cannot be read: \(reason)")
        } else {
            state.gyroscope = GyroscopeState(status: .working)
        }
    }

    /// The sensor is gone (removed, unreachable, or its input ended): detection starts afresh with
    /// the next one, so the orientation is unknown until it decides again.
    mutating func sensorLost(at time: Double) -> [HubAction] {
        sensorPresent = false
        state.faults.removeAll()
        state.sensorName = nil
        sensorReadsGyroscope = false
        gyroscopeVerdict = nil
        updateGyroscopeState()
        deviceChanged(to: .unknown, at: time)
        updateSensorStatus(at: time)
        return takeOutput()
    }

    /// A fault began; the sensor counts as failed until every fault has recovered. Every fault is
    /// declared on evidence a working sensor cannot produce (``RawAccelerometerReadings``).
    /// `unixTime` is when it began on the wall clock, for the state's `since`.
    mutating func sensorFault(_ fault: SensorFault, unixTime: Double, at time: Double) -> [HubAction] {
        if !state.faults.contains(where: { $0.kind == fault.kind.rawValue }) {
            state.faults.append(
                SensorFaultState(
                    kind: fault.kind.rawValue, device: fault.device, detail: fault.detail,
                    since: SensorFaultState.timestamp(unixTime: unixTime)))
        }
        updateSensorStatus(at: time)
        return takeOutput()
    }

    mutating func sensorRecovered(_ kind: SensorFault.Kind, at time: Double) -> [HubAction] {
        state.faults.removeAll { $0.kind == kind.rawValue }
        updateSensorStatus(at: time)
        return takeOutput()
    }

    /// What one reading decided, as one input: the display's orientation, its screen tilt (the
    /// state's `tilt`, served on the bus as AccelerometerTilt, no event of its own), the rest rate
    /// it is now read at (the state's `rate`, no event either), and the hinge's angle and mode.
    /// One input, so the front ends follow what one sample changed once (docs/architecture.md), and
    /// the interface follows the device and the mode together: a turn and a fold in one reading are
    /// one interface change at most.
    mutating func detected(_ detected: SensorDecision, at time: Double) -> [HubAction] {
        if let tilt = detected.tilt { state.tilt = tilt }
        if let restRate = detected.restRate {
            self.restRate = restRate
            updateRate()
        }
        if let motion = detected.motion { streamMotion(motion) }
        if let verdict = detected.gyroscope {
            // No event: the device orientation goes on from the accelerometer (get shows it).
            gyroscopeVerdict = verdict
            updateGyroscopeState()
            output.append(.statusChanged)
        }
        if let orientation = detected.orientation { setDevice(orientation, at: time) }
        for event in detected.hinge {
            switch event {
            case .angle(let angle):
                // Tenths of a degree: the sensors' bias alone is about a degree (docs/convertibles.md).
                let angle = angle.map { ($0 * 10).rounded() / 10 }
                guard angle != state.hinge else { continue }
                let from = state.hinge
                state.hinge = angle
                publish(.hinge(from: from, to: angle), at: time)
            case .mode(let mode):
                // In laptop mode the sessions may stop following the display (``ConvertibleRotation``).
                guard mode != state.mode else { continue }
                let from = state.mode
                state.mode = mode
                output.append(.reportTabletMode(mode))
                publish(.mode(from: from, to: mode), at: time)
            }
        }
        followDevice(at: time)
        return takeOutput()
    }

    // MARK: - Sensors of other kinds

    /// A light, proximity or compass sensor was found (or replaced by another); `unit` for light.
    mutating func kindSensorAvailable(
        _ kind: SensorKind, name: String, unit: LightUnit? = nil, at time: Double
    ) -> [HubAction] {
        let before = state.kinds[kind]
        guard before?.sensor != name || before?.unit != unit else { return [] }
        state.kinds[kind] = KindSensorState(sensor: name, unit: unit)
        if sampling.contains(.kind(kind)) { awaitingFirstReading.insert(kind) }
        publish(.reading(kind, from: before?.reading, to: nil), at: time)
        return takeOutput()
    }

    /// The sensor of `kind` is gone: clients see it absent (its topic hears the last value go).
    mutating func kindSensorLost(_ kind: SensorKind, at time: Double) -> [HubAction] {
        awaitingFirstReading.remove(kind)
        guard let before = state.kinds.removeValue(forKey: kind) else { return [] }
        publish(.reading(kind, from: before.reading, to: nil), at: time)
        return takeOutput()
    }

    /// A reading of a light, proximity or compass sensor: published when it differs meaningfully
    /// from the last one (``SensorReading/isMeaningfulChange(from:)``), and only while claimed, so
    /// that values change only for those who asked (as iio-sensor-proxy's do).
    mutating func kindReading(_ reading: SensorReading, at time: Double) -> [HubAction] {
        let kind = reading.kind
        // The first reading counts even when it equals the last one published (a claim again).
        if sampling.contains(.kind(kind)) { awaitingFirstReading.remove(kind) }
        guard sampling.contains(.kind(kind)), var current = state.kinds[kind],
            reading.isMeaningfulChange(from: current.reading)
        else { return [] }
        let from = current.reading
        current.reading = reading
        if case .light(_, let unit) = reading { current.unit = unit }
        state.kinds[kind] = current
        publish(.reading(kind, from: from, to: reading), at: time)
        return takeOutput()
    }

    // MARK: - Motion

    /// Tells the shell the highest rate the `motion` topic's subscribers get, when it changed (nil:
    /// none is left).
    private mutating func updateMotionStream() {
        let rates = isShuttingDown ? [] : (subscribers[.motion] ?? []).compactMap(motionRate(of:))
        let wanted = rates.max()
        guard wanted != streamingMotion else { return }
        streamingMotion = wanted
        output.append(.streamMotion(hertz: wanted))
    }

    /// A motion sample goes to each subscriber whose next event is due: each gets its own rate out of
    /// the sensor's (due times step by the listener's period, so 60 Hz out of 100 Hz is 60 a second
    /// on average). It is a stream, not a change: `seq` does not grow and no status changes.
    ///
    /// Each subscriber's attitude is relative to its own first event with one, as CoreMotion's is to
    /// the start of an app's updates: one subscribed later does not inherit the first one's
    /// reference. When the stream's reference starts afresh (a new sensor), every subscriber's does.
    private mutating func streamMotion(_ sample: MotionSample) {
        guard !isShuttingDown, let motionSubscribers = subscribers[.motion], !motionSubscribers.isEmpty else { return }
        var due: [Quaternion?: [ListenerID]] = [:]
        for id in motionSubscribers {
            guard let rate = motionRate(of: id), var listener = listeners[id] else { continue }
            if sample.startsAttitude { listener.motionReference = nil }
            // A sample up to a tenth of a period early counts: the sensor's clock jitters.
            let period = 1 / rate
            guard sample.time >= listener.motionDue - 0.1 * period else {
                listeners[id] = listener
                continue
            }
            listener.motionDue =
                sample.time - listener.motionDue > period ? sample.time + period : listener.motionDue + period
            if let attitude = sample.attitude, listener.motionReference == nil {
                listener.motionReference = attitude.conjugate
            }
            listeners[id] = listener
            due[sample.attitude == nil ? nil : listener.motionReference, default: []].append(id)
        }
        for (reference, ids) in due {
            var own = sample
            if let reference, let attitude = sample.attitude { own.attitude = (reference * attitude).normalized }
            output.append(.publish(Event(seq: seq, time: sample.time, state: state, payload: .motion(own)), to: ids))
        }
    }

    private mutating func updateRate() {
        state.rate = !readsDisplay || !sensorPresent ? nil : restRate.map { min($0, sensorRate ?? $0) } ?? sensorRate
    }

    private mutating func updateSensorStatus(at time: Double) {
        updateRate()
        let status: SensorStatus =
            !sensorPresent ? .absent : !state.faults.isEmpty ? .failed : readsDisplay ? .active : .idle
        guard status != state.sensor else { return }
        let from = state.sensor
        state.sensor = status
        publish(.sensor(from: from, to: status), at: time)
    }

    // MARK: - Front ends

    /// The D-Bus front end's status (`serving`, `off`, `not served: WHY`), for `get`. It is no
    /// event: nothing a client follows changes with it.
    mutating func systemBusStatusChanged(_ status: String) -> [HubAction] {
        state.dbus = status
        return [.statusChanged]
    }

    // MARK: - Orientation changes

    private mutating func deviceChanged(to orientation: DeviceOrientation, at time: Double) {
        setDevice(orientation, at: time)
        followDevice(at: time)
    }

    /// The device orientation and its event, without the sessions following it yet.
    private mutating func setDevice(_ orientation: DeviceOrientation, at time: Double) {
        // A restarted detector (new parameters) decides afresh, possibly what clients already have.
        guard orientation != state.device else { return }
        let from = state.device
        state.device = orientation
        publish(.device(from: from, to: orientation), at: time)
    }

    /// Gives the resolver sessions the orientation they follow, when it changed.
    private mutating func followDevice(at time: Double) {
        let followed = ConvertibleRotation.followedOrientation(
            device: state.device, mode: state.mode, laptopKeepsNormal: configuration.laptopKeepsNormal)
        guard followed != followedDevice else { return }
        followedDevice = followed
        applyToSystemSession(.deviceOrientation(followed), at: time)
        applyToSessions(.deviceOrientation(followed), at: time)
    }

    private mutating func applyToSystemSession(_ action: ResolverAction, at time: Double) {
        let outcome = systemSession.apply(action)
        if let error = outcome.error { output.append(.systemSessionRejected(action: action.name, error)) }
        if let change = outcome.interfaceChange {
            state.interface = change.to
            publish(.interface(change), at: time)
        }
    }

    private mutating func applyToSessions(_ action: ResolverAction, at time: Double) {
        for (listener, payload) in sessions.apply(action) {
            output.append(.send(Event(seq: seq, time: time, state: state, payload: payload), to: listener))
        }
    }

    /// One change of the daemon's state: `seq` grows by one and every subscriber of its topic hears it.
    private mutating func publish(_ payload: EventPayload, at time: Double) {
        guard !isShuttingDown else { return }
        seq += 1
        output.append(
            .publish(Event(seq: seq, time: time, state: state, payload: payload), to: subscribers[payload.topic] ?? []))
        output.append(.statusChanged)
    }

    // MARK: - Configuration

    /// A re-read configuration (SIGHUP): applies what can change while running and names what
    /// needs a restart (the socket, the sessions' idiom). The detector is the shell's to restart.
    mutating func reload(_ new: DaemonConfiguration, at time: Double) -> (actions: [HubAction], needsRestart: [String])
    {
        var restart: [String] = []
        if new.detector != configuration.detector {
            // The shell restarts the detector: its pace starts fast again.
            restRate = nil
            updateRate()
        }
        if new.socketPath != configuration.socketPath { restart.append("socket path") }
        if new.socketMode != configuration.socketMode || new.socketGroup != configuration.socketGroup {
            restart.append("socket mode and group")
        }
        if new.idiom != configuration.idiom { restart.append("session idiom") }
        if new.restRate != configuration.restRate || new.heldRate != configuration.heldRate
            || new.motionMargin != configuration.motionMargin || new.gyroscopeRate != configuration.gyroscopeRate
        {
            restart.append("rest rates, gyroscope rate and motion margin")
        }
        if new.tabletModeSwitch != configuration.tabletModeSwitch || new.uinputPath != configuration.uinputPath {
            restart.append("tablet-mode switch")
        }
        if new.supportedOrientations != configuration.supportedOrientations {
            // The app-wide mask cannot change through resolver actions: a new system session takes
            // over the device, interface and lock, then enforces the new mask.
            systemSession = Self.makeSystemSession(
                new, device: followedDevice, interface: state.interface, locked: state.locked,
                pin: systemSession.state.lockPin)
            applyToSystemSession(.updateSupportedOrientations, at: time)
        }
        if new.persistLock != configuration.persistLock { restart.append("persist-lock") }
        let kept = (configuration.socketPath, configuration.socketMode, configuration.socketGroup, configuration.idiom)
        let keptLock = (configuration.persistLock, configuration.keptLockPath)
        configuration = new
        (configuration.socketPath, configuration.socketMode, configuration.socketGroup, configuration.idiom) = kept
        (configuration.persistLock, configuration.keptLockPath) = keptLock
        sessions.maximumNodes = new.maximumSessionNodes
        followDevice(at: time)
        updateSampling(at: time)
        output.append(.statusChanged)
        return (takeOutput(), restart)
    }

    private mutating func takeOutput() -> [HubAction] {
        let actions = output
        output = []
        return actions
    }
}
