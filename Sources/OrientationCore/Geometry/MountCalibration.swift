#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the calibration wizard (`orientd calibrate`) asks of the person and the sensor: which poses,
/// and when a pose counts as held.
public struct PoseCaptureConfiguration: Sendable, Hashable {
    /// The poses asked for, in order. Three with gravity along three different display axes fix every
    /// signed axis permutation, the improper ones (determinant −1) included.
    public var poses: [DeviceOrientation] = [.portrait, .landscapeLeft, .faceUp]
    /// How long the device must be still in a pose before it is captured (seconds).
    public var stillDuration = 1.0
    /// Standard gravity (m/s²): a still device reads about this much.
    public var gravity = 9.81
    /// How far the magnitude may be from `gravity` while still (a fraction of it): more means the
    /// device is being moved or shaken.
    public var magnitudeTolerance = 0.15
    /// How far any reading may be from the mean of the still run (m/s²): hand tremor and sensor
    /// noise stay well below it (0.1–0.2 m/s²), turning the device does not.
    public var stillSpread = 0.6
    /// A capture must be at least this far (degrees) from every earlier one: the poses asked for are
    /// 90° apart, and a person holds them to within 20° or so.
    public var distinctAngle = 45.0
    /// After a capture, a reading this far (degrees) from it means the person has started to move:
    /// until then the device still resting in the last pose is the person reading the prompt, not a
    /// second attempt at the same pose.
    public var movedAngle = 20.0
    /// Giving up on a pose after this long without a capture (seconds).
    public var poseTimeout = 90.0

    public init() {}
}

/// What happened while capturing poses, in the order it happened.
public enum PoseCaptureEvent: Sendable, Hashable {
    /// The wizard now asks for `pose`.
    case waiting(DeviceOrientation)
    /// How long the device has been still, as a fraction of the time needed (0 moving, 1 captured),
    /// and whether it has moved since the prompt (a pose held from before is no answer); for a live
    /// indicator.
    case stillness(DeviceOrientation, fraction: Double, moved: Bool)
    /// `pose` was held still: the raw sensor reading averaged over the still time (m/s²).
    case captured(DeviceOrientation, Vector3)
    /// The device was held still, but not in a new pose; the reason says which.
    case rejected(DeviceOrientation, reason: String)
    /// Every pose is captured, in order.
    case finished([PoseCapture.Capture])
    /// The wizard gives up (no still pose in time).
    case failed(String)
}

/// The capture of the wizard's poses from raw readings: a pure state machine like the detector
/// (times in, decisions out, no clock). A pose is captured when the readings have stayed within
/// `stillSpread` of their mean, near `gravity` in magnitude, for `stillDuration`, and the mean is
/// `distinctAngle` away from every earlier capture, and the device has moved since the prompt: the
/// pose it rested in when the wizard started, or the pose just captured, still held while the
/// person reads the next prompt, is not an answer. An earlier pose held again after moving is, and
/// is rejected once, with the reason.
public struct PoseCapture: Sendable {
    public struct Capture: Sendable, Hashable {
        public var pose: DeviceOrientation
        /// The raw reading (sensor frame, m/s²), averaged over the still time.
        public var reading: Vector3
    }

    public let configuration: PoseCaptureConfiguration
    public private(set) var captures: [Capture] = []
    /// The run of still readings: its start, count and sum.
    private var run: (start: Double, count: Int, sum: Vector3)?
    private var poseAskedAt: Double?
    /// False from a prompt, capture or rejection until the readings move `movedAngle` away from
    /// `reference`: a pose held from before is not an answer to the prompt.
    private var moved = false
    /// The reading when the first prompt appeared, else the last capture or rejection.
    private var reference: Vector3?
    private var done = false

    public init(configuration: PoseCaptureConfiguration = PoseCaptureConfiguration()) {
        self.configuration = configuration
    }

    /// The pose being asked for; nil when all are captured.
    public var currentPose: DeviceOrientation? {
        captures.count < configuration.poses.count ? configuration.poses[captures.count] : nil
    }

    /// Asks for the first pose.
    public mutating func start(at time: Double) -> [PoseCaptureEvent] {
        poseAskedAt = time
        return currentPose.map { [.waiting($0)] } ?? []
    }

