import OrientationCore
import Testing

@testable import SensorIO

/// The driver table (probing needs udev: the integration tests' umockdev testbeds do that).
@Suite("Driver table")
struct DriverTableTests {
    @Test("one driver per family, in the order their devices are chosen within a target")
    func order() {
        #expect(
            SensorDrivers.table.map(\.name) == [
                "iio-accel", "input-accel", "iio-buffer-als", "iio-poll-als", "hwmon-als", "iio-poll-proximity",
                "input-proximity", "iio-buffer-compass", "iio-poll-hinge", "input-lid-switch",
            ])
        #expect(
            SensorDrivers.drivers(for: .kind(.light)).map(\.name) == ["iio-buffer-als", "iio-poll-als", "hwmon-als"])
        #expect(Set(SensorDrivers.table.map(\.name)).count == SensorDrivers.table.count, "names are unique")
    }

    @Test("every target is served, and hotplug is watched on its drivers' subsystems")
    func subsystems() {
        #expect(SensorDrivers.subsystems(for: .accelerometer) == ["iio", "input"])
        #expect(SensorDrivers.subsystems(for: .kind(.light)) == ["iio", "hwmon", "platform"])
        #expect(SensorDrivers.subsystems(for: .kind(.proximity)) == ["iio", "input"])
        #expect(SensorDrivers.subsystems(for: .kind(.compass)) == ["iio"])
        #expect(SensorDrivers.subsystems(for: .hingeAngle) == ["iio"])
        #expect(SensorDrivers.subsystems(for: .lidSwitch) == ["input"])
        for kind in SensorKind.allCases { #expect(!SensorDrivers.drivers(for: .kind(kind)).isEmpty, "\(kind)") }
    }

    @Test("IIO devices are walked by number (iio:device10 after iio:device2), others after them")
    func deviceOrder() {
        let names = ["iio:device10", "trigger0", "iio:device2", "event3"]
        #expect(SensorDrivers.walkOrder(names, name: { $0 }) == ["iio:device2", "iio:device10", "trigger0", "event3"])
    }
}
