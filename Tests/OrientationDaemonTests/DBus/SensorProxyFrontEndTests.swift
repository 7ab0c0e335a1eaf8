import NIOConcurrencyHelpers
import NIOEmbedded
import OrientationCore
import OrientationProtocol
import SensorCore
import Testing

@testable import OrientationDaemon

/// A source that only says it is there: the tests hand the hub the events themselves.
private final class SilentSource: AccelerometerSource, @unchecked Sendable {
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
        var configuration = DaemonConfiguration()
        configuration.socketPath = "/nonexistent/orientd.sock"
        hub = OrientationHub(
            eventLoop: loop, configuration: configuration, source: SilentSource(), serverName: "orientd test")
        let commands = self.commands
        frontEnd = SensorProxyFrontEnd(
            hub: hub, checksPolkit: false,
            submit: { command in
                commands.withLockedValue { $0.append(command) }
            })
        hub.sensorProxy = frontEnd
        frontEnd.start()
        hub.handle(.available(SensorDescription(identifier: "iio:device0", name: "test")), detected: nil)
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
        hub.handle(sample, detected: OrientationChange(time: 1, from: .unknown, to: .landscapeLeft), tilt: .tiltedUp)
        let signals = signalsTo(":1.7")
        #expect(signals.count == 1, "\(signals)")
        #expect(
            signals.first.map { $0.isSuperset(of: .init("AccelerometerOrientation", "AccelerometerTilt")) } == true,
            "\(signals)")
        #expect(hub.state.tilt == .tiltedUp)
    }

    @Test("a tilt alone is one PropertiesChanged, and the same tilt again is none")
    func tiltAlone() {
        let sample = SensorEvent.sample(SensorSample(time: 1, reading: Vector3(0, -9.81, 0)))
        hub.handle(sample, detected: nil, tilt: .vertical)
        hub.handle(sample, detected: nil, tilt: .vertical)
        #expect(signalsTo(":1.7").count == 1)
    }
}
