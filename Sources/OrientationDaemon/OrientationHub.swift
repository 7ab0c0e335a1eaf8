import Logging
import NIOCore
import OrientationCore
import OrientationProtocol
import SensorCore

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's state and every decision about it: the detection pipeline fed by the sensor, the
/// system resolver session, claims on the sensor, subscriptions, per-connection sessions and the
/// sequence numbers clients see.
///
/// Confined to one event loop (the one all connections run on), so it needs no locks and events go
/// out in the order they happen.
public final class OrientationHub: @unchecked Sendable {
    public let eventLoop: any EventLoop
    private(set) var configuration: DaemonConfiguration
    let serverName: String
    /// `orientd.hub` (requests, claims, shutdown).
    let logger = Logger(label: "orientd.hub")
    /// `orientd.sensor` (sensor events).
    let sensorLogger = Logger(label: "orientd.sensor")
    /// `orientd.socket` (connections).
    let socketLogger = Logger(label: "orientd.socket")
    /// Told a one-line summary whenever the state or the number of clients changes (systemd STATUS=),
    /// at most once a second (see ``StatusThrottle``).
    var statusObserver: (@Sendable (String) -> Void)?
    private var statusThrottle = StatusThrottle(interval: 1)
    private var helloCache: (seq: Int, state: DaemonState, line: ByteBuffer)?
    private let source: any AccelerometerSource

    private(set) var state: DaemonState
    private(set) var seq = 0
    /// Shared with the sensor's thread, which feeds it (see ``DetectionStage``).
    let detection: DetectionStage
    private var systemSession: InterfaceOrientationResolver
    private var connections: [ObjectIdentifier: Connection] = [:]
    /// Per topic, the connections subscribed to it, in subscription order: a publish walks only
    /// its listeners. (Walking the dictionary of every connection and asking each for the topic
    /// doubled the fan-out time to a thousand subscribers: 6.4 ms from first to last, now 3.6 ms.)
    private var listeners: [String: [Connection]] = [:]
    /// The connections with a resolver session: device and lock changes reach those only (walking
    /// every connection after each change touched 1,000 objects for nothing).
    private var sessionHolders: [ObjectIdentifier: Connection] = [:]
    private var claims = 0
    private var sampling = false
    private var lingerTask: Scheduled<Void>?
    private var silenceTask: RepeatedTask?
    private var sensorPresent = false
    private var activeFaults: Set<SensorFault.Kind> = []
    /// Every fault episode changes the status; the log hears of each kind at most every 10 s.
    private var faultLog = FaultLogLimiter()

    public init(eventLoop: any EventLoop, configuration: DaemonConfiguration, source: any AccelerometerSource, serverName: String) {
        self.eventLoop = eventLoop
        self.configuration = configuration
        self.source = source
        self.serverName = serverName
        detection = DetectionStage(configuration: configuration.detector)
        systemSession = Self.makeSystemSession(configuration)
        state = DaemonState(device: .unknown, interface: .unknown, sensor: .absent, locked: configuration.lockedAtStart)
        let launched = systemSession.apply(.launch)
        state.interface = systemSession.state.interface
        if let error = launched.error { logger.error("system session cannot start", metadata: ["error": "\(error)"]) }
    }

    /// The system session: one scene supporting the configured orientations, following the device.
    static func makeSystemSession(_ configuration: DaemonConfiguration, device: DeviceOrientation = .unknown,
                                  interface: InterfaceOrientation = .unknown, locked: Bool? = nil) -> InterfaceOrientationResolver {
        InterfaceOrientationResolver(state: ResolverState(
            profile: .ios16, idiom: configuration.idiom, infoPlistMask: configuration.supportedOrientations,
            lock: locked ?? configuration.lockedAtStart, physicalDevice: device, interface: interface,
            root: .scene("system", supported: configuration.supportedOrientations)))
    }

    var connectionCount: Int { connections.count }

    // MARK: - Connections

    func add(_ connection: Connection) {
        eventLoop.preconditionInEventLoop()
        connections[ObjectIdentifier(connection)] = connection
        connection.send(line: helloLine())
        reportStatus()
    }

    func remove(_ connection: Connection) {
        eventLoop.preconditionInEventLoop()
        guard connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
        sessionHolders[ObjectIdentifier(connection)] = nil
        let held = connection.claimCount
        for topic in connection.subscribedTopics { listeners[topic]?.removeAll { $0 === connection } }
        connection.topicCounts.removeAll()
        if held > 0 { release(held) }
        reportStatus()
    }

