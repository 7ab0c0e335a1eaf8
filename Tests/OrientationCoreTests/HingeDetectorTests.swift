import Testing
@testable import OrientationCore

#if canImport(Glibc)
import Glibc
#endif

@Suite("Hinge detector")
struct HingeDetectorTests {
    /// The two readings of a convertible opened to `degrees` with its base tilted `pitch` degrees
    /// about the hinge (0: flat on a desk), the hinge horizontal; `hingeTilt` raises it towards vertical.
    static func readings(
        _ degrees: Double, pitch: Double = 0, hingeTilt: Double = 0
    ) -> (display: Vector3, base: Vector3) {
        let g = 9.81, radians = { (d: Double) in d * .pi / 180 }
        let x = g * sin(radians(hingeTilt)), planar = g * cos(radians(hingeTilt))
        let base = Vector3(x, planar * sin(radians(pitch)), planar * cos(radians(pitch)))
        let theta = radians(degrees)
        let display = Vector3(x, cos(theta) * base.y - sin(theta) * base.z, sin(theta) * base.y + cos(theta) * base.z)
        return (display, base)
    }

    /// Feeds both sensors at 25 Hz for `seconds` from `start`; returns every event.
    static func hold(
        _ detector: inout HingeDetector, _ degrees: Double, from start: Double, seconds: Double = 1,
        pitch: Double = 0, hingeTilt: Double = 0
    ) -> [HingeEvent] {
        let (display, base) = readings(degrees, pitch: pitch, hingeTilt: hingeTilt)
        var events: [HingeEvent] = []
        for time in stride(from: start, to: start + seconds, by: 0.04) {
            events += detector.process(time: time, location: .display, reading: display)
            events += detector.process(time: time + 0.02, location: .base, reading: base)
        }
        return events
    }

    @Test("the angle of the README's example, 110°, and the mode laptop at once")
    func laptopOnADesk() {
        var detector = HingeDetector()
        let events = Self.hold(&detector, 110, from: 0)
        #expect(events.contains(.mode(.laptop)))
        #expect(abs((detector.reportedAngle ?? 0) - 110) < 0.5)
    }

    @Test("folding back past the threshold turns tablet, unfolding below the other turns laptop; between, nothing")
    func modes() {
        var detector = HingeDetector()
        _ = Self.hold(&detector, 120, from: 0)
        #expect(!Self.hold(&detector, 195, from: 1).contains(.mode(.tablet)), "below 205°")
        #expect(Self.hold(&detector, 300, from: 2).contains(.mode(.tablet)))
        #expect(!Self.hold(&detector, 170, from: 3).contains(.mode(.laptop)), "above 155°")
        #expect(Self.hold(&detector, 100, from: 4).contains(.mode(.laptop)))
    }

    @Test("closed and folded back read alike: the angle stays continuous through 0° and 360°")
    func continuity() {
        var closing = HingeDetector()
        for (step, degrees) in [90.0, 45, 20, 5, 1].enumerated() {
            _ = Self.hold(&closing, degrees, from: Double(step))
        }
        #expect(closing.mode == .laptop)
        #expect((closing.reportedAngle ?? 99) < 3)
        var folding = HingeDetector()
        for (step, degrees) in [120.0, 200, 260, 320, 355, 359].enumerated() {
            _ = Self.hold(&folding, degrees, from: Double(step))
        }
        #expect(folding.mode == .tablet)
        #expect((folding.reportedAngle ?? 0) > 355)
    }

    @Test("at start near closed the mode stays unknown until the hinge moves away")
    func ambiguousStart() {
        var detector = HingeDetector()
        #expect(Self.hold(&detector, 3, from: 0).allSatisfy { if case .mode = $0 { false } else { true } })
        #expect(detector.mode == nil)
        #expect(Self.hold(&detector, 80, from: 1).contains(.mode(.laptop)))
    }

