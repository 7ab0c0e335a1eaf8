import OrientationCore
import SensorCore
import NIOConcurrencyHelpers

/// The detection pipeline, run on the sensor's own thread for every sample and shared with the
/// hub's event loop, which reconfigures it and advances it when the sensor falls silent.
///
/// Why here and not on the loop: a sample almost never changes the orientation, so deciding where
/// the sample arrives leaves the loop asleep (one thread wake-up per sample instead of three,
/// measured in docs/benchmarks.md). The lock is uncontended except on those rare loop calls.
final class DetectionStage: Sendable {
    /// A lock threads share, so a pthread one (docs/architecture.md, "one lock rule"): on Linux
    /// Synchronization.Mutex waits on a futex ThreadSanitizer cannot see, so every access under it
    /// would be reported as a race (`make soak` runs the integration tests on a ThreadSanitizer build).
    private let pipeline: NIOLockedValueBox<Pipeline>
    /// The pace's settings (nil: read at the rate always) and where its decisions go: the source's
    /// read interval, set from here on the sensor's thread.
    private let paceSettings: SamplingPace.Settings?
    private let readPace: ReadPace?
    /// Switches a gyroscope of its own on and off (``GyroscopeSource``): on while the device moves
    /// or motion is streamed, off at rest (docs/sensors.md, "Gyroscope").
    private let gyroscopeSwitch: (@Sendable (Bool) -> Void)?
    /// A gyroscope of its own's matrix, last rate in the display frame and the time since the one
    /// before; the accelerometer's samples take it while it is fresh (``freshGyroscopeRate(at:)``).
    /// Whether it gives rates (found, or read again, and not since removed or failing).
    private let gyroscope = NIOLockedValueBox<
        (matrix: MountMatrix, latest: (time: Double, rate: Vector3)?, givesRates: Bool, period: Double?)
    >((.identity, nil, false, nil))
    /// Two reads at the sampling rate: how old a gyroscope's rate may be at the least.
    private let gyroscopeFreshness: Double

    /// How the display sensor is read: decided here only, from the pace, the motion interrupt and
    /// any hold. The source's read pace gets its ``interval``; the state tells clients its
    /// ``restRate`` (the hub decides nothing of it).
    enum ReadRate: Equatable, Sendable {
        /// At the sampling rate: the device moves, or something holds it fast.
        case sampling
        /// Polled at a rest rate: the held one while the device sways in a hand, else the lying one
        /// (``SamplingPace/Pace``).
        case rest(hertz: Double, held: Bool)
        /// On the motion interrupt, with a check read every ``MotionEvents/checkInterval``.
        case motionEvents

        /// Seconds between reads, for the source's ``ReadPace`` (nil: the sampling rate).
        var interval: Double? {
            switch self {
            case .sampling: nil
            case .rest(let hertz, _): 1 / max(hertz, 1e-3)
            case .motionEvents: MotionEvents.checkInterval
            }
        }

        /// The rate the state names while the device rests (nil: the sampling rate).
        var restRate: Double? {
            switch self {
            case .sampling: nil
            case .rest(let hertz, _): hertz
            case .motionEvents: 1 / MotionEvents.checkInterval
            }
        }
    }

    /// What one event decided: a device-orientation change, a new screen tilt (for D-Bus's
    /// `AccelerometerTilt`), a new gravity scale learned at rest, any or none.
    struct Detection: Equatable {
        var change: OrientationChange?
        var tilt: ScreenTilt?
        var gravity: GravityScaleLearner.Measurement?
        /// The sensor is now read at this rate.
        var readRate: ReadRate?
        /// After a sample: when the orientation becomes unknown if no other sample comes.
        var silenceDeadline: Double?
        /// The sample's motion, while motion is streamed (``streamMotion(_:)``).
        var motion: MotionSample?
        /// The gyroscope's verdict, when this sample changed it.
        var gyroscope: GyroscopeCheck.Verdict?
        /// The system slept this long since the sample before, and nobody said so (logind would
        /// have, through ``resumes(at:)``): the detector has started afresh; the hub reads the
        /// sensors afresh too.
        var sleptUnannounced: Double?

        /// Whether the hub needs to hear of it.
        var isNews: Bool {
            change != nil || tilt != nil || gravity != nil || readRate != nil || motion != nil || gyroscope != nil
                || sleptUnannounced != nil
        }
    }

