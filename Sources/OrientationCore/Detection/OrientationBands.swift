#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which orientation an up vector asks for (detection.md, rules 2 and 3): the face bands, the upright
/// window, the hysteresis between neighbours, the overhead lock, and the dwell line. Geometry only:
/// what the device holds now comes in with each question.
struct OrientationBands: Sendable {
    let freeFallMagnitude: Double
    private let sinFaceEnter: Double
    private let sinFaceExit: Double
    private let sinStartupFace: Double
    private let sinUprightMaximum: Double
    private let sinUprightMinimum: Double
    private let sinOverheadEnter: Double
    private let sinOverheadExit: Double
    private let cosHysteresisLine: Double
    /// Held overhead (tilt at or below `overhead-enter-tilt`, until it rises to `overhead-exit-tilt`):
    /// upright changes are locked.
    private(set) var overheadLocked = false

    init(configuration: DetectorConfiguration) {
        func sine(_ degrees: Double) -> Double { sin(degrees * .pi / 180) }
        freeFallMagnitude = configuration.estimate.freeFallMagnitude
        sinFaceEnter = sine(configuration.face.enterTilt)
        sinFaceExit = sine(configuration.face.exitTilt)
        // From `unknown` the face band is split at its middle: either side holds once chosen.
        sinStartupFace = sine((configuration.face.enterTilt + configuration.face.exitTilt) / 2)
        sinUprightMaximum = sine(configuration.bands.uprightMaximumTilt)
        sinUprightMinimum = sine(configuration.bands.uprightMinimumTilt)
        sinOverheadEnter = sine(configuration.bands.overheadEnterTilt)
        sinOverheadExit = sine(configuration.bands.overheadExitTilt)
        cosHysteresisLine = cos((45 + configuration.bands.adjacentHysteresis / 2) * .pi / 180)
    }

    /// Follows the overhead lock with the judged up vector.
    mutating func updateOverheadLock(_ up: Vector3) {
        let sinTilt = up.z / up.magnitude
        if sinTilt <= sinOverheadEnter {
            overheadLocked = true
        } else if sinTilt >= sinOverheadExit {
            overheadLocked = false
        }
    }

    /// The orientation `up` asks for, given the current one; nil where the current orientation
    /// should simply hold (tilt between the upright window and the face threshold, inside the
    /// hysteresis dead zone, overhead, or too short to mean anything).
    func classify(_ up: Vector3, from current: DeviceOrientation) -> DeviceOrientation? {
        let magnitude = up.magnitude
        guard magnitude >= freeFallMagnitude else { return nil }
        let sinTilt = up.z / magnitude
        if sinTilt >= sinFaceEnter { return .faceUp }
        if sinTilt <= -sinFaceEnter { return .faceDown }
        if current.isFlat, abs(sinTilt) >= sinFaceExit { return nil }
        // From a face state screen-down poses short of it are upright too: there is no upright
        // orientation the overhead lock could be holding (as from `unknown`).
        guard sinTilt < sinUprightMaximum, current.isFlat || sinTilt > sinUprightMinimum && !overheadLocked
        else { return nil }
        let nearest = Self.nearestUpright(up)
        if nearest != current, let axis = Self.uprightAxis(current) {
            // Stay unless the direction is past the hysteresis line measured from the current
            // orientation's axis (67.5° with the default 45° gap).
            let planar = (up.x * up.x + up.y * up.y).squareRoot()
            if (up.x * axis.x + up.y * axis.y) / planar > cosHysteresisLine { return nil }
        }
        return nearest
    }

    /// The first orientation (from `unknown`): the nearest one, without the hold bands (there is
    /// nothing to hold yet, and either neighbour of a diagonal is as good as the other). Screen-down
    /// between the upright limit and the split of the face band gives the upright orientation its
    /// direction asks for: nothing is there to flip from, so the overhead lock has nothing to hold.
    func startupCandidate(_ up: Vector3) -> DeviceOrientation? {
        let magnitude = up.magnitude
        guard magnitude >= freeFallMagnitude else { return nil }
        let sinTilt = up.z / magnitude
        if sinTilt >= sinStartupFace { return .faceUp }
        if sinTilt <= -sinStartupFace { return .faceDown }
        return up.x == 0 && up.y == 0 ? nil : Self.nearestUpright(up)
    }

    /// What `up` asks for from `current`: the start-up's answer from `unknown`, else ``classify(_:from:)``'s.
    func candidate(_ up: Vector3, from current: DeviceOrientation) -> DeviceOrientation? {
        current == .unknown ? startupCandidate(up) : classify(up, from: current)
    }

