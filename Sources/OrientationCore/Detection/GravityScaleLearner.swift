/// Learns how long gravity reads on a sensor whose scale cannot be trusted, from stillness, and
/// rescales its readings so that gravity reads `gravity` m/s² again.
///
/// Why: the IIO ABI says `(raw + offset) × scale` is m/s², but some drivers have no `scale`
/// attribute (raw counts: 1 g may be 64, 1024 or 16384), give one off by a power of ten, or report
/// g instead of m/s²; iio-sensor-proxy's own test beds read 1 g as 256 m/s². The incumbent decides
/// from angles only and does not notice; orientd's detector gates on the magnitude (free fall,
/// shakes, rest), so a mis-scaled sensor would be refused for ever. Direction is all the detector
/// needs from a reading; its gates are about the magnitude *relative to gravity*. So the learner
/// measures gravity where it is the only steady force and divides it out.
///
/// A pure state machine, fed in the sensor's frame before the mount matrix (a rotation keeps the
/// length). Readings are gathered in windows; gravity is measured as the length of a window's mean
/// vector in two cases:
///
/// * **Still**: every reading of a window of `stillSpan` seconds lies within `stillSpread` degrees
///   and `stillMagnitudeSpread` (a fraction) of its first: a device on a table, a test bed.
/// * **Steady**: two consecutive windows of `steadySpan` seconds whose means agree within
///   `steadySpread` degrees and `steadyMagnitudeSpread`: a device on a car's dashboard or in a
///   walking hand, whose readings scatter by 20 % but whose vibration averages out (the mean vector's
///   length is unbiased where the mean of lengths is not). A turn moves the mean between windows.
///   Each window must also be *coherent*: its mean vector at least `steadyCoherence` of its mean
///   length. Readings that swing between directions (a device shaken, or turned back and forth
///   faster than a window) average to a short vector whose length says nothing about the scale;
///   a correctly scaled sensor waved about must never be rescaled.
///
/// When the measured length is more than `tolerance` (a fraction) away from `gravity`, the factor
/// changes. A correctly scaled sensor reads 9.78–9.83 m/s² at rest anywhere on Earth, and a car or
/// lift accelerating at 0.3 g reads 4 % long, so it is never rescaled: its factor stays exactly 1 and
/// every reading passes through bit for bit. Free fall (which a biased sensor can read as a steady
/// small vector) lasts far less than a window pair: a one-second fall is five metres. A wrong
/// measurement is corrected by the next one, made on the already rescaled readings.
public struct GravityScaleLearner: Sendable {
    /// What was measured and the factor now applied.
    public struct Measurement: Sendable, Hashable {
        /// Gravity's length in the sensor's own readings (before any factor), in its units.
        public var measuredGravity: Double
        /// Every reading is multiplied by this.
        public var factor: Double
    }

    public let gravity: Double
    /// 0.15: the detector's rest gate (`restMagnitudeTolerance`, 1.5 m/s²) refuses a rest 15 % off,
    /// so that is where learning starts; a lift's 0.1 g stays below it.
    public var tolerance = 0.15
    public var minimumSamples = 5
    public var stillSpan = 0.5
    public var stillSpread = 3.0
    public var stillMagnitudeSpread = 0.03
    public var steadySpan = 1.0
    public var steadySpread = 5.0
    public var steadyMagnitudeSpread = 0.05
    /// Vibration across gravity of 0.3 g keeps a window 96 % coherent; portrait and landscape
    /// alternating make it 71 %.
    public var steadyCoherence = 0.95

    /// The factor in force: 1 until a measurement proved the scale wrong.
    public private(set) var factor = 1.0
    /// The last measurement that changed the factor, nil while the scale is trusted.
    public private(set) var measurement: Measurement?

    private let cosStillSpread: Double
    private let cosSteadySpread: Double
    private var windowStart = 0.0
    private var windowSum = Vector3.zero
    /// The sum of the readings' lengths, for the window's coherence.
    private var windowLengthSum = 0.0
    private var windowCount = 0
    private var first = Vector3.zero
    private var firstMagnitude = 0.0
    private var isStill = true
    private var previousMean: Vector3?

    public init(gravity: Double = 9.81) {
        self.gravity = gravity
        cosStillSpread = cos(stillSpread * .pi / 180)
        cosSteadySpread = cos(steadySpread * .pi / 180)
    }

    /// Feeds one reading (sensor frame, as scaled by the sensor); returns it rescaled by the factor
    /// in force, and the measurement when this reading changed the factor.
    public mutating func process(time: Double, reading: Vector3) -> (reading: Vector3, learned: Measurement?) {
        let learned = observe(time: time, reading: factor * reading)
        return (factor == 1 ? reading : factor * reading, learned)
    }

    /// Forgets the windows (another sensor); the factor too when `forgetFactor`.
    public mutating func restart(forgetFactor: Bool) {
        windowCount = 0
        previousMean = nil
        if forgetFactor {
            factor = 1
            measurement = nil
        }
    }

    private mutating func observe(time: Double, reading: Vector3) -> Measurement? {
        let magnitude = reading.magnitude
        guard reading.isFinite, magnitude > 0 else {
            restart(forgetFactor: false)  // zeros and NaN break any stillness
            return nil
        }
        if windowCount == 0 || time < windowStart {
            windowStart = time
            windowSum = reading
            windowLengthSum = magnitude
            windowCount = 1
            first = reading
            firstMagnitude = magnitude
            isStill = true
            return nil
        }
        windowSum = windowSum + reading
        windowLengthSum += magnitude
        windowCount += 1
        if isStill,
            abs(magnitude - firstMagnitude) > stillMagnitudeSpread * firstMagnitude
                || reading.dot(first) < cosStillSpread * magnitude * firstMagnitude
        {
            isStill = false
        }
        let duration = time - windowStart
        guard windowCount >= minimumSamples else { return nil }
        let mean = (1 / Double(windowCount)) * windowSum
        if isStill, duration >= stillSpan {
            windowCount = 0
            previousMean = mean
            return measured(mean.magnitude)
        }
        guard duration >= steadySpan else { return nil }
        let coherent = mean.magnitude >= steadyCoherence * windowLengthSum / Double(windowCount)
        windowCount = 0
        let previous = previousMean
        previousMean = coherent ? mean : nil
        guard coherent, let previous else { return nil }
        let meanMagnitude = mean.magnitude, previousMagnitude = previous.magnitude
        guard abs(meanMagnitude - previousMagnitude) <= steadyMagnitudeSpread * previousMagnitude,
            mean.dot(previous) >= cosSteadySpread * meanMagnitude * previousMagnitude
        else { return nil }
        return measured((meanMagnitude + previousMagnitude) / 2)
    }

    /// A measurement of gravity's length in the rescaled readings: a new factor when it is off.
    private mutating func measured(_ length: Double) -> Measurement? {
        guard abs(length - gravity) > tolerance * gravity else { return nil }
        let measuredRaw = length / factor
        factor = gravity / measuredRaw
        previousMean = nil  // measured on the old factor
        let result = Measurement(measuredGravity: measuredRaw, factor: factor)
        measurement = result
        return result
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
