import SensorCore

/// When a poll loop reads next: every `period` seconds (the configured rate, or the device's own
/// when slower), or at the longer interval of a ``ReadPace`` while the device rests. A pace that
/// turns shorter takes effect at once (``paceShortened()``); a loop that fell behind does not catch
/// up in a burst.
struct PollSchedule {
    /// Seconds between readings while the device moves.
    private(set) var period: Double
    let pace: ReadPace?
    /// When the next reading is due (monotonic seconds).
    private(set) var due: Double
    private var lastRead = -Double.infinity

    init(period: Double, pace: ReadPace?, start: Double) {
        self.period = period
        self.pace = pace
        due = start
    }

    /// The interval in force: never shorter than `period`.
    var interval: Double { pace?.interval.map { max($0, period) } ?? period }

    /// A reading is taken at `now`: the next one is due an interval later.
    mutating func reading(at now: Double) {
        lastRead = now
        due = max(due + interval, now - interval)
    }

    /// The sensor reported motion: the next reading is due now.
    mutating func readNow(at now: Double) {
        due = min(due, now)
    }

    /// Whether the wait ahead is a rest (longer than the configured period).
    var resting: Bool { interval > period }

    /// The device is read faster or slower while it moves (a `motion` subscriber came or went).
    mutating func setPeriod(_ period: Double) {
        self.period = period
        due = min(due, lastRead + interval)
    }

    /// The wait was woken: a shorter pace brings the next reading forward.
    mutating func paceShortened() {
        due = min(due, lastRead + interval)
    }
}
