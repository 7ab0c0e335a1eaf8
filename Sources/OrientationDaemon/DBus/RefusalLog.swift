/// When a refused call is worth a log line: at most one per caller and reason a minute, with how
/// many were refused since the last line. A pure state machine with time as input.
///
/// Why: a user that floods claims it may not make is refused hundreds of times a second; a line
/// each would bury the journal (and cost more than the refusals). The first refusal of a caller
/// for a reason is logged at once, so a single denied client is still seen.
struct RefusalLog {
    /// A line to write: the caller, the reason and how many refusals it stands for.
    struct Line: Equatable {
        var sender: String
        var reason: String
        var count: Int
    }

    private struct Key: Hashable {
        var sender: String
        var reason: String
    }

    private struct Tally {
        var loggedAt: Double
        var unlogged: Int
    }

    /// Seconds between two lines for one caller and reason.
    let interval: Double
    private var tallies: [Key: Tally] = [:]

    init(interval: Double = 60) {
        self.interval = interval
    }

    /// One refusal at `time`: the line to log now, or nil when it is only counted.
    mutating func refused(_ sender: String, reason: String, at time: Double) -> Line? {
        let key = Key(sender: sender, reason: reason)
        guard var tally = tallies[key] else {
            tallies[key] = Tally(loggedAt: time, unlogged: 0)
            return Line(sender: sender, reason: reason, count: 1)
        }
        tally.unlogged += 1
        guard time - tally.loggedAt >= interval else {
            tallies[key] = tally
            return nil
        }
        tallies[key] = Tally(loggedAt: time, unlogged: 0)
        return Line(sender: sender, reason: reason, count: tally.unlogged)
    }

    /// The caller left the bus: the refusals counted and not yet logged, one line per reason.
    mutating func left(_ sender: String) -> [Line] {
        let keys = tallies.keys.filter { $0.sender == sender }
        var lines: [Line] = []
        for key in keys.sorted(by: { $0.reason < $1.reason }) {
            if let tally = tallies.removeValue(forKey: key), tally.unlogged > 0 {
                lines.append(Line(sender: sender, reason: key.reason, count: tally.unlogged))
            }
        }
        return lines
    }
}
