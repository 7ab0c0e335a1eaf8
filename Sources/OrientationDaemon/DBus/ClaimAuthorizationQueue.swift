/// Which claims and releases of net.hadess.SensorProxy are put to polkit, and when: a pure state
/// machine, fed with the calls, the checks' ends and the time, that says which calls to check now.
///
/// Why: any local user may call `Claim*`, and each call costs a polkit check, an outstanding reply
/// on our bus connection. The bus refuses a connection more than 128 of those (dbus-daemon's
/// `max_replies_per_connection`), so one user flooding claims used to fill them all, and every other
/// caller, the desktop among them, was refused. Here:
///
/// * **One check at a time per caller.** Calls from a unique name wait behind its check in progress
///   and share its answer: polkit's answer is about the caller and the action, which are the same for
///   all of them. A flood from one connection is one check at a time.
/// * **A bounded number of checks in all** (`maximumOutstanding`, well below the bus's 128), and
///   one at a time per user (`maximumPerUser`): polkitd answers its checks in turn, so checks sent
///   ahead of another user's would delay it however fair the order here.
/// * **Fair across users**: a free check goes to the users in turn (by uid, as the bus reports it),
///   and within a user to its callers in turn, so a flooding user, however many connections it
///   opens, delays itself: another user's one call waits at most for one check per user ahead of it.
/// * **A check that fails is retried**, after `retryDelays` (polkit restarting, an answer that did
///   not come): only polkit saying "not authorized" denies; a check that fails every time ends the
///   calls with the error, never with AccessDenied.
struct ClaimAuthorizationQueue {
    struct Settings: Sendable {
        /// Checks in progress at most, for all callers together.
        var maximumOutstanding = 32
        /// Checks in progress at most for the callers of one user.
        var maximumPerUser = 1
        /// Seconds to wait before each new attempt of a check that failed; when they are used up
        /// the calls fail.
        var retryDelays: [Double] = [0.25, 1, 3]
    }

    /// What became of a caller whose check failed.
    enum Retry: Equatable {
        /// Checked again at `at` (seconds, the clock given to the queue).
        case scheduled(at: Double)
        /// No attempt left: these calls (all the caller's waiting ones) end with the failure.
        case gaveUp([BusCall])
    }

    private struct Caller {
        var uid: UInt32?
        /// The calls waiting for the caller's answer, oldest first; the first one is checked.
        var waiting: [BusCall] = []
        var checking = false
        var notBefore = 0.0
        var failures = 0
    }

    let settings: Settings
    private var callers: [String: Caller] = [:]
    /// The users in the order they are served, and each user's callers in theirs.
    private var users: [UInt32?] = []
    private var callersOfUser: [UInt32?: [String]] = [:]
    private var nextUser = 0
    private var nextCallerOfUser: [UInt32?: Int] = [:]
    private var checksOfUser: [UInt32?: Int] = [:]
    private(set) var outstanding = 0

    init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Calls waiting or being checked, for all callers.
    var waitingCount: Int { callers.values.reduce(0) { $0 + $1.waiting.count } }

    /// The earliest time a caller waiting for a retry may be checked again, if any is.
    var nextRetry: Double? {
        callers.values.filter { !$0.checking && !$0.waiting.isEmpty && $0.failures > 0 }.map(\.notBefore).min()
    }

    /// A call to be authorized; it waits until ``callsToCheck(at:)`` hands it out.
    mutating func enqueue(_ call: BusCall) {
        if callers[call.sender] == nil {
            callers[call.sender] = Caller(uid: call.uid)
            if callersOfUser[call.uid] == nil {
                callersOfUser[call.uid] = []
                nextCallerOfUser[call.uid] = 0
                users.append(call.uid)
            }
            callersOfUser[call.uid]!.append(call.sender)
        }
        callers[call.sender]!.waiting.append(call)
    }

    /// Whether calls of `sender` wait or are being checked.
    func hasWaiting(_ sender: String) -> Bool { callers[sender]?.waiting.isEmpty == false }