    /// Whether a turn heading to `ahead` (``MeasuredTurn/heading``) leaves `candidate`: `ahead` asks
    /// for another orientation, or lies in the band that holds the current one. A pose beyond the
    /// upright window's tilt (tipped far back or screen down, short of a face state) holds whatever
    /// is shown, so a turn heading there does not leave an upright candidate: a phone in a pocket
    /// stood up with, turning from face up through portrait at 200 °/s, would otherwise look ahead
    /// past the upright window and wait for the turn to end.
    func turnLeaves(_ candidate: DeviceOrientation, to ahead: Vector3, from current: DeviceOrientation) -> Bool {
        if current == .unknown { return startupCandidate(ahead) != candidate }
        if let asked = classify(ahead, from: current) { return asked != candidate }
        guard Self.uprightAxis(candidate) != nil else { return true }
        let sinTilt = ahead.z / ahead.magnitude
        let tippedOut = sinTilt >= sinUprightMaximum || sinTilt <= sinUprightMinimum
        return !(tippedOut && abs(sinTilt) < sinFaceEnter)
    }

    /// The neighbour `up` asks for under the dwell rule, or nil: the current orientation is upright,
    /// the tilt lies in the upright window, the overhead lock is off, and the direction in the screen
    /// plane lies past `line` towards an axis other than the current one. Returning to the
    /// orientation a dwell change left (`leftByDwell`) needs the device turned back by twice the
    /// margin from where that change was made.
    func dwellTarget(
        _ up: Vector3, line: DwellLine, from current: DeviceOrientation, leftByDwell: DwellChange?
    ) -> DeviceOrientation? {
        guard let axis = Self.uprightAxis(current), !overheadLocked else { return nil }
        let magnitude = up.magnitude
        guard magnitude >= freeFallMagnitude else { return nil }
        let sinTilt = up.z / magnitude
        let planar = (up.x * up.x + up.y * up.y).squareRoot()
        guard sinTilt < sinUprightMaximum, sinTilt > sinUprightMinimum, planar > 0 else { return nil }
        let nearest = Self.nearestUpright(up)
        guard nearest != current, (up.x * axis.x + up.y * axis.y) / planar <= line.cosLine else { return nil }
        if let left = leftByDwell, nearest == left.left {
            guard (up.x * left.x + up.y * left.y) / planar <= line.cosReturnTurn else { return nil }
        }
        return nearest
    }

    static func nearestUpright(_ up: Vector3) -> DeviceOrientation {
        abs(up.y) >= abs(up.x)
            ? (up.y >= 0 ? .portrait : .portraitUpsideDown)
            : (up.x >= 0 ? .landscapeLeft : .landscapeRight)
    }

    /// The unit direction of the up vector for each upright orientation, in the screen plane.
    static func uprightAxis(_ orientation: DeviceOrientation) -> (x: Double, y: Double)? {
        switch orientation {
        case .portrait: (0, 1)
        case .portraitUpsideDown: (0, -1)
        case .landscapeLeft: (1, 0)
        case .landscapeRight: (-1, 0)
        case .unknown, .faceUp, .faceDown: nil
        }
    }
}

/// A dwell line as the cosine of its angle from the current axis, `45° + margin / 2`, and of the
/// turn back, twice the margin, that a return to the orientation a dwell change left needs from the
/// direction the change was made at.
struct DwellLine: Sendable {
    var cosLine: Double
    var cosReturnTurn: Double

    init(margin: Double) {
        cosLine = cos((45 + margin / 2) * .pi / 180)
        cosReturnTurn = cos(2 * margin * .pi / 180)
    }

    /// The diagonal itself (no margin).
    static let diagonal = DwellLine(margin: 0)
}

/// The orientation the last change left, when the dwell rule made it, and the direction in the
/// screen plane it was made at (unit, x and y): a hand wobbling about the diagonal, which pauses
/// past the line at each turn, changes the orientation once, not at each pause. Measured from where
/// the change was made, not from the axis: a pose taken far past the line is left by a turn of the
/// same size as one taken at it.
struct DwellChange: Sendable {
    var left: DeviceOrientation
    var x: Double
    var y: Double

    init(left: DeviceOrientation, at up: Vector3) {
        let planar = (up.x * up.x + up.y * up.y).squareRoot()
        self.left = left
        x = up.x / planar
        y = up.y / planar
    }
}
