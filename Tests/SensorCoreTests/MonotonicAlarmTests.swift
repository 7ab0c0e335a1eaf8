import Testing
import Synchronization
@testable import SensorCore

#if canImport(Glibc)
import Glibc
#endif

@Suite("Monotonic alarm")
struct MonotonicAlarmTests {
    /// Rings counted with their times; `wait` blocks until `count` rings or `timeout` seconds.
    final class Rings: Sendable {
        let times = Mutex<[Double]>([])
        let signal = Wakeup()
        func rang() {
            times.withLock { $0.append(MonotonicClock.now()) }
            signal.signal()
        }
        func wait(for count: Int, timeout: Double) -> [Double] {
            let deadline = MonotonicClock.now() + timeout
            while times.withLock({ $0.count }) < count, MonotonicClock.now() < deadline {
                _ = signal.wait(timeout: deadline - MonotonicClock.now())
            }
            return times.withLock { $0 }
        }
    }

    @Test("goes off at the time set, once")
    func goesOffOnce() {
        let rings = Rings()
        let alarm = MonotonicAlarm(name: "test-alarm") { rings.rang() }
        alarm.start()
        let due = MonotonicClock.now() + 0.1
        alarm.set(at: due)
        let times = rings.wait(for: 1, timeout: 5)
        #expect(times.count == 1)
        #expect(times.first.map { $0 >= due } == true)
        #expect(rings.wait(for: 2, timeout: 0.3).count == 1, "one-shot")
        alarm.stop()
    }

    @Test("moved on from another thread before it is due, it goes off only at the last time set")
    func movedOn() {
        let rings = Rings()
        let alarm = MonotonicAlarm(name: "test-alarm") { rings.rang() }
        alarm.start()
        var due = MonotonicClock.now() + 0.15
        for _ in 0..<10 {  // as a sensor's samples move the silence deadline on
            due = MonotonicClock.now() + 0.15
            alarm.set(at: due)
            _ = Wakeup().wait(timeout: 0.05)  // the next sample's time, not a synchronisation
        }
        let times = rings.wait(for: 1, timeout: 5)
        #expect(times.count == 1)
        #expect(times.first.map { $0 >= due } == true, "not at an earlier setting")
        alarm.stop()
    }

    @Test("a time already past goes off at once; cancelled, it does not go off")
    func pastAndCancelled() {
        let rings = Rings()
        let alarm = MonotonicAlarm(name: "test-alarm") { rings.rang() }
        alarm.start()
        alarm.set(at: MonotonicClock.now() - 1)
        #expect(rings.wait(for: 1, timeout: 5).count == 1)
        alarm.set(at: MonotonicClock.now() + 0.1)
        alarm.cancel()
        #expect(rings.wait(for: 2, timeout: 0.4).count == 1)
        alarm.stop()
        alarm.set(at: MonotonicClock.now())  // after stop: nothing runs
        #expect(rings.wait(for: 2, timeout: 0.2).count == 1)
    }

    @Test(
        """
        nothing rings before start or after stop (the timerfd exists only between them: the daemon's \
        silence-alarm part); started again, it rings
        """
    )
    func startAndStop() {
        let rings = Rings()
        let alarm = MonotonicAlarm(name: "test-alarm") { rings.rang() }
        alarm.set(at: MonotonicClock.now() - 1)
        alarm.start()
        #expect(rings.wait(for: 1, timeout: 0.2).isEmpty, "a setting before start is no setting")
        alarm.set(at: MonotonicClock.now() - 1)
        #expect(rings.wait(for: 1, timeout: 5).count == 1, "started: a setting that is due rings")
        alarm.stop()
        alarm.start()
        alarm.set(at: MonotonicClock.now())
        #expect(rings.wait(for: 2, timeout: 5).count == 2)
        alarm.stop()
    }
}
