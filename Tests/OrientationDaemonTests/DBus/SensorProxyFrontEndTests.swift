import NIOConcurrencyHelpers
import NIOEmbedded
import OrientationCore
import OrientationProtocol
import SensorCore
import Testing

@testable import OrientationDaemon

/// A source that only says it is there: the tests hand the hub the events themselves (here and in
/// the socket front end's tests).
final class SilentSource: AccelerometerSource, @unchecked Sendable {
    let outlet = SensorEventOutlet()
    func start() {}
    func startSampling() {}
    func stopSampling() {}
    func shutdown() {}
}

/// net.hadess.SensorProxy's front end on a real hub (on an embedded loop), with the commands it
/// would hand the bus thread recorded.
@Suite("net.hadess.SensorProxy front end")
struct SensorProxyFrontEndTests {
    let loop = EmbeddedEventLoop()
    let hub: OrientationHub
    let frontEnd: SensorProxyFrontEnd
    let commands = NIOLockedValueBox<[SystemBusCommand]>([])

    init() {
        self.init(convertible: false)
    }

    /// A convertible's hub has a base sensor too (the hinge and the mode).
    init(convertible: Bool) {
        var configuration = DaemonConfiguration()
        configuration.socketPath = "/nonexistent/orientd.sock"
        hub = OrientationHub(
            eventLoop: loop, configuration: configuration, source: SilentSource(),
            baseSource: convertible ? SilentSource() : nil, serverName: "orientd test")
        let commands = self.commands
        frontEnd = SensorProxyFrontEnd(
            hub: hub, checksPolkit: false,
            submit: { command in
                commands.withLockedValue { $0.append(command) }
            })
        hub.sensorProxy = frontEnd
        frontEnd.start()
        hub.handle(.available(SensorDescription(identifier: "iio:device0", name: "test")))
        frontEnd.handle(.call(BusCall(id: 1, sender: ":1.7", method: .claimAccelerometer)))
        commands.withLockedValue { $0 = [] }
    }

    func signalsTo(_ name: String) -> [SensorProxyValues.Changes] {
        commands.withLockedValue { commands in
            commands.compactMap { if case .emitChanged(name, let changes) = $0 { changes } else { nil } }
        }
    }

    @Test("a sample that turns the device and changes its tilt is one PropertiesChanged with both")
    func oneSignalPerSample() {
        let sample = SensorEvent.sample(SensorSample(time: 1, reading: Vector3(-9.81, 0, 0)))
        hub.handle(
            sample,
            detection: .init(change: OrientationChange(time: 1, from: .unknown, to: .landscapeLeft), tilt: .tiltedUp))
        let signals = signalsTo(":1.7")
        #expect(signals.count == 1, "\(signals)")
        #expect(
            signals.first.map { $0.isSuperset(of: .init("AccelerometerOrientation", "AccelerometerTilt")) } == true,
            "\(signals)")
        #expect(hub.state.tilt == .tiltedUp)
    }

    @Test("a motion sample, streamed to a socket subscriber, makes the bus compute nothing; a turn does")
    func motionComputesNothing() throws {
        let app = try hub.connect(isPrivileged: false)
        _ = try hub.handle(.subscribe([.motion], motionRate: 100), from: app).get()
        let before = frontEnd.recomputations
        for step in 0..<50 {
            let time = 1 + Double(step) / 100
            let motion = MotionSample(
                time: time, gravity: Vector3(0, -9.81, 0), userAcceleration: .zero, rotationRate: .zero,
                attitude: .identity)
            hub.handle(
                .sample(SensorSample(time: time, reading: Vector3(0, -9.81, 0))), detection: .init(motion: motion))
        }
        #expect(frontEnd.recomputations == before)
        hub.handle(
            .sample(SensorSample(time: 2, reading: Vector3(-9.81, 0, 0))),
            detection: .init(change: OrientationChange(time: 2, from: .unknown, to: .landscapeLeft)))
        #expect(frontEnd.recomputations == before + 1)
        #expect(signalsTo(":1.7").count == 1)
    }

    @Test("a tilt alone is one PropertiesChanged, and the same tilt again is none")
    func tiltAlone() {
        let sample = SensorEvent.sample(SensorSample(time: 1, reading: Vector3(0, -9.81, 0)))
        hub.handle(sample, detection: .init(tilt: .vertical))
        hub.handle(sample, detection: .init(tilt: .vertical))
        #expect(signalsTo(":1.7").count == 1)
    }

    @Test(
        """
        on a convertible, a sample whose tilt changes while the hinge stage puts it in laptop mode (the \
        orientation claimants read becomes normal) is one PropertiesChanged with both
        """
    )
    func oneSignalPerConvertibleSample() {
        let test = SensorProxyFrontEndTests(convertible: true)
        let turned = SensorEvent.sample(SensorSample(time: 1, reading: Vector3(-9.81, 0, 0)))
        test.hub.handle(
            turned, detection: .init(change: OrientationChange(time: 1, from: .unknown, to: .landscapeLeft)),
            hinge: HingeStage.Outcome(events: [.angle(300), .mode(.tablet)]))
        test.commands.withLockedValue { $0 = [] }
        let folded = SensorEvent.sample(SensorSample(time: 2, reading: Vector3(-9.5, 0, -2.4)))
        test.hub.handle(
            folded, detection: .init(tilt: .tiltedUp), hinge: HingeStage.Outcome(events: [.angle(120), .mode(.laptop)]))
        let signals = test.signalsTo(":1.7")
        #expect(signals.count == 1, "\(signals)")
        #expect(
            signals.first.map { $0.isSuperset(of: .init("AccelerometerOrientation", "AccelerometerTilt")) } == true,
            "\(signals)")
        #expect(test.hub.state.mode == .laptop && test.hub.state.tilt == .tiltedUp)
    }
}
