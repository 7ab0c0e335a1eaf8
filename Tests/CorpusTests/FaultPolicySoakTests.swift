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

extension WorkingSensorSession.Scenario: CustomTestStringConvertible {
    public var testDescription: String { description }
}