    /// What the lock guards.
    private struct Pipeline {
        var orientation: OrientationPipeline
        var tilt = TiltClassifier()
        var sensor: String?
        var pace: SamplingPace?
        var onMotionEvents = false
        /// Something besides the orientation needs every reading (``holdFast(_:)``).
        var heldFast = false
        /// While motion is streamed (``streamMotion(_:)``): every reading's motion, and every reading.
        var motion: MotionEstimator?
        /// Sampling was started and not stopped (``samplingStarts()``, ``samplingStops()``).
        var sampling = false
        /// What the read pace (an IMU's channels) and ``gyroscopeSwitch`` (a gyroscope of its own)
        /// were last told.
        var gyroscopeOn = false
        var ownGyroscopeOn = false
        /// The display sensor reads a gyroscope in its own device (an IMU): its description says so.
        var readsGyroscope = false
        /// A gyroscope of its own gives rates (found, or read again, and not since removed or failing).
        var ownGyroscope = false
        /// The rate the `motion` topic's subscribers want (``streamMotion(hertz:)``), nil: none.
        var motionHertz: Double?
        /// The rate last asked of the source (``wantFastReads(_:)``), nil: its sampling rate.
        var fastHertz: Double?

        /// Sleeps the system took, noticed by the clock (``SuspendNotice``).
        var suspendNotice: SuspendNotice
        /// After a resume: readings timed before it are from before the sleep (a buffer's kernel
        /// FIFO may still hold them) and prove nothing of the pose now.
        var freshAfter = -Double.infinity

        var needsEveryReading: Bool { heldFast || motion != nil }

        /// A gyroscope runs (its own, or an IMU's channels) while the device moves or motion is
        /// streamed; not merely because the display is read at its sampling rate for a hinge.
        var gyroscopeWanted: Bool { motion != nil || pace.map { !$0.pace.isRest } ?? true }
    }

    /// The time the system has spent suspended (``MonotonicClock/suspendedSoFar()``; a test's own).
    private let suspendedSoFar: @Sendable () -> Double

    init(
        configuration: DetectorConfiguration, pace: SamplingPace.Settings? = nil, readPace: ReadPace? = nil,
        gyroscopeSwitch: (@Sendable (Bool) -> Void)? = nil,
        suspendedSoFar: @escaping @Sendable () -> Double = MonotonicClock.suspendedSoFar
    ) {
        self.suspendedSoFar = suspendedSoFar
        paceSettings = readPace == nil ? nil : pace
        self.readPace = readPace
        self.gyroscopeSwitch = gyroscopeSwitch
        gyroscopeFreshness = 2 / (pace?.fastRate ?? SamplingPace.Settings().fastRate)
        pipeline = NIOLockedValueBox(
            Pipeline(
                orientation: OrientationPipeline(configuration: configuration),
                pace: paceSettings.map(SamplingPace.init),
                suspendNotice: SuspendNotice(suspendedSoFar: suspendedSoFar())))
    }

