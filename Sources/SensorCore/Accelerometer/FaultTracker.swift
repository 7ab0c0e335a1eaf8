/// Fault episodes per kind: the start and the end of each episode are reported once, so a
/// consumer's view of the sensor is always true, however often the device flaps. (What reaches
/// the log is limited separately, by ``FaultLogLimiter``.) Pure.
public struct FaultTracker: Sendable {
    /// Per kind (by ``SensorFault/Kind/index``): is an episode open? An array, not a dictionary:
    /// `success` runs for every sample and must not hash.
    private var open = [Bool](repeating: false, count: SensorFault.Kind.allCases.count)

    public init() {}

    /// A fault happened; true when it starts an episode (report it).
    public mutating func fault(_ kind: SensorFault.Kind) -> Bool {
        guard !open[kind.index] else { return false }
        open[kind.index] = true
        return true
    }

    /// The operation that can fail this way succeeded; true when an episode just ended.
    public mutating func success(_ kind: SensorFault.Kind) -> Bool {
        guard open[kind.index] else { return false }
        open[kind.index] = false
        return true
    }

    /// True while an episode of `kind` is open.
    public func isFaulty(_ kind: SensorFault.Kind) -> Bool { open[kind.index] }
}

/// Which fault reports reach the log: each kind at most every `minimumInterval` seconds, so a
/// flapping device cannot flood it, and an episode's end only when its start was logged. Pure:
/// time is an input.
public struct FaultLogLimiter: Sendable {
    public static let minimumInterval = 10.0

    private var lastLogged = [Double?](repeating: nil, count: SensorFault.Kind.allCases.count)
    private var loggedEpisode = [Bool](repeating: false, count: SensorFault.Kind.allCases.count)

    public init() {}

    /// An episode of `kind` started at `time`; true when it should be logged.
    public mutating func logFault(_ kind: SensorFault.Kind, at time: Double) -> Bool {
        let log = lastLogged[kind.index].map { time - $0 >= Self.minimumInterval } ?? true
        loggedEpisode[kind.index] = log
        if log { lastLogged[kind.index] = time }
        return log
    }

    /// The episode of `kind` ended; true when its start was logged.
    public mutating func logRecovery(_ kind: SensorFault.Kind) -> Bool {
        defer { loggedEpisode[kind.index] = false }
        return loggedEpisode[kind.index]
    }
}

extension SensorFault.Kind {
    /// The position in `allCases`, for per-kind tables.
    var index: Int {
        switch self {
        case .readFailed: 0
        case .badValue: 1
        case .badScale: 2
        case .stuck: 3
        case .openFailed: 4
        case .noGravity: 5
        case .axisStuck: 6
        }
    }
}
