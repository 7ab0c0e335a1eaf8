import CSdBus
import SensorCore

#if canImport(Glibc)
import Glibc
#endif

/// The loop of a thread that owns one sd-bus connection (sd-bus is not thread-safe): it handles
/// what other threads handed in, dispatches what the bus brought, and sleeps in poll(2) on the bus
/// and a ``Wakeup`` until either has more, or sd-bus's own timeout (a call's reply) comes due. A
/// thread asleep there costs no wake-ups while nothing happens.
///
/// Shared by the net.hadess.SensorProxy connection (``SystemBusConnection``) and logind's sleep
/// watch (``SleepWatch``), each on a thread of its own.
enum BusThreadLoop {
    /// Runs until `handIn` returns false (the owner is stopping); returns nil then, or the
    /// negative errno of `sd_bus_process` when the connection broke. `handIn` runs first on every
    /// turn, so what was handed in before the thread started is done before any message is read.
    static func run(_ bus: OpaquePointer, wakeup: Wakeup, handIn: () -> Bool) -> Int32? {
        while true {
            guard handIn() else { return nil }
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