    @Test("at start near 0°/360° the lid switch settles it: closed is a laptop, open is folded back")
    func lidSwitchAtStart() {
        var open = HingeDetector()
        open.lidSwitch(closed: false)
        _ = Self.hold(&open, 2, from: 0)  // the sensors read 2°: with the lid open, that is 362°
        #expect(open.mode == .tablet)
        #expect((open.reportedAngle ?? 0) < 5, "shown as 2°, the same reading as 362°")
        var closed = HingeDetector()
        closed.lidSwitch(closed: true)
        _ = Self.hold(&closed, 357, from: 0)  // -3°
        #expect(closed.mode == .laptop)
        // While the angle is followed the switch is not trusted over it (a magnet in tablet mode).
        var folded = HingeDetector()
        for (step, degrees) in [120.0, 200, 260, 320].enumerated() {
            _ = Self.hold(&folded, degrees, from: Double(step))
        }
        folded.lidSwitch(closed: true)
        _ = Self.hold(&folded, 350, from: 4)
        #expect(folded.mode == .tablet)
        // Out of the ambiguous zone the switch changes nothing.
        var wide = HingeDetector()
        wide.lidSwitch(closed: true)
        _ = Self.hold(&wide, 110, from: 0)
        #expect(wide.mode == .laptop && abs((wide.reportedAngle ?? 0) - 110) < 0.5)
    }

    @Test(
        """
        a hinge-angle sensor's reading is the angle, unambiguous at 0°/360°; the accelerometers stand in when it \
        is silent
        """
    )
    func measuredAngle() {
        var detector = HingeDetector()
        var events: [HingeEvent] = []
        for step in 0..<10 { events += detector.processMeasured(time: Double(step) * 0.1, degrees: 358) }
        #expect(events.first == .angle(358) && detector.mode == .tablet, "folded back, known at once")
        // Its angle wins over the accelerometers while it reads (theirs is 2° off).
        _ = Self.hold(&detector, 356, from: 1, seconds: 0.3)
        #expect(detector.reportedAngle == 358)
        #expect(
            detector.processMeasured(time: 1.35, degrees: nil) == [.angle(nil)], "unreliable: unknown, the mode holds")
        #expect(
            detector.mode == .tablet
                && detector.unobservable(at: 1.35) == .reportedUnreliable)
        // Silent past stale-after: the accelerometers decide, continuing from its last angle.
        for (step, degrees) in [356.0, 300, 220, 150, 110].enumerated() {
            _ = Self.hold(&detector, degrees, from: 2 + Double(step))
        }
        #expect(abs((detector.reportedAngle ?? 0) - 110) < 1)
        #expect(detector.mode == .laptop)
        var closed = HingeDetector()
        _ = closed.processMeasured(time: 0, degrees: 2)
        #expect(closed.mode == .laptop, "2° measured is closed, not folded back")
    }

    @Test("a hinge near vertical makes the angle unknown and the mode holds")
    func hingeVertical() {
        var detector = HingeDetector()
        _ = Self.hold(&detector, 300, from: 0)
        #expect(detector.mode == .tablet)
        let events = Self.hold(&detector, 100, from: 1, hingeTilt: 75)
        #expect(events.contains(.angle(nil)))
        #expect(!events.contains(.mode(.laptop)))
        #expect(detector.mode == .tablet)
    }

    @Test("a stalled base sensor makes the angle unknown; the mode holds")
    func stalledSensor() {
        var detector = HingeDetector()
        _ = Self.hold(&detector, 110, from: 0)
        let (display, _) = Self.readings(300)
        var events: [HingeEvent] = []
        for time in stride(from: 1.0, to: 2.0, by: 0.04) {
            events += detector.process(time: time, location: .display, reading: display)
        }
        #expect(events.contains(.angle(nil)))
        #expect(detector.mode == .laptop)
    }

    @Test("jolts move neither the angle nor the mode")
    func jolts() {
        var detector = HingeDetector()
        _ = Self.hold(&detector, 120, from: 0)
        let before = detector.reportedAngle
        var events: [HingeEvent] = []
        for time in stride(from: 1.0, to: 1.5, by: 0.04) {
            events += detector.process(time: time, location: .display, reading: Vector3(0, 20, -5))
            events += detector.process(time: time + 0.02, location: .base, reading: Vector3(0, -3, 25))
        }
        #expect(events.isEmpty)
        #expect(detector.reportedAngle == before)
    }
}
