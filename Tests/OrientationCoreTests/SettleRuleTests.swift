#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@testable import OrientationCore

/// The settle rule (detection.md, rule 6) as a part: fed estimates made by hand, not by a fusion.
@Suite("The settle rule, alone")
struct SettleRuleTests {
    static let configuration = DetectorConfiguration()

    /// An up vector at `tilt` degrees, the top edge up (portrait's side).
    static func up(tilt: Double) -> Vector3 {
        let radians = tilt * .pi / 180
        return 9.81 * Vector3(0, cos(radians), sin(radians))
    }

    /// Feeds `seconds` of 50 Hz estimates whose up vector lies at `estimated` tilt, with the raw
    /// samples resting at `resting` tilt (nil: not resting), from portrait; the first orientation taken.
    static func settled(estimated: Double, resting: Double?, for seconds: Double = 1) -> DeviceOrientation? {
        var rule = SettleRule(configuration: configuration)
        let bands = OrientationBands(configuration: configuration)
        let face = FaceRule(configuration: configuration)
        for index in 0..<Int(seconds * 50) {
            let time = Double(index) / 50
            let estimate = GravityEstimate(time: time, gravity: -up(tilt: estimated))
            if let taken = rule.decide(
                estimate, resting: resting.map { up(tilt: $0) }, from: .portrait, at: time, period: 0.02,
                bands: bands, face: face, acceleratingUntil: -.infinity)
            {
                return taken
            }
        }
        return nil
    }

    @Test("an estimate in the face band is taken after the face's wait")
    func faceTaken() {
        #expect(Self.settled(estimated: 80, resting: nil) == .faceUp)
    }

    @Test(
        """
        while the raw samples rest at 62°, an estimate a turn left at 80° (a fusion not yet pulled back) is not \
        taken: resting, the readings are gravity
        """)
    func restOverrulesTheEstimate() {
        #expect(Self.settled(estimated: 80, resting: 62) == nil)
        #expect(Self.settled(estimated: 80, resting: 79) == .faceUp, "a rest that agrees lets it through")
    }
}
