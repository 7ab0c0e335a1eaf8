#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The dwell rule while moving (detection.md, rule 9): walking or carried, the raw samples never
/// rest. A candidate begins when the estimate's direction crosses the dwell line; it lasts while that
/// direction stays on the candidate's side of the diagonal and the acceleration gate is clear, and it
/// is taken once it has lasted long enough, the mean direction since it began lies past the line, and
/// the direction now lies within `dwell-moving-spread` of that mean. A turn that merely passes
/// through never lasts; a pose held past the line does, whatever the steps do.
///
/// A low-passed estimate sways with each step: its line is `dwell-moving-margin` and it must last
/// `dwell-moving-time`. An anchored estimate neither trails a turn nor sways, so a glance that
/// pauses past the line lies past it for its whole pause; but a device walked with is never still,
/// and a pause is. Then only the time the device turns counts, and it must reach
/// `gyro-moving-dwell-time`; the line is the resting one; nothing is taken while the turn heads back
/// across the diagonal; and a direction that leaves the spread of the mean starts the mean afresh
/// (the device has turned on to another pose, a body lying down tilts on after the line, which must
/// now last).
struct MovingDwellRule: Sendable {
    let settings: DetectorConfiguration.MovingDwell
    private let movingLine: DwellLine
    private let restingLine: DwellLine
    private let cosSpread: Double
    private(set) var candidate: DeviceOrientation?
    private var since = 0.0
    private var sum = Vector3.zero
    /// How long the candidate has lasted while the device turned (was not still), and the time of
    /// its last sample.
    private var turning = 0.0
    private var last = 0.0

    init(configuration: DetectorConfiguration) {
        settings = configuration.movingDwell
        movingLine = DwellLine(margin: configuration.movingDwell.margin)
        restingLine = DwellLine(margin: configuration.restingDwell.margin)
        cosSpread = cos(configuration.movingDwell.spread * .pi / 180)
    }

    mutating func forget() { candidate = nil }

    /// The neighbour taken at `time`, if one is.
    mutating func decide(
        _ estimate: GravityEstimate, from current: DeviceOrientation, at time: Double, bands: OrientationBands,
        leftByDwell: DwellChange?, accelerating: Bool
    ) -> DeviceOrientation? {
        guard !accelerating, OrientationBands.uprightAxis(current) != nil else {
            candidate = nil
            return nil
        }
        let anchored = estimate.isAnchored
        let line = anchored ? restingLine : movingLine
        let up = estimate.up
        func target(_ up: Vector3, _ line: DwellLine) -> DeviceOrientation? {
            bands.dwellTarget(up, line: line, from: current, leftByDwell: leftByDwell)
        }
        let unit = (1 / up.magnitude) * up
        if let candidate, target(up, .diagonal) == candidate {
            if anchored, unit.dot(sum) < cosSpread * sum.magnitude {
                since = time
                sum = .zero
                turning = 0
            }
            sum = sum + unit
            if estimate.stillFor == 0, target(up, line) == candidate { turning += time - last }
        } else if let target = target(up, line) {
            candidate = target
            since = time
            sum = unit
            turning = 0
        } else {
            candidate = nil
            return nil
        }
        last = time
        let lasted = anchored ? turning >= settings.turningTime : time - since >= settings.time
        guard lasted, let candidate, target(sum, line) == candidate, unit.dot(sum) >= cosSpread * sum.magnitude,
            estimate.turn?.heading.map({ target($0, .diagonal) == candidate }) ?? true
        else { return nil }
        return candidate
    }
}
