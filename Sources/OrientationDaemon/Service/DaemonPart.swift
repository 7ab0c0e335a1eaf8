import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// A long-lived part of the daemon (a sensor, the socket, the bus, …): started once, in the order
/// of the daemon's one list, and stopped once, in reverse, on every way out.
public struct DaemonPart: Sendable {
    /// What the log, `--fail-at-start` and the tests call it: `display-sensor`, `socket`, `dbus`.
    public let name: String
    /// Starts the part; a part that throws has left nothing running.
    let start: @Sendable () async throws -> Void
    /// Ends what `start` began.
    let stop: @Sendable () async -> Void

    init(
        _ name: String, start: @escaping @Sendable () async throws -> Void,
        stop: @escaping @Sendable () async -> Void
    ) {
        self.name = name
        self.start = start
        self.stop = stop
    }
}

/// `--fail-at-start PART`: the part throws this instead of starting (for the tests that check that
/// everything started before it stops).
public struct InjectedStartFailure: Error, CustomStringConvertible {
    public let part: String
    public var description: String { "\(part) failed to start (--fail-at-start)" }
}

/// Opens once, when its part has started; the part after it waits for that. A part that fails to
/// start never opens its gate, so nothing after it starts.
final class StartGate: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream<Void>.makeStream()
    }

    func open() {
        continuation.yield()
        continuation.finish()
    }

    /// True once open; false when the waiting task is cancelled first.
    func opened() async -> Bool {
        for await _ in stream { return true }
        return false
    }
}

/// One ``DaemonPart`` as a swift-service-lifecycle `Service` of the daemon's one `ServiceGroup`.
///
/// Why gates: a `ServiceGroup` runs every service at once and stops them in reverse order, one at a
/// time, each after the one behind it has returned. Chaining the starts through gates adds the
/// other half, start in order: a part starts only once the part before it has started. So a part
/// that fails to start (it throws; the group shuts down gracefully) leaves the parts after it
/// waiting, and each of those returns when its turn to stop comes, having started nothing; the parts
/// before it stop in reverse. A SIGTERM during the start does the same.
struct PartService: Service, CustomStringConvertible {
    let part: DaemonPart
    /// The previous part's gate (nil for the first part).
    let after: StartGate?
    /// This part's gate, which the next part waits for.
    let gate: StartGate
    let failsAtStart: Bool
    let logger: Logger

    var description: String { part.name }

    func run() async throws {
        if let after {
            let previousStarted = await cancelWhenGracefulShutdown { await after.opened() }
            guard previousStarted else { return }  // stopped before its turn: nothing to stop
        }
        do {
            if failsAtStart { throw InjectedStartFailure(part: part.name) }
            try await part.start()
        } catch {
            logger.debug("part failed to start", metadata: ["part": "\(part.name)", "error": "\(error)"])
            throw error
        }
        logger.debug("started", metadata: ["part": "\(part.name)"])
        gate.open()
        try? await gracefulShutdown()  // cancelled (the group's deadline passed) stops it too
        logger.debug("stopping", metadata: ["part": "\(part.name)"])
        await part.stop()
    }

    /// The parts as services in start order, each started after the one before it, every one of
    /// them shutting the group down when it fails or ends.
    static func chain(
        _ parts: [DaemonPart], failingAtStart: String?, logger: Logger
    ) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        var previous: StartGate?
        return parts.map { part in
            let service = PartService(
                part: part, after: previous, gate: StartGate(), failsAtStart: part.name == failingAtStart,
                logger: logger)
            previous = service.gate
            return .init(
                service: service, successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup)
        }
    }
}
