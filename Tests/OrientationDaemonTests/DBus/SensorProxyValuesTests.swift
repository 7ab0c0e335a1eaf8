import OrientationCore
import OrientationProtocol
import Testing
@testable import OrientationDaemon

@Suite("net.hadess.SensorProxy values")
struct SensorProxyValuesTests {
    static func state(_ device: DeviceOrientation, sensor: SensorStatus = .active) -> DaemonState {
        DaemonState(device: device, interface: .portrait, sensor: sensor)
    }

    @Test("the four upright orientations map as iio-sensor-proxy's tests read the same gravity")
    func uprightMapping() {
        let expected: [(DeviceOrientation, AccelerometerOrientation)] = [
            (.portrait, .normal), (.landscapeRight, .leftUp), (.portraitUpsideDown, .bottomUp),
            (.landscapeLeft, .rightUp),
        ]
        for (device, value) in expected {
            let values = SensorProxyValues().following(Self.state(device), tilt: .vertical)
            #expect(
                values == SensorProxyValues(hasAccelerometer: true, orientation: value, tilt: .vertical), "\(device)")
        }
    }

    @Test("face up, face down and unknown keep the last upright value; the tilt says which way the screen faces")
    func keepsTheLastUprightValue() {
        var values = SensorProxyValues().following(Self.state(.landscapeLeft), tilt: .vertical)
        values = values.following(Self.state(.faceUp), tilt: .faceUp)
        #expect(values.orientation == .rightUp)
        #expect(values.tilt == .faceUp)
        values = values.following(Self.state(.unknown), tilt: nil)
        #expect(values == SensorProxyValues(hasAccelerometer: true, orientation: .rightUp, tilt: .faceUp))
        values = values.following(Self.state(.faceDown), tilt: .faceDown)
        #expect(values.tilt == .faceDown)
    }

    @Test("without a sensor everything is undefined again, and the changes name what differs")
    func absentSensorResets() {
        let before = SensorProxyValues().following(Self.state(.portrait), tilt: .vertical)
        let after = before.following(Self.state(.portrait, sensor: .absent), tilt: .vertical)
        #expect(after == SensorProxyValues())
        #expect(after.changes(from: before) == [.hasAccelerometer, .orientation, .tilt])
        #expect(before.changes(from: before).isEmpty)
        let idle = before.following(Self.state(.portrait, sensor: .idle), tilt: .vertical)
        #expect(idle == before, "an idle sensor is still there")
    }

    @Test("every screen tilt has the incumbent's word for it: a screen facing the sky is face-down there")
    func tiltMapping() {
        #expect(
            ScreenTilt.allCases.map { AccelerometerTilt($0).rawValue } == [
                "vertical", "tilted-down", "tilted-up", "face-down", "face-up",
            ])
    }

    @Test("every value is one the C side knows (it refuses others)")
    func valuesAreTheInterfaces() {
        #expect(
            AccelerometerOrientation.allCases.map(\.rawValue) == [
                "undefined", "normal", "bottom-up", "left-up", "right-up",
            ])
        #expect(
            AccelerometerTilt.allCases.map(\.rawValue) == [
                "undefined", "vertical", "tilted-up", "tilted-down", "face-up", "face-down",
            ])
    }
}
