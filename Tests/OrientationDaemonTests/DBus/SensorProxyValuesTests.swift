import OrientationCore
import OrientationProtocol
import Testing
@testable import OrientationDaemon

@Suite("net.hadess.SensorProxy values")
struct SensorProxyValuesTests {
    static func state(_ device: DeviceOrientation, sensor: SensorStatus = .active) -> DaemonState {
        DaemonState(device: device, interface: .portrait, sensor: sensor)
    }

    static func follow(_ values: SensorProxyValues, _ state: DaemonState, tilt: AccelerometerTilt?) -> SensorProxyValues
    {
        values.following(state, context: SensorProxyContext(tilt: tilt))
    }

    static func follow(_ state: DaemonState, tilt: AccelerometerTilt?) -> SensorProxyValues {
        follow(SensorProxyValues(), state, tilt: tilt)
    }

    /// The accelerometer's three properties.
    static func accelerometer(_ values: SensorProxyValues) -> [BusValue?] {
        ["HasAccelerometer", "AccelerometerOrientation", "AccelerometerTilt"].map { values[$0] }
    }

    @Test("the four upright orientations map as iio-sensor-proxy's tests read the same gravity")
    func uprightMapping() {
        let expected: [(DeviceOrientation, AccelerometerOrientation)] = [
            (.portrait, .normal), (.landscapeRight, .leftUp), (.portraitUpsideDown, .bottomUp),
            (.landscapeLeft, .rightUp),
        ]
        for (device, value) in expected {
            let values = Self.follow(Self.state(device), tilt: .vertical)
            #expect(
                Self.accelerometer(values) == [.boolean(true), .string(value.rawValue), .string("vertical")],
                "\(device)")
        }
    }

    @Test("face up, face down and unknown keep the last upright value; the tilt says which way the screen faces")
    func keepsTheLastUprightValue() {
        var values = Self.follow(Self.state(.landscapeLeft), tilt: .vertical)
        values = Self.follow(values, Self.state(.faceUp), tilt: .faceUp)
        #expect(values["AccelerometerOrientation"] == .string("right-up"))
        #expect(values["AccelerometerTilt"] == .string("face-up"))
        values = Self.follow(values, Self.state(.unknown), tilt: nil)
        #expect(Self.accelerometer(values) == [.boolean(true), .string("right-up"), .string("face-up")])
        values = Self.follow(values, Self.state(.faceDown), tilt: .faceDown)
        #expect(values["AccelerometerTilt"] == .string("face-down"))
    }

    @Test("without a sensor everything is undefined again, and the changes name what differs")
    func absentSensorResets() {
        let before = Self.follow(Self.state(.portrait), tilt: .vertical)
        let after = Self.follow(before, Self.state(.portrait, sensor: .absent), tilt: .vertical)
        #expect(after == SensorProxyValues())
        #expect(
            after.changes(from: before) == .init("HasAccelerometer", "AccelerometerOrientation", "AccelerometerTilt"))
        #expect(before.changes(from: before).isEmpty)
        let idle = Self.follow(before, Self.state(.portrait, sensor: .idle), tilt: .vertical)
        #expect(idle == before, "an idle sensor is still there")
    }

    @Test("the other kinds: their values follow their readings, a claimant hears only its sensor's properties")
    func otherKinds() {
        var state = Self.state(.portrait)
        state.kinds[.light] = KindSensorState(
            sensor: "hwmon:applesmc.768", unit: .vendor, reading: .light(level: 120, unit: .vendor))
        state.kinds[.compass] = KindSensorState(sensor: "iio:device3", reading: .heading(90))
        let values = Self.follow(state, tilt: nil)
        #expect(values["HasAmbientLight"] == .boolean(true))
        #expect(values["LightLevel"] == .double(120))
        #expect(values["LightLevelUnit"] == .string("vendor"))
        #expect(values["HasProximity"] == .boolean(false))
        #expect(values["CompassHeading"] == .double(90))
        #expect(SensorProxyValues()["CompassHeading"] == .double(-1), "-1 until a heading was read")
        #expect(SensorProxyValues.Changes.of(.kind(.light)) == .init("HasAmbientLight", "LightLevelUnit", "LightLevel"))
        #expect(SensorProxyValues.Changes.of(.kind(.compass)) == .init("HasCompass", "CompassHeading"))
    }

    @Test("the table: iio-sensor-proxy 3.9's members, in its order, each method on its sensor's object")
    func table() {
        #expect(
            SensorProxyProperty.table.map(\.name) == [
                "HasAccelerometer", "AccelerometerOrientation", "AccelerometerTilt", "HasAmbientLight",
                "LightLevelUnit", "LightLevel", "HasProximity", "ProximityNear", "HasCompass", "CompassHeading",
            ])
        #expect(
            SensorProxyMethod.table.map(\.name) == [
                "ClaimAccelerometer", "ReleaseAccelerometer", "ClaimLight", "ReleaseLight", "ClaimProximity",
                "ReleaseProximity", "ClaimCompass", "ReleaseCompass",
            ])
        #expect(
            SensorProxyMethod.table.filter { $0.object == .compass }.map(\.name) == ["ClaimCompass", "ReleaseCompass"])
    }

    @Test("every screen tilt has the incumbent's word for it: a screen facing the sky is face-down there")
    func tiltMapping() {
        #expect(
            ScreenTilt.allCases.map { AccelerometerTilt($0).rawValue } == [
                "vertical", "tilted-down", "tilted-up", "face-down", "face-up",
            ])
    }

    @Test("the orientation's and the tilt's values are the interface's")
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
