import NIOConcurrencyHelpers

/// An accelerometer source's outlet.
public typealias SensorEventOutlet = EventOutlet<SensorEvent>

/// Where a source's events go: to one consumer, either an `AsyncStream` (``events``, for the
/// commands and tests) or a receiver called on the source's own thread (``deliver(to:)``, for the
/// daemon, whose detector then runs where the samples arrive and wakes the event loop only when
/// something changed: one thread wake-up per sample instead of three).
///
/// Events emitted before the consumer is chosen are kept and handed over first, in order. The
/// receiver is called with a lock held, so events from different threads of a source (its queue
/// and its sampling thread) arrive one at a time and in the order they were emitted; it must not
/// call back into the source.
public final class EventOutlet<Event: Sendable>: Sendable {
    public typealias Receiver = @Sendable (Event) -> Void

    private enum Consumer {
        case undecided(backlog: [Event], finished: Bool)
        case stream(AsyncStream<Event>.Continuation, AsyncStream<Event>)
        case receiver(Receiver)
        case finished(AsyncStream<Event>?)
    }

    /// A pthread lock, not Synchronization.Mutex, whose futex ThreadSanitizer cannot see on Linux.
    private let consumer = NIOLockedValueBox(Consumer.undecided(backlog: [], finished: false))

    public init() {}

    /// Hands `event` to the consumer (or keeps it until one is chosen). Ignored after ``finish()``.
    public func emit(_ event: Event) {
        consumer.withLockedValue { consumer in
            switch consumer {
            case .undecided(var backlog, let finished):
                guard !finished else { return }
                consumer = .undecided(backlog: [], finished: false)  // no copy-on-write of the backlog
                backlog.append(event)
                consumer = .undecided(backlog: backlog, finished: false)
            case .stream(let continuation, _):
                continuation.yield(event)
            case .receiver(let receive):
                receive(event)
            case .finished:
                break
            }
        }
    }

    /// No more events: the stream finishes; a receiver is simply not called again.
    public func finish() {
        consumer.withLockedValue { consumer in
            switch consumer {
            case .undecided(let backlog, _):
                consumer = .undecided(backlog: backlog, finished: true)
            case .stream(let continuation, let stream):
                continuation.finish()
                consumer = .finished(stream)
            case .receiver:
                consumer = .finished(nil)
            case .finished:
                break
            }
        }
    }

    /// The events as a stream, starting with any kept ones. The first call chooses the stream;
    /// later calls return the same stream. Fails when a receiver was chosen.
    public var events: AsyncStream<Event> {
        consumer.withLockedValue { consumer in
            switch consumer {
            case .undecided(let backlog, let finished):
                let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
                for event in backlog { continuation.yield(event) }
                if finished {
                    continuation.finish()
                    consumer = .finished(stream)
                } else {
                    consumer = .stream(continuation, stream)
                }
                return stream
            case .stream(_, let stream), .finished(let stream?):
                return stream
            case .receiver, .finished(nil):
                preconditionFailure("a source's events go to one consumer: a receiver was already chosen")
            }
        }
    }

    /// Sends every event, starting with any kept ones, to `receive` on the emitting thread.
    /// Fails when the stream was chosen.
    public func deliver(to receive: @escaping Receiver) {
        consumer.withLockedValue { consumer in
            switch consumer {
            case .undecided(let backlog, let finished):
                for event in backlog { receive(event) }
                consumer = finished ? .finished(nil) : .receiver(receive)
            case .stream, .finished(.some):
                preconditionFailure("a source's events go to one consumer: the stream was already chosen")
            case .receiver, .finished(nil):
                preconditionFailure("a source's events go to one receiver")
            }
        }
    }
}
