import NIOConcurrencyHelpers
import OrientationCore
import SensorCore

/// A convertible's hinge detection, fed by both sensors' threads (each sample where it arrives, as
/// ``DetectionStage`` does for the orientation) and by the hub's loop (silence, a stopped sensor,
/// new parameters). It keeps each sensor's mount matrix, so the detector sees both in the
/// display's frame.
final class HingeStage: Sendable {
    /// What one input decided: the detector's events, and when the angle became unknown, why.
    struct Outcome: Equatable {
        var events: [HingeEvent] = []
        /// Set when the angle became unknown, for the log.
        var angleLost: AngleLoss?

        var isNews: Bool { !events.isEmpty }
    }

    /// Why the angle became unknown, and whether that is news for the log (a sensor silent or gone,
    /// once per episode) or routine (a hinge held upright, a sensor stopped with its claims).
    struct AngleLoss: Equatable {
        var reason: String
        var isNews: Bool
    }

    private struct State {
        var detector: HingeDetector
        var matrices: [SensorRole: MountMatrix] = [:]
    }

    /// A pthread lock (see ``DetectionStage``): taken by the two sensors' threads and the loop.
    private let state: NIOLockedValueBox<State>

    init(configuration: HingeConfiguration) {
        state = NIOLockedValueBox(State(detector: HingeDetector(configuration: configuration)))
    }

    /// Applies one event of the `role` sensor.
    func observe(_ event: SensorEvent, from role: SensorRole) -> Outcome {
        state.withLockedValue { state in
            switch event {
            case .sample(let sample):
                let reading = (state.matrices[role] ?? .identity).apply(sample.reading)
                let events = state.detector.process(time: sample.time, location: role.location, reading: reading)
                return Self.outcome(events, state.detector, at: sample.time)
            case .available(let description):
                state.matrices[role] = description.mountMatrix
                return Outcome()
            case .unavailable, .ended:
                return Outcome(
                    events: state.detector.forget(role.location),
                    angleLost: AngleLoss(reason: "the \(role.rawValue) sensor is gone", isNews: true))
            case .fault, .recovered, .note:
                return Outcome()
            }
        }
    }

    /// A reading of the device's own hinge-angle sensor.
    func observe(_ reading: HingeAngleReading) -> Outcome {
        state.withLockedValue { state in
            switch reading {
            case .angle(let time, let degrees):
                return Self.outcome(
                    state.detector.processMeasured(time: time, degrees: degrees), state.detector, at: time)
            case .lost(let reason):
                return Outcome(
                    events: state.detector.forgetMeasured(),
                    angleLost: AngleLoss(reason: "the hinge sensor failed (\(reason))", isNews: false))
            case .unavailable(let reason):
                return Outcome(
                    events: state.detector.forgetMeasured(),
                    angleLost: AngleLoss(reason: "no hinge sensor (\(reason))", isNews: false))
            case .available:
                return Outcome()
            }
        }
    }

    /// The hinge-angle sensor stopped sampling: the accelerometers decide until it reads again.
    func forgetMeasured() -> Outcome {
        state.withLockedValue {
            Outcome(
                events: $0.detector.forgetMeasured(),
                angleLost: AngleLoss(reason: "the hinge sensor stopped sampling", isNews: false))
        }
    }

    /// The `role` sensor stopped sampling: the angle is unknown until it reads again.
    func forget(_ role: SensorRole) -> Outcome {
        state.withLockedValue {
            Outcome(
                events: $0.detector.forget(role.location),
                angleLost: AngleLoss(reason: "the \(role.rawValue) sensor stopped sampling", isNews: false))
        }
    }

    /// The lid switch changed (nil: unreadable); it matters near 0°/360° (``HingeDetector``).
    func lidSwitch(closed: Bool?) {
        state.withLockedValue { $0.detector.lidSwitch(closed: closed) }
    }

    /// Time passed without samples (both sensors silent).
    func advance(to time: Double) -> Outcome {
        state.withLockedValue { state in Self.outcome(state.detector.advance(to: time), state.detector, at: time) }
    }

    /// New parameters: detection starts afresh (mode and angle unknown until both sensors read).
    func restart(configuration: HingeConfiguration) {
        state.withLockedValue { state in
            let lid = state.detector.lidClosed
            state.detector = HingeDetector(configuration: configuration)
            state.detector.lidSwitch(closed: lid)
        }
    }

    private static func outcome(_ events: [HingeEvent], _ detector: HingeDetector, at time: Double) -> Outcome {
        Outcome(
            events: events,
            angleLost: events.contains(.angle(nil))
                ? detector.unobservable(at: time).map { AngleLoss(reason: $0.description, isNews: $0.isSilence) } : nil)
    }
}

extension SensorRole {
    /// The hinge detector's side for this sensor.
    var location: SensorLocation { self == .base ? .base : .display }
}
