import NIOConcurrencyHelpers

/// How often a polled accelerometer is read now: its configured rate, or a longer interval while
/// the device rests (``OrientationCore/SamplingPace``, decided by the daemon's detection stage).
///
/// Set on the detection stage's thread (which is the sensor's own: it runs inside the sample's
/// delivery) and read by the acquisition's loop before each wait; a shorter interval wakes a wait
/// in progress, so motion seen at rest brings the next reading at the fast rate, not after the slow
/// interval. One per source, kept across acquisitions, so a reopened sensor starts at the pace in
/// force.
public final class ReadPace: Sendable {
    /// A pthread lock (NIOLockedValueBox), as every lock of orientd's: ThreadSanitizer sees it.
    private let state = NIOLockedValueBox<
        (interval: Double?, wake: (@Sendable () -> Void)?, motionEvents: Bool, fastInterval: Double?, gyroscope: Bool)
    >((nil, nil, false, nil, true))

    public init() {}

    /// The running acquisition sleeps at rest on the sensor's motion interrupt (``MotionEvents``),
    /// so the rest interval may be ``MotionEvents/checkInterval``: motion wakes it sooner.
    public var restsOnMotionEvents: Bool {
        get { state.withLockedValue { $0.motionEvents } }
        set { state.withLockedValue { $0.motionEvents = newValue } }
    }

    /// Seconds between readings, or nil for the configured rate.
    public var interval: Double? { state.withLockedValue { $0.interval } }

    public func set(_ interval: Double?) {
        let wake = state.withLockedValue { state -> (@Sendable () -> Void)? in
            guard state.interval != interval else { return nil }
            let shorter = (interval ?? 0) < (state.interval ?? 0)
            state.interval = interval
            return shorter ? state.wake : nil
        }
        wake?()
    }

    /// Seconds between readings while the device moves when something needs them faster than the
    /// configured rate (a `motion` subscriber's rate, a working gyroscope's), or nil for the
    /// configured rate; a slower one leaves the configured rate. The acquisition asks the device
    /// for that rate too (`sampling_frequency`), and a gyroscope in a device of its own is polled
    /// at it.
    public var fastInterval: Double? { state.withLockedValue { $0.fastInterval } }

    public func setFast(_ interval: Double?) {
        let wake = state.withLockedValue { state -> (@Sendable () -> Void)? in
            guard state.fastInterval != interval else { return nil }
            state.fastInterval = interval
            return state.wake
        }
        wake?()
    }

    /// Whether a gyroscope read with the accelerometer (an IMU's `in_anglvel` channels) runs: while
    /// the device moves or motion is streamed, decided by the daemon's detection stage. Not the same
    /// as reading at the sampling rate: a convertible's hinge holds the display at that rate while
    /// the device rests, and a gyroscope draws several times the accelerometer's current.
    public var gyroscopeWanted: Bool { state.withLockedValue { $0.gyroscope } }

    public func setGyroscopeWanted(_ wanted: Bool) {
        let wake = state.withLockedValue { state -> (@Sendable () -> Void)? in
            guard state.gyroscope != wanted else { return nil }
            state.gyroscope = wanted
            return state.wake
        }
        wake?()
    }

    /// The running acquisition's wake-up; nil when it ends.
    public func attach(_ wake: (@Sendable () -> Void)?) {
        state.withLockedValue { $0.wake = wake }
    }
}
