import Foundation
import Testing
import OrientationCore
import SensorCore
@testable import OrientationDaemon

@Suite("Configuration file")
struct ConfigurationFileTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("systemd/orientd.toml").path

    @Test("the shipped example parses and states every default")
    func example() throws {
        let values = try ConfigurationFile.load(path: Self.example)
        #expect(values.sensor == .auto)
        #expect(values.rate == SensorConfiguration.defaultRate)
        #expect(values.acquisition == .auto)
        #expect(values.idiom == DaemonConfiguration().idiom)
        #expect(values.supported == DaemonConfiguration().supportedOrientations)
        #expect(values.socketPath == DaemonConfiguration().socketPath)
        #expect(values.socketMode == DaemonConfiguration().socketMode)
        #expect(values.maximumClients == DaemonConfiguration().maximumClients)
        var detector = DetectorConfiguration()
        for (name, value) in values.detector { try detector.set(name, to: value) }
        #expect(detector == DetectorConfiguration())
        #expect(values.detector.count == DetectorConfiguration.parameters.count)
    }

    @Test("values are read with their types")
    func values() throws {
        let values = try ConfigurationFile.parse("""
            [sensor]
            sensor = "iio:bmi160"
            mount-matrix = "0, 1, 0; -1, 0, 0; 0, 0, 1"
            rate = 50
            [session]
            idiom = "phone"
            supported = ["portrait", "landscape"]
            locked = true
            [socket]
            mode = "0660"
            [clients]
            stall-timeout = 2.5
            """, file: "t.toml")
        #expect(values.sensor == .iioName("bmi160"))
        #expect(values.mountMatrix?.text == "0, 1, 0; -1, 0, 0; 0, 0, 1")
        #expect(values.rate == 50)
        #expect(values.supported == [.portrait, .landscape])
        #expect(values.locked == true)
        #expect(values.socketMode == 0o660)
        #expect(values.stallTimeout == 2.5)
    }

    @Test("every key of every table is read")
    func everyKey() throws {
        let text = """
            [sensor]
            sensor = "ip:tablet"
            mount-matrix = "-1, 0, 0; 0, -1, 0; 0, 0, 1"
            rate = 100
            acquisition = "buffer"
            [detector]
            \(DetectorConfiguration.parameters.map { "\($0.name) = \($0.name == "rest-minimum-samples" ? "4" : String($0.value(in: DetectorConfiguration())))" }.joined(separator: "\n"))
            [session]
            idiom = "phone"
            supported = ["allButUpsideDown"]
            locked = true
            [socket]
            path = "/run/o.sock"
            mode = "0600"
            group = "video"
            [access]
            control-group = "wheel"
            [clients]
            max = 7
            stall-timeout = 3
            claim-linger = 0
            [log]
            level = "debug"
            """
        let values = try ConfigurationFile.parse(text, file: "all.toml")
        #expect(values.sensor == .network(host: "tablet"))
        #expect(values.mountMatrix?.text == "-1, 0, 0; 0, -1, 0; 0, 0, 1")
        #expect(values.rate == 100)
        #expect(values.acquisition == .buffer)
        #expect(Set(values.detector.map(\.name)) == Set(DetectorConfiguration.parameters.map(\.name)))
        #expect(values.idiom == .phone)
        #expect(values.supported == .allButUpsideDown)
        #expect(values.locked == true)
        #expect(values.socketPath == "/run/o.sock")
        #expect(values.socketMode == 0o600)
        #expect(values.socketGroup == "video")
        #expect(values.controlGroup == "wheel")
        #expect(values.maximumClients == 7)
        #expect(values.stallTimeout == 3)
        #expect(values.claimLinger == 0)
        #expect(values.logLevel == "debug")
        let keys = ConfigurationFile.schema.values.map(\.count).reduce(0, +)
        #expect(keys == 4 + DetectorConfiguration.parameters.count + 3 + 3 + 1 + 3 + 1)  // a new key needs a line above
    }

    @Test("errors name the file, the line and the expected form", arguments: [
        ("[sensor]\nrate = 25\n[weather]\nrain = true\n", "t.toml:3: unknown table [weather]"),
        ("[sensor]\n\nspeed = 3\n", "t.toml:3: [sensor]: unknown key \"speed\""),
        ("[sensor]\nrate = \"fast\"\n", "t.toml:2: [sensor] rate: wrong type string (expected a number of Hz > 0)"),
        ("[sensor]\nrate = -1\n", "t.toml:2: [sensor] rate: -1.0 is out of range"),
        ("[sensor]\nsensor = \"usb:1\"\n", "t.toml:2: [sensor] sensor: invalid sensor \"usb:1\""),
        ("[sensor]\nmount-matrix = \"1, 0; 0\"\n", "t.toml:2: [sensor] mount-matrix: invalid mount matrix"),
        ("[session]\nsupported = [\"sideways\"]\n", "t.toml:2: [session] supported:"),
        ("[socket]\nmode = \"999\"\n", "t.toml:2: [socket] mode: \"999\" is not an octal mode"),
        ("[detector]\nface-enter-tilt = 70\nface-exit-tilt = 72\n", "t.toml:3: [detector] face-exit-tilt:"),
        ("[sensor\n", "t.toml:1: not valid TOML"),
    ])
    func errors(text: String, message: String) {
        do {
            _ = try ConfigurationFile.parse(text, file: "t.toml")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.hasPrefix(message), "\(error.description)")
        }
    }

    @Test("the rendering of a configuration parses back to it")
    func renderingRoundTrip() throws {
        var daemon = DaemonConfiguration()
        daemon.idiom = .phone
        daemon.supportedOrientations = [.portrait, .landscapeLeft]
        daemon.controlGroup = "wheel"
        daemon.detector.settleTime = 0.12
        let sensor = SensorConfiguration(specification: .network(host: "tablet"), mountMatrix: .identity, rate: 50, acquisition: .poll)
        let values = try ConfigurationFile.parse(ConfigurationRendering.render(daemon, sensor: sensor, logLevel: "debug"), file: "r.toml")
        #expect(values.idiom == .phone)
        #expect(values.supported == [.portrait, .landscapeLeft])
        #expect(values.controlGroup == "wheel")
        #expect(values.sensor == .network(host: "tablet"))
        #expect(values.acquisition == .poll)
        #expect(values.logLevel == "debug")
        #expect(values.detector.first { $0.name == "settle-time" }?.value == "0.12")
    }
}
