#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The dwell rule at rest (detection.md, rule 8): a pose a person has settled into is taken even
/// inside the hysteresis band. People lie and carry devices 20–35° off an axis, where the band alone
/// would keep the old orientation. The raw samples rest (the rest test), their mean lies past the
/// dwell line (`dwell-margin`), and it has stayed so, within `dwell-drift` of where it began, for
/// `dwell-time` after either evidence that the pose is held and not a glance's pause:
///
/// * the low-passed pose has caught up with the resting one to within `dwell-agreement`. The
///   low-pass trails a turn by its speed times its time constant and catches up only while the
///   device stays, so a pause at the end of a quick turn ends before it agrees, and a pose reached
///   slowly and held agrees soon. The drift bound: the rest test lets a hand starting back pass for
///   a few samples, and the reading then meets the low-pass half way; only a pose that stays put
///   shows it catching up.
/// * with an anchored estimate, the gyroscope has shown the device still for `gyro-dwell-time`,
///   longer than a glance's pause.
struct RestingDwellRule: Sendable {
    let settings: DetectorConfiguration.RestingDwell
    let line: DwellLine
    private let cosAgreement: Double
    private let cosDrift: Double
    private(set) var candidate: DeviceOrientation?
    private var since = 0.0
    private var direction = Vector3.zero
    /// Since when the low-passed pose has agreed with the resting one.
    private var agreedSince: Double?

    init(configuration: DetectorConfiguration) {
        settings = configuration.restingDwell
        line = DwellLine(margin: configuration.restingDwell.margin)
        cosAgreement = cos(configuration.restingDwell.agreement * .pi / 180)
        cosDrift = cos(configuration.restingDwell.drift * .pi / 180)
    }

    mutating func forget() { candidate = nil }

    /// The neighbour taken at `time`, if one is, given the rest's mean (`resting`, nil when the
    /// samples do not rest).
    mutating func decide(
        resting: Vector3?, _ estimate: GravityEstimate, from current: DeviceOrientation, at time: Double,
        bands: OrientationBands, leftByDwell: DwellChange?
    ) -> DeviceOrientation? {
        let lowPass = estimate.lowPassUp
        let agrees = resting.map { lowPass.dot($0) >= cosAgreement * lowPass.magnitude * $0.magnitude } ?? false
        if !agrees { agreedSince = nil }
        guard let resting, let target = bands.dwellTarget(resting, line: line, from: current, leftByDwell: leftByDwell),
            agrees || estimate.isAnchored
        else {
            candidate = nil
            return nil
        }
        let unit = (1 / resting.magnitude) * resting
        if target != candidate || unit.dot(direction) < cosDrift {
            candidate = target
            since = time
            direction = unit
        }
        if agrees, agreedSince == nil { agreedSince = time }
        let byLowPass = agreedSince.map { time - max($0, since) >= settings.time } ?? false
        let byStillness = estimate.isAnchored && estimate.stillFor >= settings.stillTime
        return byLowPass || byStillness ? target : nil
    }
}
