import OrientationCore
import OrientationProtocol
import Testing
@testable import OrientationDaemon
import SensorCore

/// A sleep and a resume as the hub decides them: sensors stop and start, claims and what is shown stand.
@Suite("Hub state machine: sleep and resume")
struct HubSleepTests {
    typealias Machine = HubStateMachineTests

    /// A machine with the display sensor present, claimed by one listener, showing portrait.
    private static func claimedInPortrait() throws -> (HubStateMachine, ListenerID) {
        var hub = Machine.machine()
        _ = hub.sensorAvailable(name: "iio:device0", rate: 25, at: 0)
        let listener = try Machine.connect(&hub)
        _ = try Machine.ok(&hub, .subscribe([.device, .sensor, .light]), from: listener)
        _ = hub.kindSensorAvailable(.light, name: "iio:device1", unit: .lux, at: 0)
        _ = hub.detected(SensorDecision(orientation: .portrait), at: 0.5)
        return (hub, listener)
    }

    private static func sensorEvents(_ actions: [HubAction]) -> [SensorStatus] {
        Machine.publishes(actions).compactMap {
            if case .sensor(_, let to) = $0.event.payload { to } else { nil }
        }
    }

    @Test("a sleep stops every claimed sensor reading, the display idle meanwhile; the resume reads them afresh")
    func sleepAndResume() throws {
        var (hub, _) = try Self.claimedInPortrait()
        #expect(hub.state.sensor == .active)
        let sleeping = hub.sleeps(at: 1)
        #expect(sleeping.contains(.suspendSampling([.display, .kind(.light)])))
        #expect(Self.sensorEvents(sleeping) == [.idle])
        #expect(hub.state.device == .portrait, "what is shown stands")
        #expect(hub.state.rate == nil && hub.statusLine.hasSuffix("; asleep"))
        #expect(hub.sleeps(at: 1.5).isEmpty, "idempotent")
        let resuming = hub.resumes(at: 60)
        #expect(resuming.contains(.resumeSampling([.display, .kind(.light)])))
        #expect(Self.sensorEvents(resuming) == [.active])
        #expect(hub.state.rate == 25 && !hub.statusLine.contains("asleep"))
        #expect(hub.resumes(at: 61).isEmpty, "idempotent")
        // The first decision after it publishes from what was shown: no unknown in between.
        let turned = Machine.publishes(hub.detected(SensorDecision(orientation: .landscapeLeft), at: 60.1))
        #expect(turned.map(\.event.payload).contains(.device(from: .portrait, to: .landscapeLeft)))
    }

    @Test("a claim during the sleep starts nothing until the resume; a release stops what it must")
    func claimsWhileAsleep() throws {
        var hub = Machine.machine { $0.claimLinger = 0 }
        _ = hub.sensorAvailable(name: "iio:device0", at: 0)
        let listener = try Machine.connect(&hub)
        #expect(hub.sleeps(at: 0).filter { if case .suspendSampling = $0 { true } else { false } }.isEmpty)
        let claim = try Machine.ok(&hub, .subscribe([.device]), from: listener).actions
        #expect(!claim.contains(.startSampling(.display)), "asleep: nothing is read")
        #expect(hub.state.sensor == .idle)
        #expect(hub.resumes(at: 5).contains(.resumeSampling([.display])))
        #expect(hub.state.sensor == .active)
    }

    @Test("shutting down while asleep resumes nothing")
    func shutdownWhileAsleep() throws {
        var (hub, _) = try Self.claimedInPortrait()
        _ = hub.sleeps(at: 1)
        let stops = hub.beginShutdown()
        #expect(stops.contains(.stopSampling(.display)))
        #expect(!hub.resumes(at: 2).contains { if case .resumeSampling = $0 { true } else { false } })
    }
}
