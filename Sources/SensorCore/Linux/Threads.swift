#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinux
import NIOConcurrencyHelpers

/// Seconds on CLOCK_MONOTONIC: the one clock every sample time and deadline in orientd uses.
public enum MonotonicClock {
    public static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Seconds the system has spent suspended since boot: CLOCK_BOOTTIME counts them, CLOCK_MONOTONIC
    /// does not, so the difference grows by exactly each sleep's length (``SuspendNotice``).
    public static func suspendedSoFar() -> Double {
        var boot = timespec(), monotonic = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        return Double(boot.tv_sec - monotonic.tv_sec) + Double(boot.tv_nsec - monotonic.tv_nsec) / 1e9
    }

    /// Seconds since the Unix epoch (CLOCK_REALTIME), for times shown to people, never for intervals.
    public static func unixTime() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// A joinable OS thread for work that blocks (sysfs reads that take seconds, buffer refills, reading
/// standard input), so that it never holds up an event loop or Swift's cooperative pool.
public final class WorkerThread: Sendable {
    /// The thread until ``join()``. A pthread lock (ThreadSanitizer sees it), held while joining, so
    /// that a second `join()` returns only once the thread has ended too.
    private let thread: NIOLockedValueBox<pthread_t?>
    public let name: String

    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Starts `body` on a new thread named `name` (shown in `top -H`, truncated to 15 bytes).
    public convenience init(name: String, _ body: @escaping @Sendable () -> Void) {
        self.init(name: name, owned: body)
    }

    /// Starts `body` on a new thread named `name`, `body` taking along state that is not Sendable
    /// (a worker's files and libiio handles): it is the new thread's alone, released there when
    /// `body` returns.
    public static func start(name: String, owning body: sending @escaping () -> Void) -> WorkerThread {
        WorkerThread(name: name, owned: body)
    }

    private init(name: String, owned body: sending @escaping () -> Void) {
        self.name = name
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { argument in
                let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
                box.body()
                return nil
            }, box)
        precondition(result == 0, "pthread_create failed: \(result)")
        thread = NIOLockedValueBox(handle)
        _ = String(name.utf8.prefix(15))!.withCString { pthread_setname_np(handle, $0) }
    }

    /// Waits for the body to return; later calls return at once.
    public func join() {
        thread.withLockedValue { thread in
            guard let handle = thread else { return }
            pthread_join(handle, nil)
            thread = nil
        }
    }
}

extension WorkerThread {
    /// Runs `body`, which blocks (a bus round trip, a sysfs walk, joining a sensor's threads), on a
    /// thread of its own and returns what it returned. The caller's executor, the event loop that
    /// runs Swift Concurrency's jobs in the daemon, goes on serving every client meanwhile. The
    /// thread ends with `body` and is joined.
    public static func run<Output: Sendable, Failure: Error>(
        _ name: String, _ body: @escaping @Sendable () throws(Failure) -> Output
    ) async throws(Failure) -> Output {
        let thread = NIOLockedValueBox<WorkerThread?>(nil)
        let result: Result<Output, Failure> = await withCheckedContinuation { continuation in
            thread.withLockedValue { thread in
                thread = WorkerThread(name: name) { continuation.resume(returning: Result(catching: body)) }
            }
        }
        thread.withLockedValue { $0 }?.join()  // it has resumed us: it is ending now
        return try result.get()
    }
}

/// An eventfd that lets one thread interrupt another's wait: the waiter sleeps in `poll()` on the
/// eventfd (and optionally one more descriptor) instead of sleeping blindly.
public final class Wakeup: Sendable {
    public let fileDescriptor: Int32

    public init() {
        fileDescriptor = eventfd(0, Int32(O_CLOEXEC | O_NONBLOCK))
        precondition(fileDescriptor >= 0, "eventfd failed: \(errno)")
    }

    deinit { close(fileDescriptor) }

    /// Wakes the waiter (now or at its next wait).
    public func signal() {
        var one: UInt64 = 1
        _ = write(fileDescriptor, &one, 8)
    }

    public enum Outcome: Sendable, Equatable { case woken, timedOut, readable }

