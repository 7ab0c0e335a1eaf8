import Testing

@testable import OrientationDaemon

@Suite("polkit checks of claims: one per caller, bounded, fair across users")
struct ClaimAuthorizationQueueTests {
    static func call(
        _ id: Int, _ sender: String, uid: UInt32?, _ method: SensorProxyMethod = .claimAccelerometer
    )
        -> BusCall
    {
        BusCall(id: id, sender: sender, method: method, uid: uid)
    }

    @Test("a caller's flood is one check at a time, and every call that waited takes its answer")
    func oneCheckPerCaller() {
        var queue = ClaimAuthorizationQueue()
        for id in 0..<150 { queue.enqueue(Self.call(id, ":1.5", uid: 1001)) }
        #expect(queue.callsToCheck(at: 0) == [Self.call(0, ":1.5", uid: 1001)])
        #expect(queue.callsToCheck(at: 0).isEmpty)
        #expect(queue.outstanding == 1)
        #expect(queue.isChecking(Self.call(0, ":1.5", uid: 1001)))
        #expect(!queue.isChecking(Self.call(1, ":1.5", uid: 1001)))
        queue.enqueue(Self.call(150, ":1.5", uid: 1001))
        let answered = queue.answered(":1.5")
        #expect(answered.map(\.id) == Array(0...150))
        #expect(queue.outstanding == 0 && queue.waitingCount == 0)
        // Later calls are a new check.
        queue.enqueue(Self.call(151, ":1.5", uid: 1001))
        #expect(queue.callsToCheck(at: 1).map(\.id) == [151])
    }

    @Test("checks in progress never exceed the maximum; a free place goes to the next caller")
    func bounded() {
        var queue = ClaimAuthorizationQueue(settings: .init(maximumOutstanding: 4))
        for caller in 0..<10 { queue.enqueue(Self.call(caller, ":1.\(caller)", uid: UInt32(1000 + caller))) }
        #expect(queue.callsToCheck(at: 0).count == 4)
        #expect(queue.outstanding == 4)
        _ = queue.answered(":1.0")
        #expect(queue.callsToCheck(at: 0).map(\.sender) == [":1.4"])
        #expect(queue.outstanding == 4)
    }

    @Test("one check at a time per user: polkitd answers in turn, so a user's checks never queue ahead of another's")
    func onePerUser() {
        var queue = ClaimAuthorizationQueue(settings: .init(maximumOutstanding: 32))
        for connection in 0..<50 {
            for id in 0..<10 { queue.enqueue(Self.call(connection * 10 + id, ":1.\(100 + connection)", uid: 1001)) }
        }
        #expect(queue.callsToCheck(at: 0).map(\.sender) == [":1.100"])
        queue.enqueue(Self.call(9999, ":1.7", uid: 1000))  // the desktop: checked at once, beside the flood's one
        #expect(queue.callsToCheck(at: 0).map(\.sender) == [":1.7"])
        #expect(queue.outstanding == 2)
        // The flooder's connections take turns among themselves.
        #expect(queue.answered(":1.100").count == 10)
        #expect(queue.callsToCheck(at: 0).map(\.sender) == [":1.101"])
        #expect(queue.answered(":1.7").map(\.id) == [9999])
        #expect(queue.callsToCheck(at: 0).isEmpty)
        #expect(queue.answered(":1.101").count == 10)
        #expect(queue.callsToCheck(at: 0).map(\.sender) == [":1.102"])
        var two = ClaimAuthorizationQueue(settings: .init(maximumOutstanding: 32, maximumPerUser: 2))
        for connection in 0..<5 { two.enqueue(Self.call(connection, ":1.\(connection)", uid: 1001)) }
        #expect(two.callsToCheck(at: 0).count == 2)
    }

    @Test("with places scarce, users take turns: a flooding user delays another user's call by one check at most")
    func fairAcrossUsers() {
        var queue = ClaimAuthorizationQueue(settings: .init(maximumOutstanding: 2, maximumPerUser: 2))
        for connection in 0..<50 {
            for id in 0..<10 { queue.enqueue(Self.call(connection * 10 + id, ":1.\(100 + connection)", uid: 1001)) }
        }
        let checking = queue.callsToCheck(at: 0)
        #expect(checking.map(\.sender) == [":1.100", ":1.101"])
        queue.enqueue(Self.call(9999, ":1.7", uid: 1000))  // the desktop
        _ = queue.answered(":1.100")
        #expect(queue.callsToCheck(at: 0).map(\.sender) == [":1.7"], "the desktop is next")
        #expect(queue.answered(":1.7").map(\.id) == [9999])
        #expect(queue.callsToCheck(at: 0).map(\.sender) == [":1.102"])
    }