    /// The summary systemd shows in `systemctl status`.
    var statusLine: String {
        let sensor = state.sensorName.map { "sensor \(state.sensor.rawValue) (\($0))" } ?? "sensor \(state.sensor.rawValue)"
        return "\(sensor); \(connections.count) client\(connections.count == 1 ? "" : "s"); device \(state.device.rawValue), interface \(state.interface.rawValue)\(state.locked ? ", locked" : "")"
    }

    private func reportStatus() {
        guard let statusObserver else { return }
        let now = MonotonicClock.now()
        switch statusThrottle.statusChanged(at: now) {
        case .sendNow:
            statusObserver(statusLine)
        case .sendAt(let time):
            eventLoop.scheduleTask(in: .nanoseconds(Int64(max(0, time - now) * 1e9))) { [weak self] in
                guard let self else { return }
                statusThrottle.heldStatusSent(at: MonotonicClock.now())
                self.statusObserver?(statusLine)
            }
        case .alreadyHeld:
            break
        }
    }

    /// The hello for a new client: serialized once for each state it describes (connections come
    /// much more often than changes when clients connect in a loop).
    private func helloLine() -> ByteBuffer {
        if let cached = helloCache, cached.seq == seq, cached.state == state { return cached.line }
        let line = Connection.line(ServerMessage.hello(server: serverName, state: state, seq: seq))
        helloCache = (seq, state, line)
        return line
    }

    /// Applies a re-read configuration (SIGHUP); returns what needs a restart to change.
    func reload(_ new: DaemonConfiguration) -> [String] {
        eventLoop.preconditionInEventLoop()
        var restart: [String] = []
        if new.socketPath != configuration.socketPath { restart.append("socket path") }
        if new.socketMode != configuration.socketMode || new.socketGroup != configuration.socketGroup { restart.append("socket mode and group") }
        if new.idiom != configuration.idiom { restart.append("session idiom") }
        if new.detector != configuration.detector {
            detection.restart(configuration: new.detector)
            logger.notice("detector parameters changed: detection starts afresh")
        }
        if new.supportedOrientations != configuration.supportedOrientations {
            // The app-wide mask cannot change through resolver actions: a new system session takes
            // over the device, interface and lock, then enforces the new mask.
            systemSession = Self.makeSystemSession(new, device: state.device, interface: state.interface, locked: state.locked)
            applyToSystemSession(.updateSupportedOrientations)
        }
        let kept = (configuration.socketPath, configuration.socketMode, configuration.socketGroup, configuration.idiom)
        configuration = new
        (configuration.socketPath, configuration.socketMode, configuration.socketGroup, configuration.idiom) = kept
        reportStatus()
        return restart
    }

