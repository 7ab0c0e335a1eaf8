/// When the one-line status may go to systemd: at most once per `interval`, always the newest.
///
/// The status names the number of clients, so every connect and disconnect changes it; sent each
/// time, a client connecting in a loop would make PID 1 read two messages per connection. The first
/// change after a quiet interval goes out at once; changes within the interval are held and the
/// newest status is sent when it ends, so the last word is always true.
struct StatusThrottle: Sendable {
    let interval: Double
    private var lastSent = -Double.infinity
    private var holding = false

    init(interval: Double) {
        self.interval = interval
    }

    enum Decision: Sendable, Equatable {
        /// Send the status now.
        case sendNow
        /// Send the status then (monotonic seconds), and call ``heldStatusSent(at:)``.
        case sendAt(Double)
        /// A send is already due; it will carry this change too.
        case alreadyHeld
    }

    /// The status changed at `now`.
    mutating func statusChanged(at now: Double) -> Decision {
        if holding { return .alreadyHeld }
        if now - lastSent >= interval {
            lastSent = now
            return .sendNow
        }
        holding = true
        return .sendAt(lastSent + interval)
    }

    /// The held status was sent at `now`.
    mutating func heldStatusSent(at now: Double) {
        holding = false
        lastSent = now
    }
}
