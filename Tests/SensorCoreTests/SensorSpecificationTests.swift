import Testing
@testable import SensorCore

@Suite("--sensor grammar")
struct SensorSpecificationTests {
    @Test(
        "every form of the grammar",
        arguments: [
            ("auto", SensorSpecification.auto),
            ("iio:bmi160", .iioName("bmi160")),
            ("iio:accel-display", .iioName("accel-display")),
            ("iio:device3", .iioDevice(3)),
            ("/dev/iio:device12", .iioDevice(12)),
            ("ip:192.168.1.20", .network(host: "192.168.1.20")),
            ("ip:tablet.local", .network(host: "tablet.local")),
            ("replay:trace.csv", .replay(path: "trace.csv", speed: 1)),
            ("replay:/tmp/a b.csv?speed=4", .replay(path: "/tmp/a b.csv", speed: 4)),
            ("replay:x?y.csv?speed=0.5", .replay(path: "x?y.csv", speed: 0.5)),
            ("stdin", .standardInput),
        ])
    func parses(text: String, expected: SensorSpecification) throws {
        #expect(try SensorSpecification(parsing: text) == expected)
    }

    @Test(
        "the description reads back",
        arguments: ["auto", "iio:bmi160", "iio:device3", "ip:host", "replay:a.csv", "replay:a.csv?speed=2.0", "stdin"])
    func roundTrip(text: String) throws {
        #expect(try SensorSpecification(parsing: text).description == text)
    }

    @Test(
        "malformed specifications are refused with the text and the grammar",
        arguments: [
            "", "usb:1", "iio:", "ip:", "ip:a b", "replay:", "replay:a.csv?speed=0", "replay:a.csv?speed=fast",
            "replay:a.csv?loop=1", "/dev/iio:devicex", "/dev/iio:device-1", "Auto",
        ])
    func refuses(text: String) {
        do {
            _ = try SensorSpecification(parsing: text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.text == text)
            #expect(error.description.contains(SensorSpecification.grammar))
        }
    }
}