    /// Says goodbye to every client and ends each connection gracefully (see
    /// ``Connection/finish(goodbye:linger:)``); completes when all are closed, at most `linger` later.
    func closeAll(reason: String, linger: TimeAmount = .seconds(1)) -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        let goodbye = ServerMessage.goodbye(reason: reason)
        let closed = connections.values.map { $0.finish(goodbye: goodbye, linger: linger) }
        connections.removeAll()
        listeners.removeAll()
        sessionHolders.removeAll()
        silenceTask?.cancel()
        lingerTask?.cancel()
        return EventLoopFuture.andAllComplete(closed, on: eventLoop)
    }

    // MARK: - Claims

    private func claim(_ count: Int) {
        claims += count
        lingerTask?.cancel()
        lingerTask = nil
        if !sampling, claims > 0 {
            sampling = true
            source.startSampling()
            logger.info("sensor claimed: sampling starts", metadata: ["claims": "\(claims)"])
            silenceTask = eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(500), delay: .milliseconds(500)) { [weak self] _ in
                self?.checkSilence()
            }
            updateSensorStatus()
        }
    }

    private func release(_ count: Int) {
        claims = max(0, claims - count)
        guard claims == 0, sampling, lingerTask == nil else { return }
        lingerTask = eventLoop.scheduleTask(in: .nanoseconds(Int64(configuration.claimLinger * 1e9))) { [weak self] in
            guard let self, claims == 0 else { return }
            lingerTask = nil
            sampling = false
            source.stopSampling()
            silenceTask?.cancel()
            silenceTask = nil
            logger.info("no claims left: sampling stops")
            updateSensorStatus()
        }
    }

    /// The sensor has been silent for the detector's timeout: the orientation becomes unknown.
    private func checkSilence() {
        if let change = detection.advance(to: MonotonicClock.now()) { deviceChanged(change) }
    }

    // MARK: - Sensor events

    /// Feeds `event` to the detection stage and handles it, all on the loop.
    func handle(_ event: SensorEvent) {
        handle(event, detected: detection.observe(event))
    }

    /// Handles an event the detection stage has already observed (on the sensor's thread), with the
    /// device-orientation change that produced.
    func handle(_ event: SensorEvent, detected change: OrientationChange?) {
        eventLoop.preconditionInEventLoop()
        switch event {
        case .available(let description):
            if !sensorPresent || state.sensorName != description.identifier {
                sensorLogger.info("sensor available", metadata: [
                    "sensor.device": "\(description.identifier)", "sensor.name": "\(description.name)",
                    "sensor.mode": "\(description.acquisition?.rawValue ?? "mock")",
                    "sensor.matrix": "\(description.mountMatrix.text) (\(description.mountMatrixOrigin.rawValue))",
                    "sensor.selection": "\(description.selection ?? "")",
                ])
            }
            for problem in description.mountMatrixProblems { sensorLogger.warning("\(problem)") }
            sensorPresent = true
            state.sensorName = description.identifier
            updateSensorStatus()
        case .unavailable(let reason):
            sensorLogger.warning("sensor unavailable", metadata: ["reason": "\(reason)"])
            sensorPresent = false
            activeFaults.removeAll()
            state.sensorName = nil
            reportDetectionRestarted()
            updateSensorStatus()
        case .sample:
            if let change { deviceChanged(change) }
        case .fault(let fault):
            if faultLog.logFault(fault.kind, at: MonotonicClock.now()) {
                sensorLogger.warning("sensor fault", metadata: ["sensor.device": "\(fault.device)", "fault": "\(fault.kind.rawValue)", "detail": "\(fault.detail)"])
            }
            if fault.kind != .stuck { activeFaults.insert(fault.kind) }
            updateSensorStatus()
        case .recovered(let kind, let device):
            if faultLog.logRecovery(kind) {
                sensorLogger.info("sensor recovered", metadata: ["sensor.device": "\(device)", "fault": "\(kind.rawValue)"])
            }
            activeFaults.remove(kind)
            updateSensorStatus()
        case .ended:
            sensorLogger.info("sensor input ended")
            sensorPresent = false
            state.sensorName = nil
            reportDetectionRestarted()
            updateSensorStatus()
        }
    }

    /// Detection starts afresh with the next sensor: the orientation is unknown until it decides again.
    private func reportDetectionRestarted() {
        if state.device != .unknown {
            deviceChanged(OrientationChange(time: MonotonicClock.now(), from: state.device, to: .unknown))
        }
    }

    private func updateSensorStatus() {
        let status: SensorStatus = !sensorPresent ? .absent : !activeFaults.isEmpty ? .failed : sampling ? .active : .idle
        guard status != state.sensor else { return }
        let from = state.sensor
        state.sensor = status
        publish(topic: "sensor", fields: [("from", .string(from.rawValue)), ("to", .string(status.rawValue))])
    }

    // MARK: - Orientation changes

    private func deviceChanged(_ change: OrientationChange) {
        // A restarted detector (new parameters) decides afresh, possibly what clients already have.
        guard change.to != state.device else { return }
        let from = state.device
        state.device = change.to
        publish(topic: "device", fields: [("from", .string(from.rawValue)), ("to", .string(change.to.rawValue))])
        applyToSystemSession(.deviceOrientation(change.to))
        for connection in sessionHolders.values { connection.applyToSession(.deviceOrientation(change.to)) }
    }

    private func applyToSystemSession(_ action: ResolverAction) {
        let outcome = systemSession.apply(action)
        if let error = outcome.error {
            logger.warning("system session rejected \(action.name)", metadata: ["error": "\(error)"])
        }
        if let change = outcome.interfaceChange {
            state.interface = change.to
            publish(topic: "interface", fields: change.protocolFields)
        }
    }

    /// One change of the daemon's state: `seq` grows by one and every subscriber of `topic` hears it.
    private func publish(topic: String, fields: [(key: String, value: JSONValue)]) {
        seq += 1
        let event = ServerMessage.event(topic: topic, seq: seq, time: MonotonicClock.now(), state: state, fields: fields)
        let line = Connection.line(event)  // serialized once, shared by every subscriber
        for connection in listeners[topic] ?? [] {
            connection.sendEvent(line: line, topic: topic)
        }
        reportStatus()
    }

    // MARK: - Requests

    func handle(_ request: Request, from connection: Connection) {
        eventLoop.preconditionInEventLoop()
        do {
            let fields = try perform(request, from: connection)
            connection.send(ServerMessage.reply(id: request.id, fields: fields))
        } catch let error as ProtocolError {
            connection.send(ServerMessage.reply(id: request.id, error: error))
        } catch let error as JSONFieldError {
            connection.send(ServerMessage.reply(id: request.id, error: .badRequest("\(error.path): \(error.problem)")))
        } catch {
            connection.send(ServerMessage.reply(id: request.id, error: ProtocolError("internal-error", "\(error)")))
        }
    }

    private func perform(_ request: Request, from connection: Connection) throws -> [(key: String, value: JSONValue)] {
        let body = request.body
        switch request.op {
        case "get":
            return [("seq", .number(Double(seq))), ("state", state.json)]

        case "subscribe", "unsubscribe":
            let topics = try body.required("topics").array().map { element throws(JSONFieldError) -> String in
                let topic = try element.string()
                guard OrientationProtocol.topics.contains(topic) else {
                    throw element.fail("unknown topic \"\(topic)\" (topics: \(OrientationProtocol.topics.joined(separator: ", ")))")
                }
                return topic
            }
            let before = connection.claimCount
            if request.op == "subscribe" {
                for topic in topics {
                    if connection.topicCounts[topic] == nil { listeners[topic, default: []].append(connection) }
                    connection.topicCounts[topic, default: 0] += 1
                }
            } else {
                for topic in topics where connection.topicCounts[topic] != nil {
                    connection.topicCounts[topic]! -= 1
                    if connection.topicCounts[topic] == 0 {
                        connection.topicCounts[topic] = nil
                        listeners[topic]?.removeAll { $0 === connection }
                    }
                }
            }
            let after = connection.claimCount
            if after > before { claim(after - before) } else if after < before { release(before - after) }
            return [("topics", .array(connection.subscribedTopics.map { .string($0) })), ("seq", .number(Double(seq))), ("state", state.json)]

        case "lock":
            try requirePrivilege(connection)
            let on = try body.required("on").bool()
            if on != state.locked {
                state.locked = on
                publish(topic: "lock", fields: [("locked", .bool(on))])
                applyToSystemSession(.setLock(on))
                for other in sessionHolders.values { other.applyToSession(.setLock(on)) }
            }
            return [("state", state.json)]

        case "system.setSupportedOrientations":
            try requirePrivilege(connection)
            let mask = try ResolverJSON.mask(try body.required("mask"))
            guard !mask.isEmpty else { throw body.fail("mask must not be empty") }
            _ = systemSession.apply(.updateScene(id: "system", supported: .set(mask)))
            applyToSystemSession(.updateSupportedOrientations)
            return [("state", state.json)]

        case "session.open":
            guard connection.session == nil else { throw ProtocolError("session-exists", "this connection already has a session; session.close first") }
            // With `initial` the session starts exactly there (interface unknown until scene.launch);
            // without it, a default scene is launched at once.
            let given = try body.optional("initial").map { try ResolverJSON.state($0) }
            var initial = given ?? ResolverState(idiom: configuration.idiom, physicalDevice: .unknown, interface: .unknown, root: .scene("root"))
            try connection.checkSessionSize(initial)
            initial.physicalDevice = state.device  // the session follows the daemon's device orientation
            if state.locked != initial.lock {
                initial.lock = state.locked
                if state.locked { initial.lockPin = initial.idiom == .phone ? .portrait : (initial.interface.deviceOrientation ?? .portrait) }
            }
            var session = InterfaceOrientationResolver(state: initial)
            var launchChange: InterfaceOrientationChange?
            if given == nil {
                let outcome = session.apply(.launch)
                if let error = outcome.error { throw ProtocolError(error.code.rawValue, "the session cannot start: \(error.reason.rawValue)", reason: error.reason.rawValue) }
                launchChange = outcome.interfaceChange
            }
            connection.session = session
            sessionHolders[ObjectIdentifier(connection)] = connection
            return Connection.sessionFields(session.state) + [("change", launchChange.map { ResolverJSON.json($0, complete: true) } ?? .null)]

        case "session.close":
            guard connection.session != nil else { throw ProtocolError("no-session", "this connection has no session") }
            connection.session = nil
            sessionHolders[ObjectIdentifier(connection)] = nil
            return []

        case "session.get":
            guard let session = connection.session else { throw ProtocolError("no-session", "this connection has no session; session.open first") }
            return Connection.sessionFields(session.state)

        default:
            if request.op.hasPrefix("scene.") { return try connection.performSceneOp(request) }
            throw ProtocolError.unknownOperation(request.op)
        }
    }

    private func requirePrivilege(_ connection: Connection) throws {
        guard connection.isPrivileged else {
            logger.notice("privileged op refused", metadata: ["peer.uid": "\(connection.credentials?.uid.description ?? "?")"])
            throw ProtocolError.permissionDenied
        }
    }
}