    /// Sleeps until signalled, `timeout` seconds pass (nil: forever), or `other` is ready for
    /// `otherEvents` (poll's flags; readable by default). A signal is consumed.
    public func wait(timeout: Double?, other: Int32? = nil, otherEvents: Int16 = Int16(POLLIN)) -> Outcome {
        let milliseconds = timeout.map { Int32(max(0, min($0 * 1000, 3_600_000)).rounded(.up)) } ?? -1
        // On the stack: this runs once per sample.
        return withUnsafeTemporaryAllocation(of: pollfd.self, capacity: 2) { descriptors in
            descriptors[0] = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            descriptors[1] = pollfd(fd: other ?? -1, events: otherEvents, revents: 0)  // poll ignores fd -1
            var result: Int32
            repeat {
                result = poll(descriptors.baseAddress, other == nil ? 1 : 2, milliseconds)
            } while result < 0 && errno == EINTR
            if descriptors[0].revents & Int16(POLLIN) != 0 {
                var value: UInt64 = 0
                _ = read(fileDescriptor, &value, 8)
                return .woken
            }
            if other != nil, descriptors[1].revents != 0 { return .readable }
            return .timedOut
        }
    }
}

/// A one-shot alarm on CLOCK_MONOTONIC that any thread may move without waking anyone: a timerfd
/// watched by a thread of its own, which sleeps until the alarm goes off.
///
/// Why a timerfd and not an event-loop timer: the detector's silence deadline moves forward with
/// every sample. An event-loop timer moved from the sensor's thread wakes the loop each time (or, set
/// lazily, fires at the old deadline only to be set again), which at rest was a third of the
/// daemon's wake-ups; `timerfd_settime` from the sensor's thread wakes nobody, and the watcher runs
/// only when the deadline really passes.
///
/// Any thread may set or cancel the timerfd, which the kernel serialises. The timerfd, its watcher
/// thread and the watcher's wake-up exist only between ``start()`` and ``stop()`` (a part of the
/// daemon opens what it uses when it starts and closes it when it stops); a setting meanwhile does
/// nothing. A pthread lock guards them (ThreadSanitizer sees it): one uncontended lock per sample.
public final class MonotonicAlarm: Sendable {
    private struct Running: Sendable {
        let timer: Int32
        let stopper: Wakeup
        let watcher: WorkerThread
    }

    private let name: String
    private let rang: @Sendable () -> Void
    private let running = NIOLockedValueBox<Running?>(nil)

    /// `rang` runs on the watcher thread each time the alarm goes off (set it again from there or
    /// from anywhere); the thread runs from ``start()`` to ``stop()``.
    public init(name: String, rang: @escaping @Sendable () -> Void) {
        self.name = name
        self.rang = rang
    }

    deinit {
        stop()
    }

    /// Opens the timerfd and starts the watcher thread (idempotent).
    public func start() {
        let rang = rang, name = name
        running.withLockedValue { running in
            guard running == nil else { return }
            let timer = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
            precondition(timer >= 0, "timerfd_create failed: \(errno)")
            let stopper = Wakeup()
            let watcher = WorkerThread(name: name) {
                while stopper.wait(timeout: nil, other: timer) == .readable {
                    var expirations: UInt64 = 0
                    guard read(timer, &expirations, 8) == 8 else { continue }  // EAGAIN: set again meanwhile
                    rang()
                }
            }
            running = Running(timer: timer, stopper: stopper, watcher: watcher)
        }
    }

    /// Goes off at `time` (monotonic seconds; at once if it has passed), instead of any earlier
    /// setting.
    public func set(at time: Double) {
        let seconds = max(time, 1e-9)  // 0 would disarm
        var setting = itimerspec()
        setting.it_value.tv_sec = Int(seconds.rounded(.down))
        setting.it_value.tv_nsec = max(1, Int((seconds - seconds.rounded(.down)) * 1e9))
        running.withLockedValue { running in
            guard let timer = running?.timer else { return }
            _ = timerfd_settime(timer, Int32(TFD_TIMER_ABSTIME), &setting, nil)
        }
    }

    /// Does not go off until set again.
    public func cancel() {
        var setting = itimerspec()
        running.withLockedValue { running in
            guard let timer = running?.timer else { return }
            _ = timerfd_settime(timer, Int32(TFD_TIMER_ABSTIME), &setting, nil)
        }
    }

    /// Ends the watcher (returns after any `rang` in progress, which may still set the alarm: that
    /// does nothing now) and closes the timerfd. Further settings do nothing until ``start()``.
    public func stop() {
        guard
            let stopped = running.withLockedValue({ running in
                defer { running = nil }
                return running
            })
        else {
            return
        }
        stopped.stopper.signal()
        stopped.watcher.join()
        close(stopped.timer)
    }
}