    /// Applies one sensor event: a sample may change the device orientation and the tilt; a sensor
    /// that becomes available brings its mount matrix; a lost or ended sensor starts detection
    /// afresh (the hub then reports the orientation unknown).
    func observe(_ event: SensorEvent) -> Detection {
        pipeline.withLockedValue { pipeline in
            switch event {
            case .sample(let sample):
                var slept: Double?
                if let seconds = pipeline.suspendNotice.look(suspendedSoFar: suspendedSoFar()) {
                    slept = seconds
                    pipeline.orientation.startAfresh(at: sample.time)
                    pipeline.freshAfter = sample.time
                }
                guard sample.time >= pipeline.freshAfter else { return Detection() }
                if pipeline.onMotionEvents || (pipeline.pace?.pace.isRest == true && !pipeline.needsEveryReading),
                    let fast = pipeline.pace?.settings.fastRate
                {
                    // Read at rest (polled slowly, or no interrupt since): the last reading stood
                    // until just before this one as far as anything read shows, so this reading gets
                    // one reading's weight in the low-pass, not the whole pause's (a flick's far pose
                    // read after a rest would pull the filter half way at once: detection-log.md §17).
                    // PacedReplay does the same.
                    pipeline.orientation.hold(until: sample.time - 1 / fast)
                }
                let before = pipeline.orientation.gravityScale.factor
                let verdict = pipeline.orientation.detector.gyroscopeVerdict
                let ownRate =
                    sample.rotationRate == nil && gyroscopeSwitch != nil ? freshGyroscopeRate(at: sample.time) : nil
                let change = pipeline.orientation.process(
                    time: sample.time, reading: sample.reading, rotationRate: sample.rotationRate,
                    displayRotationRate: ownRate)
                let scale = pipeline.orientation.gravityScale
                let display = pipeline.orientation.displayReading(sample.reading)
                let tilt = pipeline.tilt.process(display)
                // While something needs every reading the pace still says whether the device moves
                // (the gyroscope follows that), but the read rate stays the sampling rate.
                let observed = pipeline.pace?.observe(
                    display, at: sample.time, detectorSettled: pipeline.orientation.detector.isSettled)
                if observed != nil { switchGyroscope(&pipeline) }
                var pace = pipeline.needsEveryReading ? nil : observed
                if pipeline.onMotionEvents, readPace?.restsOnMotionEvents != true {
                    pace = pace ?? pipeline.pace?.pace  // the interrupt failed: the device rests on polling now
                } else if pipeline.onMotionEvents, pace?.isRest == true {
                    pace = nil  // held or lying, the interrupt serves both
                }
                var readRate: ReadRate?
                if let pace, let settings = pipeline.pace?.settings {
                    pipeline.onMotionEvents = pace.isRest && readPace?.restsOnMotionEvents == true
                    readRate =
                        !pace.isRest
                        ? .sampling
                        : pipeline.onMotionEvents
                            ? .motionEvents : .rest(hertz: settings.rate(pace), held: pace == .held)
                    readPace?.set(readRate?.interval)
                    switchGyroscope(&pipeline)
                }
                wantFastReads(&pipeline)
                // The detector's own estimate of this sample (none for a sample it dropped).
                let estimate = pipeline.orientation.detector.estimate.flatMap { $0.time == sample.time ? $0 : nil }
                let motion = estimate.flatMap { pipeline.motion?.process(reading: display, estimate: $0) }
                return Detection(
                    change: change, tilt: tilt, gravity: scale.factor != before ? scale.measurement : nil,
                    readRate: readRate, silenceDeadline: Self.silenceDeadline(pipeline), motion: motion,
                    gyroscope: pipeline.orientation.detector.gyroscopeVerdict != verdict
                        ? pipeline.orientation.detector.gyroscopeVerdict : nil, sleptUnannounced: slept)
            case .available(let description):
                pipeline.readsGyroscope = description.readsGyroscope
                pipeline.orientation.mountMatrix = description.mountMatrix
                if pipeline.sensor != description.identifier {
                    pipeline.orientation.forgetGravityScale()
                    // Another sensor: the motion stream's attitude starts afresh.
                    if pipeline.motion != nil { pipeline.motion = MotionEstimator() }
                }
                pipeline.sensor = description.identifier
                switchGyroscope(&pipeline)
            case .unavailable, .ended:
                pipeline = Pipeline(
                    orientation: OrientationPipeline(
                        mountMatrix: pipeline.orientation.mountMatrix,
                        configuration: pipeline.orientation.detector.configuration),
                    pace: paceSettings.map(SamplingPace.init), heldFast: pipeline.heldFast,
                    motion: pipeline.motion.map { _ in MotionEstimator() }, sampling: pipeline.sampling,
                    gyroscopeOn: pipeline.gyroscopeOn, ownGyroscopeOn: pipeline.ownGyroscopeOn,
                    ownGyroscope: pipeline.ownGyroscope,
                    motionHertz: pipeline.motionHertz, fastHertz: pipeline.fastHertz,
                    suspendNotice: pipeline.suspendNotice, freshAfter: pipeline.freshAfter)
                switchGyroscope(&pipeline)
                wantFastReads(&pipeline)
                readPace?.set(nil)
            case .fault(let fault) where fault.kind == .stuck || fault.kind == .axisStuck:
                // The gravity learner may have measured the frozen readings' length as gravity.
                pipeline.orientation.forgetGravityScale()
            case .fault, .recovered, .note:
                break
            }
            return Detection()
        }
    }

    /// The gravity learner's factor in force (1 while the scale is trusted).
    var gravityScaleFactor: Double { pipeline.withLockedValue { $0.orientation.gravityScale.factor } }

    /// New detector parameters: detection starts afresh with the same mount matrix.
    func restart(configuration: DetectorConfiguration) {
        pipeline.withLockedValue {
            $0.orientation = OrientationPipeline(mountMatrix: $0.orientation.mountMatrix, configuration: configuration)
            $0.pace = paceSettings.map(SamplingPace.init)
            $0.onMotionEvents = false
            // Fast again: the gyroscope runs as the pace says (a change of the pace switches it,
            // and this one is no change the samples would show).
            switchGyroscope(&$0)
            wantFastReads(&$0)
        }
        readPace?.set(nil)
    }

    /// Sampling starts afresh (a claim after none): fast until the device is seen at rest again.
    func samplingStarts() {
        pipeline.withLockedValue {
            $0.pace = paceSettings.map(SamplingPace.init)
            $0.onMotionEvents = false
            $0.sampling = true
            switchGyroscope(&$0)
        }
        readPace?.set(nil)
    }