    /// One raw reading (sensor frame, m/s²) at `time` seconds.
    public mutating func observe(time: Double, reading: Vector3) -> [PoseCaptureEvent] {
        guard !done, let pose = currentPose else { return [] }
        let askedAt = poseAskedAt ?? time
        poseAskedAt = askedAt
        let steadyMagnitude =
            abs(reading.magnitude - configuration.gravity) <= configuration.magnitudeTolerance * configuration.gravity
        if reference == nil { reference = reading }
        // Only readings near 1 g count as a new direction: a tap on the table is not a turn.
        if let reference, !moved, steadyMagnitude, reading.angle(to: reference) >= configuration.movedAngle {
            moved = true
        }
        if var current = run, steadyMagnitude,
            (reading - current.sum / Double(current.count)).magnitude <= configuration.stillSpread
        {
            current.count += 1
            current.sum = current.sum + reading
            run = current
        } else {
            run = steadyMagnitude ? (time, 1, reading) : nil
        }

        var events: [PoseCaptureEvent] = []
        guard let current = run else {
            events.append(.stillness(pose, fraction: 0, moved: moved))
            return events + timeout(pose, at: time, since: askedAt)
        }
        let fraction = min((time - current.start) / configuration.stillDuration, 1)
        guard fraction >= 1 else {
            events.append(.stillness(pose, fraction: fraction, moved: moved))
            return events + timeout(pose, at: time, since: askedAt)
        }
        let mean = current.sum / Double(current.count)
        run = nil
        if let earlier = captures.min(by: { $0.reading.angle(to: mean) < $1.reading.angle(to: mean) }),
            earlier.reading.angle(to: mean) < configuration.distinctAngle
        {
            // Still in a pose captured before: the last one, not yet left, is the person reading
            // the prompt; anything else is a second attempt at an earlier pose, said once per hold.
            if moved {
                let off = earlier.reading.angle(to: mean)
                events.append(
                    .rejected(
                        pose,
                        reason:
                            """
                            the device is held as it was for \(earlier.pose.rawValue) (\(Self.degrees(off)) \
                            away): turn it to \(pose.rawValue)
                            """
                    ))
                moved = false
                reference = mean
            }
            return events + timeout(pose, at: time, since: askedAt)
        }
        guard moved else {
            // Resting where it was when the prompt appeared: not yet an answer.
            return events + timeout(pose, at: time, since: askedAt)
        }
        captures.append(Capture(pose: pose, reading: mean))
        events.append(.stillness(pose, fraction: 1, moved: true))
        events.append(.captured(pose, mean))
        moved = false
        reference = mean
        poseAskedAt = time
        if let next = currentPose {
            events.append(.waiting(next))
        } else {
            done = true
            events.append(.finished(captures))
        }
        return events
    }

    private mutating func timeout(
        _ pose: DeviceOrientation, at time: Double, since askedAt: Double
    ) -> [PoseCaptureEvent] {
        guard time - askedAt >= configuration.poseTimeout else { return [] }
        done = true
        return [
            .failed(
                """
                no still \(pose.rawValue) pose in \(Int(configuration.poseTimeout.rounded())) s: hold the device \
                still (rest it against something) in that pose for \(configuration.stillDuration) s
                """
            )
        ]
    }

    /// "12.3°".
    public static func degrees(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return "\(tenths)°"
    }
}

extension DeviceOrientation {
    /// What an accelerometer reads in the display frame (gravity-pointing, unit length) when the
    /// device rests in this orientation: upright portrait reads (0, −1, 0) g, face up (0, 0, −1) g.
    public var gravityReading: Vector3? {
        switch self {
        case .portrait: Vector3(0, -1, 0)
        case .portraitUpsideDown: Vector3(0, 1, 0)
        case .landscapeLeft: Vector3(-1, 0, 0)
        case .landscapeRight: Vector3(1, 0, 0)
        case .faceUp: Vector3(0, 0, -1)
        case .faceDown: Vector3(0, 0, 1)
        case .unknown: nil
        }
    }
}

/// The mount matrix that turns the captured raw readings into the readings each pose should give.
public struct MountFit: Sendable, Hashable {
    /// How well one capture agrees with the matrix.
    public struct Check: Sendable, Hashable {
        public var pose: DeviceOrientation
        /// The capture turned by the matrix (display frame, m/s²).
        public var display: Vector3
        /// Degrees between that and the pose's gravity reading.
        public var error: Double
    }

    public var matrix: MountMatrix
    /// True when the matrix is a signed axis permutation (every capture within the tolerance of
    /// one); false when it is the best rotation (or rotation with reflection) instead.
    public var isSignedPermutation: Bool
    public var checks: [Check]
    /// The largest of the checks' errors.
    public var worstError: Double { checks.map(\.error).max() ?? 0 }

    /// Captures within this many degrees of a signed permutation make it that permutation.
    public static let permutationTolerance = 10.0

