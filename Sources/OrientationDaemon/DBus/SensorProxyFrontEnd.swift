import Logging
import NIOCore
import OrientationCore
import OrientationProtocol
import SensorCore

/// net.hadess.SensorProxy as a front end of the hub, for the desktops that speak iio-sensor-proxy's
/// interface (mutter, KWin through Qt Sensors, Phosh, monitor-sensor, gsd-power, geoclue): each
/// unique bus name that claims a sensor is a listener of the hub subscribed to that sensor's topics
/// (the accelerometer's device orientation and mode, `light`, `proximity`, `heading`), so each sensor
/// samples while anyone on either front end claims it; one more listener, subscribed to the sensor's
/// status only, keeps `HasAccelerometer` true without claiming anything.
///
/// It decides; ``SystemBusConnection`` (on its own thread) does the bus's I/O: method calls and
/// polkit's answers come in as ``SystemBusEvent``s, replies and signals go out as
/// ``SystemBusCommand``s. Lives on the hub's event loop (its state is bound to it, checked at every
/// access).
final class SensorProxyFrontEnd: Sendable {
    /// polkit's action for every claim and release, as iio-sensor-proxy 3.4+ checks it.
    static let claimAction = "net.hadess.SensorProxy.claim-sensor"
    /// A claim's reply waits for the sensor's first value at most this long.
    static let firstReplyDeadline = TimeAmount.seconds(1)

    private unowned let hub: OrientationHub
    private let submit: @Sendable (SystemBusCommand) -> Void
    private let checksPolkit: Bool
    let logger = Logger(label: "orientd.dbus")
    /// A claimant: its listener and what it claims (claims are not nested per name, as in iio-sensor-proxy).
    private struct Claimant {
        var listener: ListenerID
        var claimed: Set<ClaimedSensor>
    }

    private let loopState: NIOLoopBoundBox<LoopState>

    private final class LoopState {
        var values = SensorProxyValues()
        var claimants: [String: Claimant] = [:]
        /// Calls waiting for polkit or the bus driver, one check at a time per caller, fairly.
        var authorization = ClaimAuthorizationQueue()
        var retryTimer: Scheduled<Void>?
        var refusals = RefusalLog()
        /// Claims answered once their sensor's first value is known (or at the deadline).
        var waitingForValue: [BusCall] = []
        var firstReplyTimer: Scheduled<Void>?
        var polkitAbsenceLogged = false
        /// How often the values were computed from the state (the tests' evidence that a motion
        /// sample computes none).
        var recomputations = 0
    }

    /// The one door to the loop's state: SwiftNIO checks that the caller is on the loop.
    private var onLoop: LoopState { loopState.value }

    /// How often the values were computed from the state.
    var recomputations: Int { onLoop.recomputations }

    /// - Parameters:
    ///   - checksPolkit: `[dbus] polkit`: ask polkit about every claim and release.
    ///   - submit: hands a command to the bus thread.
    init(hub: OrientationHub, checksPolkit: Bool, submit: @escaping @Sendable (SystemBusCommand) -> Void) {
        self.hub = hub
        self.checksPolkit = checksPolkit
        self.submit = submit
        loopState = NIOLoopBoundBox.makeBoxSendingValue(LoopState(), eventLoop: hub.eventLoop)
    }

    /// Starts following the daemon's state (the bus serves the values from now on).
    func start() {
        update(to: hub.state)
    }

    /// Every listener leaves the hub; calls still open are answered with an error.
    func stop() {
        onLoop.firstReplyTimer?.cancel()
        onLoop.retryTimer?.cancel()
        for call in onLoop.waitingForValue + onLoop.authorization.removeAll() {
            submit(
                .fail(
                    call, name: "org.freedesktop.DBus.Error.Disconnected",
                    message: "orientd stops serving the system bus"))
        }
        onLoop.waitingForValue = []
        for claimant in onLoop.claimants.values { hub.disconnect(claimant.listener) }
        onLoop.claimants = [:]
    }

    var claimantCount: Int { onLoop.claimants.count }

    // MARK: - From the bus

    func handle(_ event: SystemBusEvent) {
        switch event {
        case .call(let call):
            if isRepeatedClaim(call) {
                // As in the incumbent: claiming what the name claims already changes nothing and
                // asks nobody.
                submit(.reply(call))
            } else if checksPolkit {
                onLoop.authorization.enqueue(call)
                startChecks()
            } else {
                perform(call)
            }
        case .authorization(let call, let answer):
            guard onLoop.authorization.isChecking(call) else { return }
            authorize(call, answer)
            startChecks()
        case .nameVanished(let name):
            // Its unanswered calls go too, or the bus thread would keep their messages for good.
            for call in onLoop.authorization.remove(name) { submit(.forget(call)) }
            for call in onLoop.waitingForValue where call.sender == name { submit(.forget(call)) }
            onLoop.waitingForValue.removeAll { $0.sender == name }
            for line in onLoop.refusals.left(name) { logRefusals(line, leaving: true) }
            startChecks()
            if let claimant = onLoop.claimants.removeValue(forKey: name) {
                hub.disconnect(claimant.listener)
                logger.debug("claimant left the bus", metadata: ["dbus.name": "\(name)"])
            }
        case .nameLost, .disconnected:
            break  // the service that owns the connection handles these
        }
    }