    /// The system is about to sleep (logind said so): sampling stops as it does without claims.
    func sleeps() {
        samplingStops()
    }

    /// The system resumed at `time` (logind said so, or the hub noticed it): the device may have
    /// turned while nothing was read, so the detector starts afresh keeping what it showed
    /// (``OrientationDetector/startAfresh(at:)``), readings from before `time` are dropped, and
    /// sampling starts fast. Returns the sleep's length when the clock shows one not yet noticed.
    @discardableResult
    func resumes(at time: Double) -> Double? {
        let slept = pipeline.withLockedValue {
            let slept = $0.suspendNotice.look(suspendedSoFar: suspendedSoFar())
            $0.orientation.startAfresh(at: time)
            $0.freshAfter = time
            return slept
        }
        samplingStarts()
        return slept
    }

    /// Whether the system slept since the last look (the silence alarm asks before it lets silence
    /// make the orientation unknown: a freeze and thaw for a sleep nobody announced is no silence).
    func lookForSleep() -> Double? {
        pipeline.withLockedValue { $0.suspendNotice.look(suspendedSoFar: suspendedSoFar()) }
    }

    /// Sampling stopped (no claim left): a gyroscope of its own is switched off too.
    func samplingStops() {
        pipeline.withLockedValue {
            $0.sampling = false
            switchGyroscope(&$0)
        }
    }

    /// An IMU's gyroscope channels, and a gyroscope of its own, are on exactly while sampling and
    /// ``Pipeline/gyroscopeWanted``: the device moves, or motion is streamed. A convertible's hinge
    /// holds the display at its sampling rate at rest, but not the gyroscope. A gyroscope of its own
    /// stays off beside an IMU's: the samples take the IMU's rates, so its draw would buy nothing.
    private func switchGyroscope(_ pipeline: inout Pipeline) {
        // Read with the accelerometer: none while there is none.
        let on = pipeline.sampling && pipeline.sensor != nil && pipeline.gyroscopeWanted
        if on != pipeline.gyroscopeOn {
            pipeline.gyroscopeOn = on
            readPace?.setGyroscopeWanted(on)
        }
        let ownOn = on && !pipeline.readsGyroscope
        if ownOn != pipeline.ownGyroscopeOn {
            pipeline.ownGyroscopeOn = ownOn
            gyroscopeSwitch?(ownOn)
        }
    }

    /// What a gyroscope of its own said (on its thread): its matrix, its rates, or that it is gone.
    /// Returns whether it gives rates, when that changed (a rate after it could not be read: the
    /// hub says it works again).
    @discardableResult
    func observe(_ event: GyroscopeEvent) -> Bool? {
        let givesRates = gyroscope.withLockedValue { gyroscope -> Bool? in
            let before = gyroscope.givesRates
            switch event {
            case .available(_, let matrix, _): gyroscope = (matrix, nil, true, nil)
            case .rate(let time, let rate):
                gyroscope.period = gyroscope.latest.map { time - $0.time }
                gyroscope.latest = (time, gyroscope.matrix.applyToRotation(rate))
                gyroscope.givesRates = true
            case .unavailable, .lost: gyroscope = (gyroscope.matrix, nil, false, nil)
            }
            return gyroscope.givesRates != before ? gyroscope.givesRates : nil
        }
        // Taken after the gyroscope's lock, never inside it: a sample takes the pipeline's first.
        if let givesRates {
            pipeline.withLockedValue {
                $0.ownGyroscope = givesRates
                wantFastReads(&$0)
            }
        }
        return givesRates
    }

    /// Asks the source to read faster than its sampling rate while the device moves, for whatever
    /// wants it: the `motion` topic's subscribers, and a working gyroscope beside the accelerometer
    /// while it runs (``SamplingPace/Settings/gyroscopeRate``: a hand's quickest turn integrates
    /// only from about 50 Hz). At rest the device is asked for its sampling rate again, so its own
    /// draw at rest is unchanged. A gyroscope judged failed, or none, leaves the sampling rate:
    /// detection is then exactly what it is without one. Not while pacing is off (a rest rate of 0
    /// reads at the configured rate always).
    private func wantFastReads(_ pipeline: inout Pipeline) {
        guard let readPace else { return }
        let gyroscopeRuns =
            (pipeline.readsGyroscope || pipeline.ownGyroscope)
            && pipeline.orientation.detector.gyroscopeVerdict == .working
            && pipeline.gyroscopeWanted
        let wanted = max(pipeline.motionHertz ?? 0, gyroscopeRuns ? paceSettings?.gyroscopeRate ?? 0 : 0)
        let hertz = wanted > 0 ? wanted : nil
        guard hertz != pipeline.fastHertz else { return }
        pipeline.fastHertz = hertz
        readPace.setFast(hertz.map { 1 / $0 })
    }

