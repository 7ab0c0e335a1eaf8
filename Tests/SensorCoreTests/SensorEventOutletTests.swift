import Testing
import OrientationCore
import Synchronization
@testable import SensorCore

private func sample(_ time: Double) -> SensorEvent { .sample(SensorSample(time: time, reading: Vector3(0, -9.81, 0))) }

@Suite("Sensor event outlet and attribute numbers")
struct SensorEventOutletTests {
    @Test("events emitted before a receiver is chosen reach it first, then the rest, in order")
    func backlogThenReceiver() {
        let outlet = SensorEventOutlet()
        outlet.emit(.unavailable(reason: "none yet"))
        outlet.emit(sample(1))
        let received = Mutex<[SensorEvent]>([])
        outlet.deliver { event in received.withLock { $0.append(event) } }
        outlet.emit(sample(2))
        outlet.finish()
        outlet.emit(sample(3))  // after finish: dropped
        let events = received.withLock { $0 }
        #expect(events == [.unavailable(reason: "none yet"), sample(1), sample(2)])
    }

    @Test("the stream gets the kept events, later ones, and finishes")
    func backlogThenStream() async {
        let outlet = SensorEventOutlet()
        outlet.emit(sample(1))
        let events = outlet.events
        outlet.emit(sample(2))
        outlet.finish()
        var seen: [SensorEvent] = []
        for await event in events { seen.append(event) }
        #expect(seen == [sample(1), sample(2)])
    }

    @Test("a source finished before its stream is chosen still yields what it emitted")
    func finishedBeforeStream() async {
        let outlet = SensorEventOutlet()
        outlet.emit(.ended)
        outlet.finish()
        var seen: [SensorEvent] = []
        for await event in outlet.events { seen.append(event) }
        #expect(seen == [.ended])
    }

    @Test("sysfs number text: integers from the bytes, everything else as Double(String) reads it")
    func attributeNumbers() {
        func parse(_ text: String) -> Double? {
            var bytes = Array(text.utf8)
            return bytes.withUnsafeMutableBytes { AttributeNumber.parse(UnsafeRawBufferPointer($0)) }
        }
        #expect(parse("-1000\n") == -1000)
        #expect(parse("0\n\u{0}") == 0)
        #expect(parse("  +42 \t") == 42)
        #expect(parse("123456789012345678901\n") == 123456789012345678901)  // past the integer fast path
        #expect(parse("0.5\n") == 0.5)
        #expect(parse("1e3") == 1000)
        #expect(parse("") == nil)
        #expect(parse("\n\u{0}") == nil)
        #expect(parse("-") == nil)
        #expect(parse("Hello\n") == nil)
        #expect(parse("12abc") == nil)
        #expect(parse("nan\n") == nil)
        #expect(parse("inf") == nil)
        #expect(parse("1e999") == nil)
    }

    @Test("fault kinds index their per-kind tables in allCases order")
    func faultKindIndex() {
        #expect(SensorFault.Kind.allCases.map(\.index) == Array(0..<SensorFault.Kind.allCases.count))
        var tracker = FaultTracker()
        let reported = tracker.fault(.stuck)
        #expect(reported)
        #expect(!tracker.isFaulty(.badValue))
        #expect(tracker.isFaulty(.stuck))
        let ended = tracker.success(.stuck), endedAgain = tracker.success(.stuck)
        #expect(ended && !endedAgain)
    }
}