    /// The checks that may start now (a free place, a caller's turn), and a timer for the next
    /// retry if a caller waits for one.
    private func startChecks() {
        for call in onLoop.authorization.callsToCheck(at: MonotonicClock.now()) {
            submit(.authorize(call, action: Self.claimAction))
        }
        let state = onLoop
        state.retryTimer?.cancel()
        state.retryTimer = nil
        if let retry = onLoop.authorization.nextRetry {
            let delay = TimeAmount.nanoseconds(Int64(max(0, retry - MonotonicClock.now()) * 1e9) + 1_000_000)
            state.retryTimer = hub.eventLoop.scheduleTask(in: delay) { [weak self] in self?.startChecks() }
        }
    }

    /// `call` is the one checked for its caller; the answer goes to every call that waited for it.
    private func authorize(_ call: BusCall, _ answer: BusAuthorization) {
        switch answer {
        case .allowed:
            onLoop.authorization.answered(call.sender).forEach(perform)
        case .denied:
            let reason = "polkit does not allow \(call.sender) to claim sensors (\(Self.claimAction))"
            for waiting in onLoop.authorization.answered(call.sender) { deny(waiting, reason) }
        case .polkitAbsent:
            if !onLoop.polkitAbsenceLogged {
                onLoop.polkitAbsenceLogged = true
                logger.warning(
                    "polkit is not on the system bus: claims are allowed from root and the control group only",
                    metadata: ["control.group": "\(hub.configuration.controlGroup ?? "(none)")"])
            }
            submit(.identify(call))  // the caller's check goes on: the bus driver says who it is
        case .identity(let credentials):
            let calls = onLoop.authorization.answered(call.sender)
            if Authorization.isPrivileged(credentials, controlGroup: hub.configuration.controlGroup) {
                calls.forEach(perform)
            } else {
                let reason = "polkit is not running and uid \(credentials.uid) is neither root nor in the control group"
                for waiting in calls { deny(waiting, reason) }
            }
        case .failed(let reason):
            // Not a refusal: polkit restarting, an answer that did not come, the bus's limits. The
            // caller is asked about again; only when every attempt failed do its calls end, with an
            // error that says so (never AccessDenied).
            switch onLoop.authorization.failed(call.sender, at: MonotonicClock.now()) {
            case .scheduled:
                logger.debug(
                    "polkit check failed, retrying", metadata: ["dbus.name": "\(call.sender)", "reason": "\(reason)"])
            case .gaveUp(let calls):
                let message = "orientd could not ask polkit about \(call.sender): \(reason); try again"
                for waiting in calls {
                    submit(.fail(waiting, name: "org.freedesktop.DBus.Error.Failed", message: message))
                    noteRefusal(waiting, reason)
                }
            }
        }
    }

    private func deny(_ call: BusCall, _ reason: String) {
        submit(.fail(call, name: "org.freedesktop.DBus.Error.AccessDenied", message: reason))
        noteRefusal(call, reason)
    }

    /// Counts a refusal; logs it when ``RefusalLog`` says it is time.
    private func noteRefusal(_ call: BusCall, _ reason: String) {
        if let line = onLoop.refusals.refused(call.sender, reason: reason, at: MonotonicClock.now()) {
            logRefusals(line, leaving: false)
        }
    }

    private func logRefusals(_ line: RefusalLog.Line, leaving: Bool) {
        logger.warning(
            leaving ? "claims refused before the caller left the bus" : "claim refused",
            metadata: [
                "dbus.name": "\(line.sender)", "reason": "\(line.reason)", "refused": "\(line.count)",
            ])
    }

    /// A claim of a sensor the caller claims already, with nothing of its own still waiting (a
    /// release in the queue must come first).
    private func isRepeatedClaim(_ call: BusCall) -> Bool {
        call.method.isClaim && onLoop.claimants[call.sender]?.claimed.contains(call.method.claimed) == true
            && !onLoop.authorization.hasWaiting(call.sender)
    }

    /// The hub's topics a claim of `claimed` subscribes to: for the accelerometer the mode too (on a
    /// convertible in laptop mode the orientation reported is the natural one).
    private static func topics(of claimed: ClaimedSensor) -> [Topic] {
        switch claimed {
        case .accelerometer: [.device, .mode]
        case .kind(let kind): [Topic(kind)]
        }
    }