    /// The gyroscope of its own's last rate (display frame) when it is fresh at `time`: no older
    /// than two reads at the sampling rate, or than two of its own periods when it reports slower (an
    /// HID hub's 10 Hz, whose reports fall anywhere between the accelerometer's: were they taken
    /// only within 80 ms, a sample in five would go without a rate and restart the fusion). Periods
    /// longer than the gyroscope check's largest gap are not a rate's but a pause's.
    private func freshGyroscopeRate(at time: Double) -> Vector3? {
        guard let (latest, period) = gyroscope.withLockedValue({ state in state.latest.map { ($0, state.period) } })
        else { return nil }
        let ownPeriod = period.flatMap { $0 > 0 && $0 <= GyroscopeCheck.Settings().maximumGap ? $0 : nil } ?? 0
        guard abs(time - latest.time) <= max(gyroscopeFreshness, 2 * ownPeriod) else { return nil }
        return latest.rate
    }

    /// While `hold` is true the sensor is read at the sampling rate whether the device rests or not:
    /// a convertible's hinge angle compares this sensor's readings with the base's, and a reading
    /// older than ``HingeDetector/Configuration/staleAfter`` makes the angle unknown, which a rest
    /// pace of 1.8 Hz or the motion interrupt's 5 s would do between reads. Returns the new rate
    /// when the pace was slow and is fast now (the hub tells clients the rate in force).
    @discardableResult
    func holdFast(_ hold: Bool) -> ReadRate? {
        needEveryReading { $0.heldFast = hold }
    }

    /// While `hertz` is set, every reading's motion is computed (``Detection/motion``) and the sensor
    /// is read at its sampling rate, or at `hertz` when that is faster (the acquisition asks the
    /// device for it): the `motion` topic has subscribers. Returns the new rate when the pace was
    /// slow and is fast now.
    @discardableResult
    func streamMotion(hertz: Double?) -> ReadRate? {
        needEveryReading { pipeline in
            if (hertz != nil) != (pipeline.motion != nil) { pipeline.motion = hertz != nil ? MotionEstimator() : nil }
            pipeline.motionHertz = hertz
            wantFastReads(&pipeline)
        }
    }

    /// Applies `change` to what needs every reading; when that begins, the pace starts fast again.
    private func needEveryReading(_ change: (inout Pipeline) -> Void) -> ReadRate? {
        let (wasSlow, needs) = pipeline.withLockedValue { pipeline -> (Bool, Bool) in
            let needed = pipeline.needsEveryReading
            change(&pipeline)
            defer { switchGyroscope(&pipeline) }
            guard pipeline.needsEveryReading, !needed, let pace = pipeline.pace else {
                // Ended: the pace starts fast again, as it began, and decides the rest rate anew.
                if needed, !pipeline.needsEveryReading, let pace = pipeline.pace {
                    pipeline.pace = SamplingPace(settings: pace.settings)
                }
                return (false, pipeline.needsEveryReading)
            }
            pipeline.pace = SamplingPace(settings: pace.settings)
            pipeline.onMotionEvents = false
            return (pace.pace.isRest, true)
        }
        if needs { readPace?.set(nil) }
        return wasSlow ? .sampling : nil
    }

    /// The device rests on the sensor's motion interrupt: it is read only on motion and every
    /// ``MotionEvents/checkInterval``.
    var restsOnMotionEvents: Bool {
        pipeline.withLockedValue { $0.onMotionEvents }
    }

    /// When the orientation becomes unknown without a sample before (nil: nothing to forget).
    var silenceDeadline: Double? {
        pipeline.withLockedValue { Self.silenceDeadline($0) }
    }

    /// The detector's deadline, later by the check interval while the device rests on the motion
    /// interrupt (a reading is due only then).
    private static func silenceDeadline(_ pipeline: Pipeline) -> Double? {
        pipeline.orientation.detector.silenceDeadline.map {
            $0 + (pipeline.onMotionEvents ? MotionEvents.checkInterval : 0)
        }
    }

    /// No sample since the detector's timeout: the orientation may become unknown.
    func advance(to time: Double) -> OrientationChange? {
        pipeline.withLockedValue {
            $0.orientation.advance(to: time - ($0.onMotionEvents ? MotionEvents.checkInterval : 0))
        }
    }
}