    /// Fits a matrix to captures of three poses whose gravity readings span the three axes.
    /// Returns nil when they do not (two poses along the same axis).
    public static func fit(_ captures: [PoseCapture.Capture]) -> MountFit? {
        let pairs = captures.compactMap { capture in capture.pose.gravityReading.map { (capture, $0) } }
        let axes = pairs.map(\.1)
        let spans = axes.indices.contains { i in
            axes.indices.contains { j in
                axes.indices.contains { k in
                    abs(axes[i].dot(axes[j].cross(axes[k]))) > 0.5
                }
            }
        }
        guard spans else { return nil }
        // Every signed permutation (48, proper and improper): the one whose worst capture is nearest.
        var best: (matrix: MountMatrix, worst: Double)?
        for matrix in MountMatrix.signedPermutations {
            let worst = pairs.map { matrix.apply($0.0.reading).angle(to: $0.1) }.max() ?? 180
            if best.map({ worst < $0.worst }) ?? true { best = (matrix, worst) }
        }
        if let best, best.worst <= permutationTolerance {
            return MountFit(matrix: best.matrix, isSignedPermutation: true, checks: checks(best.matrix, pairs))
        }
        // Otherwise the orthogonal matrix nearest in least squares (orthogonal Procrustes): the
        // orthogonal factor of Σ expected · capturedᵀ, found by Newton's iteration for the polar
        // decomposition. It keeps the sign of the determinant, so reflections stay reflections.
        var sum = Matrix3.zero
        for (capture, expected) in pairs {
            sum = sum + Matrix3.outer(expected, capture.reading / capture.reading.magnitude)
        }
        guard sum.inverse != nil else { return nil }
        var orthogonal = sum
        for _ in 0..<50 {
            guard let inverse = orthogonal.inverse else { return nil }
            let next = (orthogonal + inverse.transposed) * 0.5
            let change = (next - orthogonal).norm
            orthogonal = next
            if change < 1e-12 { break }
        }
        let rounded = orthogonal.rows.map { row in [row.x, row.y, row.z].map { ($0 * 1000).rounded() / 1000 } }
        guard let matrix = try? MountMatrix(rows: rounded) else { return nil }
        return MountFit(matrix: matrix, isSignedPermutation: false, checks: checks(matrix, pairs))
    }

    /// How far (degrees) each capture is from its pose's gravity reading under `matrix`.
    public static func errors(of matrix: MountMatrix, _ captures: [PoseCapture.Capture]) -> [Double] {
        captures.compactMap { capture in
            capture.pose.gravityReading.map { matrix.apply(capture.reading).angle(to: $0) }
        }
    }

    private static func checks(_ matrix: MountMatrix, _ pairs: [(PoseCapture.Capture, Vector3)]) -> [Check] {
        pairs.map { capture, expected in
            let display = matrix.apply(capture.reading)
            return Check(pose: capture.pose, display: display, error: display.angle(to: expected))
        }
    }
}

/// A 3×3 matrix of rows, for the fit's arithmetic.
struct Matrix3: Sendable, Hashable {
    var rows: [Vector3]

    static let zero = Matrix3(rows: [Vector3(0, 0, 0), Vector3(0, 0, 0), Vector3(0, 0, 0)])

    static func outer(_ a: Vector3, _ b: Vector3) -> Matrix3 {
        Matrix3(rows: [b * a.x, b * a.y, b * a.z])
    }

    static func + (l: Matrix3, r: Matrix3) -> Matrix3 { Matrix3(rows: zip(l.rows, r.rows).map { $0 + $1 }) }
    static func - (l: Matrix3, r: Matrix3) -> Matrix3 { Matrix3(rows: zip(l.rows, r.rows).map { $0 - $1 }) }
    static func * (l: Matrix3, r: Double) -> Matrix3 { Matrix3(rows: l.rows.map { $0 * r }) }

    var transposed: Matrix3 {
        Matrix3(rows: [
            Vector3(rows[0].x, rows[1].x, rows[2].x), Vector3(rows[0].y, rows[1].y, rows[2].y),
            Vector3(rows[0].z, rows[1].z, rows[2].z),
        ])
    }

    var norm: Double { rows.map { $0.dot($0) }.reduce(0, +).squareRoot() }

    var determinant: Double { rows[0].dot(rows[1].cross(rows[2])) }

    /// The inverse by cofactors; nil for a (nearly) singular matrix.
    var inverse: Matrix3? {
        let det = determinant
        guard abs(det) > 1e-9 else { return nil }
        // The columns of the inverse are the cross products of the rows, over the determinant.
        let columns = [rows[1].cross(rows[2]), rows[2].cross(rows[0]), rows[0].cross(rows[1])].map { $0 / det }
        return Matrix3(rows: columns).transposed
    }
}

extension Vector3 {
    static func * (v: Vector3, s: Double) -> Vector3 { s * v }
    static func / (v: Vector3, s: Double) -> Vector3 { (1 / s) * v }
}
