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
    private let pipeline: NIOLockedValueBox<(orientation: OrientationPipeline, tilt: TiltClassifier, sensor: String?)>

    /// What one event decided: a device-orientation change, a new screen tilt (for D-Bus's
    /// `AccelerometerTilt`), a new gravity scale learned at rest, any or none.
    struct Detection: Equatable {
        var change: OrientationChange?
        var tilt: ScreenTilt?
        var gravity: GravityScaleLearner.Measurement?

        /// Whether the hub needs to hear of it.
        var isNews: Bool { change != nil || tilt != nil || gravity != nil }
    }

    init(configuration: DetectorConfiguration) {
        pipeline = NIOLockedValueBox((OrientationPipeline(configuration: configuration), TiltClassifier(), nil))
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
                let tilt = pipeline.tilt.process(pipeline.orientation.mountMatrix.apply(scale.factor * sample.reading))
                return Detection(change: change, tilt: tilt, gravity: scale.factor != before ? scale.measurement : nil)
            case .available(let description):
                pipeline.orientation.mountMatrix = description.mountMatrix
                if pipeline.sensor != description.identifier { pipeline.orientation.forgetGravityScale() }
                pipeline.sensor = description.identifier
            case .unavailable, .ended:
                pipeline = (OrientationPipeline(mountMatrix: pipeline.orientation.mountMatrix,
                                                configuration: pipeline.orientation.detector.configuration), TiltClassifier(), nil)
            case .fault, .recovered:
                break
            }
            return Detection()
        }
    }

    /// New detector parameters: detection starts afresh with the same mount matrix.
    func restart(configuration: DetectorConfiguration) {
        pipeline.withLockedValue { $0.orientation = OrientationPipeline(mountMatrix: $0.orientation.mountMatrix, configuration: configuration) }
    }

    /// No sample since the detector's timeout: the orientation may become unknown.
    func advance(to time: Double) -> OrientationChange? {
        pipeline.withLockedValue { $0.orientation.advance(to: time) }
    }
}
