import OrientationCore
import OrientationProtocol

/// Every listener's own resolver session: opening, closing and reading them, the `scene.*` ops,
/// and the daemon's device and lock changes reaching them. The one place that knows how a session
/// starts on a running daemon and how large it may grow.
///
/// A value with no clock and no I/O: it returns what each session's owner must hear, and
/// ``HubStateMachine`` turns that into events.
struct ResolverSessions {
    private struct Session {
        var resolver: InterfaceOrientationResolver
        /// Counts this session's events (`sessionSeq`).
        var eventCount = 0

        mutating func event(_ change: InterfaceOrientationChange) -> EventPayload {
            eventCount += 1
            return .session(sessionSeq: eventCount, change)
        }
    }

    private var sessions: [ListenerID: Session] = [:]
    /// Nodes a session may hold, all levels and stacks together.
    var maximumNodes: Int

    init(maximumNodes: Int) {
        self.maximumNodes = maximumNodes
    }

    func hasSession(_ listener: ListenerID) -> Bool { sessions[listener] != nil }

    /// Opens `listener`'s session on a daemon whose device orientation is `device` and lock `locked`.
    /// With `initial` the session starts exactly there (interface unknown until `scene.launch`);
    /// without it, one scene of `idiom` is launched at once.
    mutating func open(
        for listener: ListenerID, initial given: ResolverState?, idiom: DeviceIdiom,
        device: DeviceOrientation, locked: Bool
    ) throws(ProtocolError) -> ReplyBody {
        guard sessions[listener] == nil else {
            throw ProtocolError(.sessionExists, "this connection already has a session; session.close first")
        }
        var initial =
            given ?? ResolverState(idiom: idiom, physicalDevice: .unknown, interface: .unknown, root: .scene("root"))
        try checkSize(initial)
        initial.physicalDevice = device  // the session follows the daemon's device orientation
        initial.setLock(locked)
        var session = Session(resolver: InterfaceOrientationResolver(state: initial))
        var launchChange: InterfaceOrientationChange?
        if given == nil {
            let outcome = session.resolver.apply(.launch)
            if let error = outcome.error {
                throw ProtocolError(
                    ProtocolErrorCode(error.code), "the session cannot start: \(error.reason.rawValue)",
                    reason: error.reason.rawValue)
            }
            launchChange = outcome.interfaceChange
        }
        sessions[listener] = session
        return .sessionChange(SessionSnapshot(session.resolver.state), change: launchChange)
    }

    mutating func close(for listener: ListenerID) throws(ProtocolError) {
        guard sessions.removeValue(forKey: listener) != nil else {
            throw ProtocolError(.noSession, "this connection has no session")
        }
    }

    /// The listener is gone: its session goes with it.
    mutating func remove(_ listener: ListenerID) {
        sessions[listener] = nil
    }

    func snapshot(for listener: ListenerID) throws(ProtocolError) -> SessionSnapshot {
        guard let session = sessions[listener] else {
            throw ProtocolError(.noSession, "this connection has no session; session.open first")
        }
        return SessionSnapshot(session.resolver.state)
    }

    /// A `scene.*` op: the reply, and the session event it caused (for the owner).
    mutating func perform(
        _ operation: Operation, _ action: ResolverAction,
        for listener: ListenerID
    ) throws(ProtocolError) -> (reply: ReplyBody, event: EventPayload?) {
        guard var session = sessions[listener] else {
            throw ProtocolError(.noSession, "\(operation.rawValue) needs a session; session.open first")
        }
        switch action {
        case .push(let node, _), .present(let node, _): try checkSize(session.resolver.state, adding: node)
        default: break
        }
        let outcome = session.resolver.apply(action)
        if let error = outcome.error { throw ProtocolError(rejected: action.name, error) }
        let event = outcome.interfaceChange.map { session.event($0) }
        sessions[listener] = session
        return (.sessionChange(SessionSnapshot(session.resolver.state), change: outcome.interfaceChange), event)
    }

    /// A device or lock change of the daemon reaches every session: what each owner hears.
    mutating func apply(_ action: ResolverAction) -> [(listener: ListenerID, payload: EventPayload)] {
        var heard: [(listener: ListenerID, payload: EventPayload)] = []
        for index in sessions.indices {
            let listener = sessions.keys[index]
            let outcome = sessions.values[index].resolver.apply(action)
            if let change = outcome.interfaceChange { heard.append((listener, sessions.values[index].event(change))) }
            if let error = outcome.error {
                heard.append((listener, .sessionRejected(ProtocolError(rejected: action.name, error))))
            }
        }
        return heard
    }

    /// The one node limit: `state`, with `node` added when given, must fit.
    private func checkSize(_ state: ResolverState, adding node: PresentationNode? = nil) throws(ProtocolError) {
        let nodes =
            Self.nodeCount(state.root) + state.presented.map { Self.nodeCount($0.node) }.reduce(0, +)
            + (node.map(Self.nodeCount) ?? 0)
        if nodes > maximumNodes { throw .sessionLimit(maximumNodes: maximumNodes) }
    }

    private static func nodeCount(_ node: PresentationNode) -> Int { 1 + node.children.map(nodeCount).reduce(0, +) }
}