    /// Whether `call` is the one whose check is in progress (an answer for anything else is stale).
    func isChecking(_ call: BusCall) -> Bool {
        guard let caller = callers[call.sender] else { return false }
        return caller.checking && caller.waiting.first == call
    }

    /// The calls to check now, one per caller, fairly across users, while checks are free.
    mutating func callsToCheck(at time: Double) -> [BusCall] {
        var chosen: [BusCall] = []
        while outstanding < settings.maximumOutstanding, let sender = nextEligible(at: time) {
            callers[sender]!.checking = true
            outstanding += 1
            checksOfUser[callers[sender]!.uid, default: 0] += 1
            chosen.append(callers[sender]!.waiting[0])
        }
        return chosen
    }

    /// The caller's check ended with an answer (allowed, denied, who it is): every call that waited
    /// for it, in the order they came, takes that answer.
    mutating func answered(_ sender: String) -> [BusCall] {
        guard var caller = callers[sender], caller.checking else { return [] }
        checkEnded(caller)
        let calls = caller.waiting
        caller.waiting = []
        caller.checking = false
        caller.failures = 0
        callers[sender] = caller
        return calls
    }

    /// The caller's check failed (not a refusal): retried later, or, with no attempt left, its calls.
    mutating func failed(_ sender: String, at time: Double) -> Retry {
        guard var caller = callers[sender], caller.checking else { return .gaveUp([]) }
        checkEnded(caller)
        caller.checking = false
        defer { callers[sender] = caller }
        guard caller.failures < settings.retryDelays.count else {
            let calls = caller.waiting
            caller.waiting = []
            caller.failures = 0
            return .gaveUp(calls)
        }
        caller.notBefore = time + settings.retryDelays[caller.failures]
        caller.failures += 1
        return .scheduled(at: caller.notBefore)
    }

    /// The caller left the bus: its calls, to forget (their answers, if any come, are stale).
    mutating func remove(_ sender: String) -> [BusCall] {
        guard let caller = callers.removeValue(forKey: sender) else { return [] }
        if caller.checking { checkEnded(caller) }
        if var names = callersOfUser[caller.uid], let index = names.firstIndex(of: sender) {
            names.remove(at: index)
            if let next = nextCallerOfUser[caller.uid], next > index { nextCallerOfUser[caller.uid] = next - 1 }
            if names.isEmpty {
                callersOfUser[caller.uid] = nil
                nextCallerOfUser[caller.uid] = nil
                if let position = users.firstIndex(of: caller.uid) {
                    users.remove(at: position)
                    if nextUser > position { nextUser -= 1 }
                }
            } else {
                callersOfUser[caller.uid] = names
            }
        }
        return caller.waiting
    }

    /// Every call still waiting (the front end stops): they are answered with an error.
    mutating func removeAll() -> [BusCall] {
        let calls = callers.values.flatMap(\.waiting)
        self = ClaimAuthorizationQueue(settings: settings)
        return calls
    }

    private mutating func checkEnded(_ caller: Caller) {
        outstanding -= 1
        checksOfUser[caller.uid, default: 1] -= 1
        if checksOfUser[caller.uid] == 0 { checksOfUser[caller.uid] = nil }
    }

    /// The next caller to check, users in turn and each user's callers in turn: a caller is eligible
    /// when it has calls waiting, no check in progress and no retry pending.
    private mutating func nextEligible(at time: Double) -> String? {
        guard !users.isEmpty else { return nil }
        for step in 0..<users.count {
            let userIndex = (nextUser + step) % users.count
            let user = users[userIndex]
            guard checksOfUser[user, default: 0] < settings.maximumPerUser else { continue }
            let names = callersOfUser[user] ?? []
            let start = nextCallerOfUser[user] ?? 0
            for offset in 0..<names.count {
                let index = (start + offset) % names.count
                let caller = callers[names[index]]!
                guard !caller.waiting.isEmpty, !caller.checking, caller.notBefore <= time else { continue }
                // The one after the one served, reduced when used: a user or caller that arrives
                // meanwhile at the end is next, not skipped.
                nextCallerOfUser[user] = index + 1
                nextUser = userIndex + 1
                return names[index]
            }
        }
        return nil
    }
}
