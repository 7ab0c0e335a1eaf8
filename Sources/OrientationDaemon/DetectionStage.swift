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
    /// orientd's locks are pthread mutexes (NIOLockedValueBox), not Synchronization.Mutex: on Linux
    /// that one waits on a futex ThreadSanitizer cannot see, so every access under it is reported as
    /// a race (with its integration tests run against a ThreadSanitizer build, `make soak`).
    private let pipeline: NIOLockedValueBox<(orientation: OrientationPipeline, tilt: TiltClassifier, sensor: String?, pace: SamplingPace?)>
    /// The pace's settings (nil: read at the rate always) and where its decisions go: the source's
    /// read interval, set from here on the sensor's thread.
    private let paceSettings: SamplingPace.Settings?
    private let readPace: ReadPace?

    /// What one event decided: a device-orientation change, a new screen tilt (for D-Bus's
    /// `AccelerometerTilt`), a new gravity scale learned at rest, any or none.
    struct Detection: Equatable {
        var change: OrientationChange?
        var tilt: ScreenTilt?
        var gravity: GravityScaleLearner.Measurement?
        /// The sensor is now read at this pace.
        var pace: SamplingPace.Pace?
        /// After a sample: when the orientation becomes unknown if no other sample comes.
        var silenceDeadline: Double?

        /// Whether the hub needs to hear of it.
        var isNews: Bool { change != nil || tilt != nil || gravity != nil || pace != nil }
    }

    init(configuration: DetectorConfiguration, pace: SamplingPace.Settings? = nil, readPace: ReadPace? = nil) {
        paceSettings = readPace == nil ? nil : pace
        self.readPace = readPace
        pipeline = NIOLockedValueBox((OrientationPipeline(configuration: configuration), TiltClassifier(), nil, paceSettings.map(SamplingPace.init)))
    }

    /// Applies one sensor event: a sample may change the device orientation and the tilt; a sensor
    /// that becomes available brings its mount matrix; a lost or ended sensor starts detection
    /// afresh (the hub then reports the orientation unknown).
    func observe(_ event: SensorEvent) -> Detection {
        pipeline.withLockedValue { pipeline in
            switch event {
            case .sample(let sample):
                let before = pipeline.orientation.gravityScale.factor
                let change = pipeline.orientation.process(time: sample.time, reading: sample.reading)
                let scale = pipeline.orientation.gravityScale
                let display = pipeline.orientation.mountMatrix.apply(scale.factor * sample.reading)
                let tilt = pipeline.tilt.process(display)
                let pace = pipeline.pace?.observe(display, at: sample.time, detectorSettled: pipeline.orientation.detector.isSettled)
                if let pace { readPace?.set(pace == .rest ? pipeline.pace?.interval : nil) }
                return Detection(change: change, tilt: tilt, gravity: scale.factor != before ? scale.measurement : nil, pace: pace,
                                 silenceDeadline: pipeline.orientation.detector.silenceDeadline)
            case .available(let description):
                pipeline.orientation.mountMatrix = description.mountMatrix
                if pipeline.sensor != description.identifier { pipeline.orientation.forgetGravityScale() }
                pipeline.sensor = description.identifier
            case .unavailable, .ended:
                pipeline = (OrientationPipeline(mountMatrix: pipeline.orientation.mountMatrix,
                                                configuration: pipeline.orientation.detector.configuration), TiltClassifier(), nil,
                            paceSettings.map(SamplingPace.init))
                readPace?.set(nil)
            case .fault, .recovered:
                break
            }
            return Detection()
        }
    }

    /// New detector parameters: detection starts afresh with the same mount matrix.
    func restart(configuration: DetectorConfiguration) {
        pipeline.withLockedValue {
            $0.orientation = OrientationPipeline(mountMatrix: $0.orientation.mountMatrix, configuration: configuration)
            $0.pace = paceSettings.map(SamplingPace.init)
        }
        readPace?.set(nil)
    }

    /// Sampling starts afresh (a claim after none): fast until the device is seen at rest again.
    func samplingStarts() {
        pipeline.withLockedValue { $0.pace = paceSettings.map(SamplingPace.init) }
        readPace?.set(nil)
    }

    /// When the orientation becomes unknown without a sample before (nil: nothing to forget).
    var silenceDeadline: Double? {
        pipeline.withLockedValue { $0.orientation.detector.silenceDeadline }
    }

    /// No sample since the detector's timeout: the orientation may become unknown.
    func advance(to time: Double) -> OrientationChange? {
        pipeline.withLockedValue { $0.orientation.advance(to: time) }
    }
}
