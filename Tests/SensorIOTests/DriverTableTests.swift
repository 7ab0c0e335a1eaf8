import Foundation
import OrientationCore
import Testing

@testable import SensorIO

/// The driver table (each probe is tried in DriverProbeTests; on udev, in the umockdev testbeds).
@Suite("Driver table")
struct DriverTableTests {
    @Test("one driver per family, in the order their devices are chosen within a target")
    func order() {
        #expect(
            SensorDrivers.table.map(\.name) == [
                "iio-accel", "input-accel", "iio-buffer-als", "iio-poll-als", "hwmon-als", "iio-poll-proximity",
                "input-proximity", "iio-buffer-compass", "iio-poll-hinge", "input-lid-switch",
                "iio-poll-gyro",
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

    @Test("the udev rule tags exactly what the drivers probe for (systemd/60-orientd.rules, its driver-table lines)")
    func udevRule() throws {
        let rules = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../systemd/60-orientd.rules").standardized
        let lines = try String(contentsOf: rules, encoding: .utf8).split(separator: "\n").map(String.init)
        let begin = try #require(lines.firstIndex(of: "# driver table: begin"), "\(rules.path) has no begin marker")
        let end = try #require(lines.firstIndex(of: "# driver table: end"), "\(rules.path) has no end marker")
        let expected = SensorDrivers.udevRuleSection
        #expect(
            Array(lines[(begin + 1)..<end]) == expected,
            """
            \(rules.path) differs from the driver table; between its markers it should read:
            \(expected.joined(separator: "\n"))
            """)
        // The light driver's processed clear channels start the service too (they once did not).
        #expect(expected.contains(#"TEST=="in_intensity_clear_input", ENV{ORIENTD_SENSOR}+="light""#))
    }
}
