import CSdBus
import NIOConcurrencyHelpers
import SensorCore

#if canImport(Glibc)
import Glibc
#endif

/// The thread that owns one sd-bus connection (sd-bus is not thread-safe), and what other threads
/// hand it: its loop takes the `Inbox` they filled (under a pthread lock), dispatches what the bus
/// brought, and sleeps in poll(2) on the bus and an eventfd until either has more, or sd-bus's own
/// timeout (a call's reply) comes due. A thread asleep there costs no wake-ups while nothing happens.
///
/// Shared by the net.hadess.SensorProxy connection (``SystemBusConnection``) and logind's sleep
/// watch (``SleepWatch``), each with a thread of its own.
final class BusThread<Inbox: Sendable>: Sendable {
    private let wakeup = Wakeup()
    private let state: NIOLockedValueBox<(inbox: Inbox, stopping: Bool)>
    /// What the inbox holds once taken.
    private let empty: Inbox
    private let thread = NIOLockedValueBox<WorkerThread?>(nil)

    init(empty: Inbox) {
        self.empty = empty
        state = NIOLockedValueBox((empty, false))
    }

    /// Starts `body` (which calls ``run(_:handle:)``) on a thread named `name`.
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        thread.withLockedValue { $0 = WorkerThread(name: name, body) }
    }

    /// Changes the inbox and wakes the thread (from any thread).
    func hand(_ change: (inout Inbox) -> Void) {
        state.withLockedValue { change(&$0.inbox) }
        wakeup.signal()
    }

    /// Ends the loop and joins the thread; idempotent.
    func stop() {
        state.withLockedValue { $0.stopping = true }
        wakeup.signal()
        thread.withLockedValue { $0 }?.join()
        thread.withLockedValue { $0 = nil }
    }

    /// The loop, on the thread: runs until ``stop()`` (nil) or until the connection breaks (the
    /// negative errno of `sd_bus_process`). `handle` gets what was handed in first on every turn,
    /// so what came before the thread started is done before any message is read.
    func run(_ bus: OpaquePointer, handle: (Inbox) -> Void) -> Int32? {
        while true {
            let (inbox, stopping) = state.withLockedValue { state in
                defer { state.inbox = empty }
                return state
            }
            if stopping { return nil }
            handle(inbox)
            var processed: Int32
            repeat { processed = sd_bus_process(bus, nil) } while processed > 0
            if processed < 0 { return processed }
            var deadline: UInt64 = 0
            var timeout: Double?
            if sd_bus_get_timeout(bus, &deadline) > 0, deadline != UInt64.max {
                timeout = max(0, Double(deadline) / 1e6 - MonotonicClock.now())
            }
            // What is handed in meanwhile has signalled the eventfd: the wait returns at once.
            let events = sd_bus_get_events(bus)
            _ = wakeup.wait(
                timeout: timeout, other: sd_bus_get_fd(bus), otherEvents: Int16(truncatingIfNeeded: max(events, 0)))
        }
    }
}
