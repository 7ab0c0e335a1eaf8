import Testing
@testable import OrientationDaemon

@Suite("Status throttle (systemd STATUS= at most once a second)")
struct StatusThrottleTests {
    @Test("the first change goes out at once; changes within the second are held and sent together at its end")
    func holdsWithinTheInterval() {
        var throttle = StatusThrottle(interval: 1)
        #expect(throttle.statusChanged(at: 10) == .sendNow)
        #expect(throttle.statusChanged(at: 10.2) == .sendAt(11))
        #expect(throttle.statusChanged(at: 10.5) == .alreadyHeld)
        #expect(throttle.statusChanged(at: 10.9) == .alreadyHeld)
        throttle.heldStatusSent(at: 11)
        // Right after the held send, the next change waits a full interval again.
        #expect(throttle.statusChanged(at: 11.3) == .sendAt(12))
        throttle.heldStatusSent(at: 12)
        #expect(throttle.statusChanged(at: 13.5) == .sendNow)
    }

    @Test("a thousand changes in a second cost two messages")
    func storm() {
        var throttle = StatusThrottle(interval: 1)
        var sends = 0
        var due: Double?
        for step in 0..<1000 {
            let now = Double(step) / 1000
            if let time = due, now >= time {
                throttle.heldStatusSent(at: now)
                sends += 1
                due = nil
            }
            switch throttle.statusChanged(at: now) {
            case .sendNow: sends += 1
            case .sendAt(let time): due = time
            case .alreadyHeld: break
            }
        }
        if due != nil { sends += 1 }
        #expect(sends == 2)
    }
}
