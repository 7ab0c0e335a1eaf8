/// Notices that the system slept between two looks, whoever said so or not: the time spent
/// suspended (``MonotonicClock/suspendedSoFar()``, CLOCK_BOOTTIME less CLOCK_MONOTONIC) grew.
///
/// Why a clock and not only logind's `PrepareForSleep`: without logind (a container, no system
/// bus, `echo mem > /sys/power/state`) nothing announces a sleep, and every monotonic deadline
/// then misreads the freeze and thaw around it as the sensor's silence. A pure value: the caller
/// reads the clock and passes it in, so a test can pass any.
public struct SuspendNotice: Sendable, Equatable {
    /// Growth below this is the two clocks read a few microseconds apart, or NTP slewing one of
    /// them (at most 0.5 ms a second); a suspend, even s2idle's, lasts far longer.
    public static let threshold = 0.05

    private var last: Double

    /// Starts from `suspendedSoFar`: sleeps before it are not news.
    public init(suspendedSoFar: Double) {
        last = suspendedSoFar
    }

    /// Seconds spent suspended since the last look (or ``rebase(suspendedSoFar:)``), when that is a
    /// sleep; nil otherwise.
    public mutating func look(suspendedSoFar: Double) -> Double? {
        let slept = suspendedSoFar - last
        last = suspendedSoFar
        return slept >= Self.threshold ? slept : nil
    }

    /// A sleep that was announced and handled: not news at the next look.
    public mutating func rebase(suspendedSoFar: Double) {
        last = suspendedSoFar
    }
}
