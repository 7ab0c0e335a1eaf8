import Testing
@testable import SensorCore

@Suite("SuspendNotice: a sleep seen on the clocks")
struct SuspendNoticeTests {
    @Test("growth of the time suspended is a sleep; the clocks' jitter and a rebased sleep are not")
    func growth() {
        var notice = SuspendNotice(suspendedSoFar: 100)
        #expect(notice.look(suspendedSoFar: 100.001) == nil)
        #expect(notice.look(suspendedSoFar: 130.001) == 30)
        #expect(notice.look(suspendedSoFar: 130.001) == nil)
        notice.rebase(suspendedSoFar: 200)
        #expect(notice.look(suspendedSoFar: 200) == nil)
    }

    @Test("the real clocks: CLOCK_BOOTTIME is never behind CLOCK_MONOTONIC, and no sleep between two looks")
    func realClocks() {
        let first = MonotonicClock.suspendedSoFar()
        #expect(first >= -0.001)
        var notice = SuspendNotice(suspendedSoFar: first)
        #expect(notice.look(suspendedSoFar: MonotonicClock.suspendedSoFar()) == nil)
    }
}