    /// An allowed call: a claim subscribes the name's listener to the sensor's topics, a release
    /// unsubscribes it; a name that claims nothing any more leaves the hub. Claiming a sensor the
    /// device does not have succeeds and changes nothing (clients such as monitor-sensor quit when a
    /// claim fails; the incumbent answers the same way).
    private func perform(_ call: BusCall) {
        let claimed = call.method.claimed
        guard call.method.isClaim else {
            if var claimant = onLoop.claimants[call.sender], claimant.claimed.remove(claimed) != nil {
                if claimant.claimed.isEmpty {
                    onLoop.claimants[call.sender] = nil
                    hub.disconnect(claimant.listener)
                } else {
                    onLoop.claimants[call.sender] = claimant
                    _ = hub.handle(.unsubscribe(Self.topics(of: claimed)), from: claimant.listener)
                }
            }
            submit(.reply(call))
            return
        }
        if onLoop.claimants[call.sender] == nil {
            let listener: ListenerID
            do throws(ProtocolError) {
                // Privileged: the bus policy and polkit have decided who may call (the compass is
                // geoclue's alone), so the hub's own rule for the heading topic is already applied.
                listener = try hub.connect(isPrivileged: true, frontEnd: .sensorProxy)
            } catch {
                submit(.fail(call, name: "org.freedesktop.DBus.Error.LimitsExceeded", message: error.message))
                return
            }
            onLoop.claimants[call.sender] = Claimant(listener: listener, claimed: [])
        }
        if onLoop.claimants[call.sender]!.claimed.insert(claimed).inserted {
            _ = hub.handle(.subscribe(Self.topics(of: claimed)), from: onLoop.claimants[call.sender]!.listener)
            logger.debug("sensor claimed", metadata: ["dbus.name": "\(call.sender)", "sensor": "\(claimed)"])
            update(to: hub.state)
            // A client reads the properties before it claims (GDBusProxy caches them when it is made),
            // and hears changes only once it has claimed: a value that changed in between, another
            // client's sensor being read already, would stay stale in its cache until the next change
            // (monitor-sensor showed `undefined` for good). What the claim covers and no longer holds
            // its initial value is said to it once, before the reply.
            let known = onLoop.values.changes(from: SensorProxyValues()).intersection(.of(claimed))
            if !known.isEmpty { submit(.emitChanged(to: call.sender, known)) }
        }
        // Since 3.6 the reply waits for a first reading, so a client that reads the property right
        // after the claim returns (mutter does, and the incumbent's suite for light and proximity)
        // sees a value: the reply is submitted after the values that carry it, and the bus thread
        // runs commands in order.
        if awaitsValue(claimed) {
            onLoop.waitingForValue.append(call)
            if onLoop.firstReplyTimer == nil {
                onLoop.firstReplyTimer = hub.eventLoop.scheduleTask(in: Self.firstReplyDeadline) { [weak self] in
                    self?.answerWaiting(all: true)
                }
            }
        } else {
            submit(.reply(call))
        }
    }

    /// The sensor `claimed` is being read and its first value is not in the properties yet.
    private func awaitsValue(_ claimed: ClaimedSensor) -> Bool {
        switch claimed {
        case .accelerometer:
            onLoop.values["HasAccelerometer"] == .boolean(true)
                && onLoop.values["AccelerometerOrientation"] == .string(AccelerometerOrientation.undefined.rawValue)
        case .kind(let kind): hub.awaitsFirstReading(kind)
        }
    }

    /// Answers the waiting claims whose value came (every one at the deadline).
    private func answerWaiting(all: Bool) {
        let (ready, waiting) =
            all
            ? (onLoop.waitingForValue, [])
            : onLoop.waitingForValue.reduce(into: ([BusCall](), [BusCall]())) { split, call in
                if awaitsValue(call.method.claimed) { split.1.append(call) } else { split.0.append(call) }
            }
        onLoop.waitingForValue = waiting
        for call in ready { submit(.reply(call)) }
        if waiting.isEmpty {
            onLoop.firstReplyTimer?.cancel()
            onLoop.firstReplyTimer = nil
        }
    }

    // MARK: - From the hub

    /// The one door for values: the hub calls this after every change it performed (events, a
    /// sensor's presence, the tilt), so a sample that changes the orientation and the tilt makes one
    /// PropertiesChanged per claimant, not one per kind of change.
    func follow(_ state: DaemonState) {
        update(to: state)
    }

    private func update(to state: DaemonState) {
        onLoop.recomputations += 1
        let next = onLoop.values.following(
            state,
            context: SensorProxyContext(
                tilt: state.tilt.map(AccelerometerTilt.init), laptopKeepsNormal: hub.configuration.laptopKeepsNormal,
                followsLock: hub.configuration.dbusFollowsLock))
        let changes = next.changes(from: onLoop.values)
        if !changes.isEmpty {
            onLoop.values = next
            submit(.setValues(next))
            // Since 3.1 only claimants hear PropertiesChanged, each its own unicast signal, and only of
            // the sensors it claims.
            for (name, claimant) in onLoop.claimants.sorted(by: { $0.key < $1.key }) {
                let heard = changes.intersection(
                    claimant.claimed.reduce(into: SensorProxyValues.Changes()) { $0.formUnion(.of($1)) })
                if !heard.isEmpty { submit(.emitChanged(to: name, heard)) }
            }
        }
        // A first reading equal to the last one changes no property, and still answers its claims.
        if !onLoop.waitingForValue.isEmpty { answerWaiting(all: false) }
    }
}
