import OrientationCore
import SensorCore

/// Plays a working sensor's readings through every fault policy the daemon applies and, beside it,
/// through the detection pipeline alone, and says whether the policies changed anything.
///
/// The policies, in the order a reading meets them: the sysfs text of each raw value must parse back
/// to it (`bad-value`), the `scale` text must be a positive number (`bad-scale`), then
/// ``RawAccelerometerReadings`` (`stuck`, `axis-stuck`, `no-gravity`), and the silence timeout (the
/// daemon's alarm, which lets time pass without samples: ``OrientationPipeline/advance(to:)`` after
/// every reading). A working sensor must come through with no fault declared and with exactly the
/// orientation changes the pipeline makes without the policies.
public enum FaultPolicySoak {
    /// What one session did.
    public struct Outcome: Sendable {
        public var name: String
        public var simulatedSeconds: Double
        public var readings: Int
        /// Every fault a policy declared (none, for a working sensor).
        public var faults: [SensorFault] = []
        /// Orientation changes without the policies, and with them.
        public var changesWithout: [OrientationChange] = []
        public var changesWith: [OrientationChange] = []

        /// No fault, and the same changes at the same times.
        public var policiesChangedNothing: Bool { faults.isEmpty && changesWith == changesWithout }

        /// The first difference between the two lists of changes, for a failure message.
        public var firstDifference: String? {
            for (index, (without, with)) in zip(changesWithout, changesWith).enumerated() where without != with {
                return
                    """
                    change \(index): without the policies \(without.to) at \(without.time) s, with them \
                    \(with.to) at \(with.time) s
                    """
            }
            guard changesWith.count != changesWithout.count else { return nil }
            return "\(changesWithout.count) changes without the policies, \(changesWith.count) with them"
        }
    }

    /// Plays `readings` (raw counts) of a part whose `scale` attribute reads `scaleText`.
    public static func run<Readings: Sequence>(
        name: String, readings: Readings, scaleText: String, mountMatrix: MountMatrix = .identity,
        configuration: DetectorConfiguration = DetectorConfiguration()
    ) -> Outcome
    where Readings.Element == SimulatedReading {
        var outcome = Outcome(name: name, simulatedSeconds: 0, readings: 0)
        let device = "soak:\(name)"
        guard let scale = AttributeNumber.positiveScale(scaleText) else {
            outcome.faults.append(
                SensorFault(kind: .badScale, device: device, detail: "scale \"\(scaleText)\" is not a positive number"))
            return outcome
        }
        let scales = [scale, scale, scale]
        var without = OrientationPipeline(mountMatrix: mountMatrix, configuration: configuration)
        var with = without
        var checks = RawAccelerometerReadings(device: device)
        var tracker = FaultTracker()
        var first: Double?
        for reading in readings {
            first = first ?? reading.time
            outcome.readings += 1
            outcome.simulatedSeconds = reading.time - (first ?? 0)
            let raw = reading.raw
            if let change = without.process(time: reading.time, reading: scale * raw) {
                outcome.changesWithout.append(change)
            }
            if let problem = textProblem(raw) {
                outcome.faults.append(SensorFault(kind: .badValue, device: device, detail: problem))
                continue
            }
            checks.deliver(raw: raw, at: reading.time, scale: scales, offset: [0, 0, 0], faults: &tracker) { event in
                switch event {
                case .sample(let sample):
                    if let change = with.process(time: sample.time, reading: sample.reading) {
                        outcome.changesWith.append(change)
                    }
                case .fault(let fault):
                    outcome.faults.append(fault)
                default:
                    break
                }
            }
            if let change = with.advance(to: reading.time) { outcome.changesWith.append(change) }
        }
        return outcome
    }

    /// The sysfs text a driver writes for each axis (`-1000\n`), read back as the daemon reads it.
    private static func textProblem(_ raw: Vector3) -> String? {
        for value in [raw.x, raw.y, raw.z] {
            let text = "\(Int(value))\n"
            let parsed =
                text.utf8.withContiguousStorageIfAvailable { AttributeNumber.parse(UnsafeRawBufferPointer($0)) } ?? nil
            if parsed != value {
                return "raw \"\(text.dropLast())\" read back as \(parsed.map { "\($0)" } ?? "not a number")"
            }
        }
        return nil
    }
}
