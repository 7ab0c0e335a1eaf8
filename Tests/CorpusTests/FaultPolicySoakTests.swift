import CorpusScoring
import OrientationCore
import SensorCore
import SensorSimulation
import Testing

/// The fault-policy soak (issue 36): working sensors, played for ten simulated minutes or more each
/// (the still device for an hour), through every policy that can stop a sensor or drop readings. No
/// fault may be declared, and every orientation change the pipeline makes without the policies must
/// be made with them, at the same time. `make bench` plays the same for longer (docs/benchmarks.md).
@Suite("Fault policies on working sensors: the soak")
struct FaultPolicySoakTests {
    @Test("a generated session: no fault, the same orientation changes", arguments: WorkingSensorSession.Scenario.soak)
    func session(_ scenario: WorkingSensorSession.Scenario) {
        let session = WorkingSensorSession(scenario)
        let outcome = FaultPolicySoak.run(
            name: scenario.description, readings: session, scaleText: session.part.scaleText)
        #expect(outcome.simulatedSeconds >= (scenario == .still ? 3599 : 599))
        #expect(outcome.faults.isEmpty, "\(outcome.faults.prefix(3))")
        #expect(outcome.changesWith == outcome.changesWithout, "\(outcome.firstDifference ?? "")")
        // The session does what it says: a turn every 1.5 s is seen (the first decision aside), a
        // still device decides once, the others are turned now and then.
        let decided = outcome.changesWithout.count
        switch scenario {
        case .turnsInPlane: #expect(decided >= 395, "of 400 turns")
        case .still: #expect(outcome.changesWithout.map(\.to) == [.faceUp])
        default: #expect(decided >= 10)
        }
    }

    @Test("every public corpus trace, read as a 16-bit part: no fault, the same orientation changes")
    func corpus() throws {
        #expect(CorpusFixtures.traces.count == CorpusFixtures.expectedTraceCount)
        let step = standardGravity / 16384  // 16 bits over ±2 g
        for trace in CorpusFixtures.traces {
            let readings = trace.samples.map { sample in
                SimulatedReading(
                    time: sample.time,
                    raw: Vector3(
                        (sample.reading.x / step).rounded(), (sample.reading.y / step).rounded(),
                        (sample.reading.z / step).rounded()))
            }
            let outcome = FaultPolicySoak.run(
                name: trace.name, readings: readings, scaleText: "\(step)", mountMatrix: trace.mountMatrix)
            #expect(outcome.faults.isEmpty, "\(trace.name): \(outcome.faults.prefix(3))")
            #expect(outcome.changesWith == outcome.changesWithout, "\(trace.name): \(outcome.firstDifference ?? "")")
            #expect(!outcome.changesWithout.isEmpty, "\(trace.name) decides something")
        }
    }

    @Test("the soak can fail: the same turns with a z axis that freezes while the device lies back are caught")
    func brokenSensorIsCaught() {
        // A 12-bit part, held and put down in every pose; from the fifth minute on its z axis reads
        // what it read then.
        var frozenZ: Double?
        let broken = WorkingSensorSession(.quantised(bits: 12)).map { reading -> SimulatedReading in
            guard reading.time >= 300 else { return reading }
            frozenZ = frozenZ ?? reading.raw.z
            var raw = reading.raw
            raw.z = frozenZ!
            return SimulatedReading(time: reading.time, raw: raw)
        }
        let part = WorkingSensorSession(.quantised(bits: 12)).part
        let outcome = FaultPolicySoak.run(name: "frozen z", readings: broken, scaleText: part.scaleText)
        #expect(outcome.faults.map(\.kind).contains(.axisStuck), "\(outcome.faults)")
        #expect(!outcome.policiesChangedNothing)
    }
}

/// The gyroscope's fault rules (``GyroscopeCheck``, issue 50) on working IMUs: the same sessions,
/// with a gyroscope that reads the same turns (bias 0.5–3 °/s, noise, 16-bit steps), played through
/// the fused pipeline. A frozen or an at-odds verdict would drop a working gyroscope.
@Suite("Gyroscope fault rules on working IMUs: the soak")
struct GyroscopeSoakTests {
    /// Plays `readings` through the fused pipeline: the first failed verdict (time and words), and the
    /// orientation changes made.
    static func play(
        _ readings: some Sequence<SimulatedReading>, countStep: Double
    ) -> (
        failure: String?, changes: Int
    ) {
        var pipeline = OrientationPipeline(mountMatrix: .identity)
        var changes = 0
        for reading in readings {
            if pipeline.process(
                time: reading.time, reading: countStep * reading.raw, rotationRate: reading.rotationRate)
                != nil
            {
                changes += 1
            }
            if case .failed(let words) = pipeline.detector.gyroscopeVerdict {
                return ("at \(reading.time) s: \(words)", changes)
            }
        }
        return (nil, changes)
    }

    @Test("a working gyroscope is never judged failed", arguments: WorkingSensorSession.Scenario.soak)
    func session(_ scenario: WorkingSensorSession.Scenario) throws {
        let session = WorkingSensorSession(scenario, gyroscope: SimulatedGyroscope())
        let bias = try #require(session.gyroscope?.bias.magnitude)
        #expect(bias >= 0.5 * .pi / 180 && bias <= 3 * .pi / 180)
        let (failure, changes) = Self.play(session, countStep: session.part.countStep)
        #expect(failure == nil, "\(failure ?? "")")
        switch scenario {
        case .turnsInPlane: #expect(changes >= 395, "of 400 turns")
        case .still: #expect(changes == 1)
        default: #expect(changes >= 10)
        }
    }

    @Test("the soak can fail: a gyroscope whose turns run backward (a wrong mount matrix) is judged at odds")
    func backwardGyroscopeIsCaught() {
        let session = WorkingSensorSession(.quantised(bits: 12), gyroscope: SimulatedGyroscope())
        let backward = session.map { reading in
            SimulatedReading(time: reading.time, raw: reading.raw, rotationRate: reading.rotationRate.map { -1 * $0 })
        }
        let (failure, _) = Self.play(backward, countStep: session.part.countStep)
        #expect(failure?.contains("disagreed") == true, "\(failure ?? "no failure")")
    }
}

extension WorkingSensorSession.Scenario: CustomTestStringConvertible {
    public var testDescription: String { description }
}
