#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The settle wait (detection.md, rule 6): the orientation the estimate's up vector asks for, taken
/// once it has held for `settle-time` (`face-dwell` for a face state) and no acceleration is being
/// waited out. It decides when the raw stream is never quiet: walking, car vibration, tremor.
///
/// Settling means the candidate stays the same *and* the estimate stops moving out of it: an
/// estimate still following a turn would otherwise hand over whatever orientation the turn passes
/// through (lifting a phone off a table past upside-down). Without a measured turn that is the up
/// vector's drift from where the candidate began (`settle-drift`); with one it is the turn's heading
/// (``MeasuredTurn/heading``): a candidate settles unless the device turns out of it, and the wait
/// begins at the first sample that shows the turn no longer leaving (a sample period earlier would
/// let a slow sensor's glance, out and straight back, pass for a settled pose).
struct SettleRule: Sendable {
    let settings: DetectorConfiguration.Settle
    private let cosDrift: Double
    private(set) var candidate: DeviceOrientation?
    private var since = 0.0
    private var direction = Vector3.zero

    init(configuration: DetectorConfiguration) {
        settings = configuration.settle
        cosDrift = cos(configuration.settle.drift * .pi / 180)
    }

    mutating func forget() { candidate = nil }

    /// The candidate settled at `time`, if one did. From `unknown` with a measured turn the
    /// candidate is the nearest orientation, as the start-up takes it: nothing is shown yet to hold,
    /// and a pocket's swing tips the device past the upright window for half of each stride.
    ///
    /// `resting` is the rest's mean while the raw samples rest (rule 4): then they *are* gravity, and
    /// a candidate their mean does not ask for is not taken, however the estimate reads (a fusion a
    /// turn left a few degrees off, not yet pulled back, showed a face state for 20 ms).
    mutating func decide(
        _ estimate: GravityEstimate, resting: Vector3?, from current: DeviceOrientation, at time: Double,
        period: Double, bands: OrientationBands, face: FaceRule, acceleratingUntil: Double
    ) -> DeviceOrientation? {
        let up = estimate.up
        let asked =
            estimate.turn != nil && current == .unknown
            ? bands.startupCandidate(up) : bands.classify(up, from: current)
        guard let asked, asked != current else {
            candidate = nil
            return nil
        }
        let unit = (1 / up.magnitude) * up
        let moving =
            if let turn = estimate.turn {
                turn.heading.map { bands.turnLeaves(asked, to: $0, from: current) } ?? false
            } else {
                unit.dot(direction) < cosDrift
            }
        if asked != candidate || moving {
            candidate = asked
            since = estimate.turn != nil && moving ? .infinity : time
            direction = unit
        } else if since == .infinity {
            since = time
        }
        // A candidate the gyroscope shows the device at rest in needs no more than a glance's
        // turnaround could pass for (`gyro-still-settle-time`), and no hold-off: still means not
        // turning *and* the accelerometer back at gravity's length, agreeing.
        let stillInside =
            estimate.isAnchored && !asked.isFlat && estimate.isStill
            && waitIsOver(estimate.stillFor, for: settings.stillTime, period: period)
        let wait = face.settleWait(for: asked, otherwise: settings.time)
        if let resting, bands.candidate(resting, from: current) != asked { return nil }
        guard
            stillInside || headingInto(asked, estimate, from: current, bands: bands)
                || waitIsOver(time - since, for: wait, period: period) && time >= acceleratingUntil
        else { return nil }
        return asked
    }

    /// An upright candidate the anchored estimate's turn is still speeding up into needs no settle
    /// time. A smooth (minimum-jerk) turn speeds up for its first half, so one still speeding up will
    /// go at least as far again; if that least extent stays short of the candidate's axis, and the
    /// turn's heading lies in the candidate, the turn is heading *into* it, not passing through (a
    /// half turn crossing landscape's line has gone 67.5°, and as far again is 135°: past
    /// landscape's axis). A turn that began as a reversal (a flick's far pose) does not count: its
    /// speeding up is the flick coming back.
    private func headingInto(
        _ candidate: DeviceOrientation, _ estimate: GravityEstimate, from current: DeviceOrientation,
        bands: OrientationBands
    ) -> Bool {
        guard estimate.isAnchored, let turn = estimate.turn, let heading = turn.heading, let start = turn.start,
            let axis = OrientationBands.uprightAxis(candidate), bands.classify(heading, from: current) == candidate,
            !turn.isReversal, turn.isSpeedingUp
        else { return false }
        return 2 * start.angle(to: estimate.up) < start.angle(to: Vector3(axis.x, axis.y, 0))
    }
}