    @Test("a failed check is retried after each delay, then its calls end with the failure")
    func retries() {
        var queue = ClaimAuthorizationQueue(settings: .init(maximumOutstanding: 8, retryDelays: [0.25, 1]))
        queue.enqueue(Self.call(1, ":1.9", uid: 1000))
        queue.enqueue(Self.call(2, ":1.9", uid: 1000))
        #expect(queue.callsToCheck(at: 0).map(\.id) == [1])
        #expect(queue.failed(":1.9", at: 0) == .scheduled(at: 0.25))
        #expect(queue.outstanding == 0)
        #expect(queue.nextRetry == 0.25)
        #expect(queue.callsToCheck(at: 0.2).isEmpty, "not before its delay")
        #expect(queue.callsToCheck(at: 0.25).map(\.id) == [1])
        #expect(queue.failed(":1.9", at: 0.3) == .scheduled(at: 1.3))
        #expect(queue.callsToCheck(at: 1.3).map(\.id) == [1])
        #expect(
            queue.failed(":1.9", at: 1.4)
                == .gaveUp([Self.call(1, ":1.9", uid: 1000), Self.call(2, ":1.9", uid: 1000)]))
        #expect(queue.waitingCount == 0 && queue.outstanding == 0 && queue.nextRetry == nil)
        // A success after a failure starts the count afresh.
        queue.enqueue(Self.call(3, ":1.9", uid: 1000))
        _ = queue.callsToCheck(at: 2)
        #expect(queue.failed(":1.9", at: 2) == .scheduled(at: 2.25))
        _ = queue.callsToCheck(at: 2.25)
        #expect(queue.answered(":1.9").map(\.id) == [3])
        queue.enqueue(Self.call(4, ":1.9", uid: 1000))
        _ = queue.callsToCheck(at: 3)
        #expect(queue.failed(":1.9", at: 3) == .scheduled(at: 3.25))
    }

    @Test("a caller that leaves frees its place and its calls; a stale answer is ignored")
    func leaving() {
        var queue = ClaimAuthorizationQueue(settings: .init(maximumOutstanding: 1))
        queue.enqueue(Self.call(1, ":1.1", uid: 1001))
        queue.enqueue(Self.call(2, ":1.1", uid: 1001))
        queue.enqueue(Self.call(3, ":1.2", uid: 1000))
        #expect(queue.callsToCheck(at: 0).map(\.id) == [1])
        #expect(queue.remove(":1.1").map(\.id) == [1, 2])
        #expect(!queue.isChecking(Self.call(1, ":1.1", uid: 1001)))
        #expect(queue.answered(":1.1").isEmpty)
        #expect(queue.callsToCheck(at: 0).map(\.id) == [3])
        #expect(queue.remove(":1.2").map(\.id) == [3])
        #expect(queue.outstanding == 0 && queue.waitingCount == 0)
        #expect(queue.removeAll().isEmpty)
    }
}

@Suite("refusals in the log: once per caller and reason a minute, with the count")
struct RefusalLogTests {
    @Test("the first refusal is logged, the rest of the minute counted, the next line carries the count")
    func oncePerMinute() {
        var log = RefusalLog(interval: 60)
        #expect(log.refused(":1.5", reason: "denied", at: 0) == .init(sender: ":1.5", reason: "denied", count: 1))
        for second in 1..<300 { #expect(log.refused(":1.5", reason: "denied", at: Double(second) / 10) == nil) }
        #expect(log.refused(":1.6", reason: "denied", at: 1) == .init(sender: ":1.6", reason: "denied", count: 1))
        #expect(log.refused(":1.5", reason: "failed", at: 1) == .init(sender: ":1.5", reason: "failed", count: 1))
        #expect(log.refused(":1.5", reason: "denied", at: 60) == .init(sender: ":1.5", reason: "denied", count: 300))
        #expect(log.refused(":1.5", reason: "denied", at: 61) == nil)
        #expect(log.left(":1.5") == [.init(sender: ":1.5", reason: "denied", count: 1)])
        #expect(log.left(":1.5").isEmpty)
        #expect(log.refused(":1.5", reason: "denied", at: 62) == .init(sender: ":1.5", reason: "denied", count: 1))
    }
}
