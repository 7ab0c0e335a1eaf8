import Foundation
import Logging
import Testing
import OrientationCore
import SensorCore
@testable import OrientationDaemon

@Suite("Configuration file and settings")
struct ConfigurationFileTests {
    /// The repository's systemd/orientd.toml, found from this file up to the folder holding Package.swift
    /// (so that the test does not depend on how deep its folder is).
    static let example: String = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/",
            !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path)
        {
            folder = folder.deletingLastPathComponent()
        }
        return folder.appendingPathComponent("systemd/orientd.toml").path
    }()

    @Test("the shipped example is the one the settings table writes, and it states every default")
    func example() throws {
        let shipped = try String(contentsOfFile: Self.example, encoding: .utf8)
        #expect(
            shipped == ConfigurationFile.example, "regenerate it: orientd check-config --example > systemd/orientd.toml"
        )
        #expect(try ConfigurationFile.load(path: Self.example) == ServeSettings())
        for setting in DaemonSetting.all {
            let line = setting.value(in: ServeSettings()).map { "\(setting.key) = \($0)" } ?? "# \(setting.key) = "
            #expect(shipped.contains("\n" + line), "\(setting.name)")
        }
    }

    @Test("values are read with their types, over the defaults")
    func values() throws {
        let settings = try ConfigurationFile.parse(
            """
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
        #expect(settings.sensor.specification == .iioName("bmi160"))
        #expect(settings.sensor.mountMatrix?.text == "0, 1, 0; -1, 0, 0; 0, 0, 1")
        #expect(settings.sensor.rate == 50)
        #expect(settings.daemon.idiom == .phone)
        #expect(settings.daemon.supportedOrientations == [.portrait, .landscape])
        #expect(settings.daemon.lockedAtStart)
        #expect(settings.daemon.socketMode == 0o660)
        #expect(settings.daemon.stallTimeout == 2.5)
        #expect(settings.daemon.maximumClients == DaemonConfiguration().maximumClients)
    }

    /// A value other than the default for every setting, as the file writes it.
    static let everyKey: [String: String] = [
        "[sensor] sensor": "\"ip:tablet\"", "[sensor] mount-matrix": "\"-1, 0, 0; 0, -1, 0; 0, 0, 1\"",
        "[sensor] rate": "100",
        "[sensor] acquisition": "\"buffer\"", "[sensor] rest-rate": "1.5", "[sensor] held-rate": "3",
        "[sensor] gyroscope-rate": "100",
        "[sensor] motion-margin": "0.2",
        "[session] idiom": "\"phone\"", "[session] supported": "[\"allButUpsideDown\"]",
        "[session] locked": "true", "[session] persist-lock": "false", "[socket] path": "\"/run/o.sock\"",
        "[socket] mode": "\"0600\"",
        "[socket] group": "\"video\"",
        "[access] control-group": "\"wheel\"", "[clients] max": "7", "[clients] stall-timeout": "3",
        "[clients] claim-linger": "0",
        "[dbus] mode": "\"off\"", "[dbus] polkit": "false", "[dbus] follows-lock": "false", "[log] level": "\"debug\"",
        "[hinge] base-sensor": "\"none\"", "[hinge] base-mount-matrix": "\"1, 0, 0; 0, -1, 0; 0, 0, -1\"",
        "[hinge] laptop-keeps-normal": "false", "[hinge] tablet-mode-switch": "\"on\"",
        "[hinge] uinput": "\"/tmp/uinput\"",
        "[hinge] tablet-above": "200", "[hinge] laptop-below": "160", "[hinge] confirmation": "0.3",
        "[hinge] smoothing": "0.2",
        "[hinge] hinge-vertical-limit": "8.7", "[hinge] magnitude-tolerance": "1", "[hinge] stale-after": "1",
        "[hinge] ambiguous-zone": "20", "[hinge] deadband": "1",
    ]

    @Test("every key of every table is read (a new setting needs a value above)")
    func everyKey() throws {
        var text = ""
        var written: [String: String] = [:]
        for table in DaemonSetting.tables {
            text += "[\(table.name)]\n"
            for setting in DaemonSetting.all where setting.table == table.name {
                let value: String
                if let parameter = DetectorConfiguration.parameters.first(where: { $0.name == setting.key }),
                    setting.table == "detector"
                {
                    // Detector values are checked together: each moves a little, staying inside its bounds.
                    let number = parameter.value(in: DetectorConfiguration())
                    value = parameter.name == "rest-minimum-samples" ? String(Int(number) + 1) : String(number * 1.01)
                } else {
                    value = try #require(Self.everyKey[setting.name], "\(setting.name)")
                }
                written[setting.name] = value
                text += "\(setting.key) = \(value)\n"
            }
        }
        let settings = try ConfigurationFile.parse(text, file: "all.toml")
        for setting in DaemonSetting.all {
            #expect(setting.value(in: settings) == written[setting.name], "\(setting.name)")
            #expect(
                setting.value(in: settings) != setting.value(in: ServeSettings()), "\(setting.name) kept its default")
        }
    }

    @Test(
        "errors name the file, the line and the expected form",
        arguments: [
            ("[sensor]\nrate = 25\n[weather]\nrain = true\n", "t.toml:3: unknown table [weather]"),
            ("[sensor]\n\nspeed = 3\n", "t.toml:3: [sensor]: unknown key \"speed\""),
            ("[sensor]\nrate = \"fast\"\n", "t.toml:2: [sensor] rate: wrong type string (expected a number of Hz"),
            ("[sensor]\nrate = -1\n", "t.toml:2: [sensor] rate: -1.0 is out of range"),
            ("[sensor]\nsensor = \"usb:1\"\n", "t.toml:2: [sensor] sensor: invalid sensor \"usb:1\""),
            ("[sensor]\nmount-matrix = \"1, 0; 0\"\n", "t.toml:2: [sensor] mount-matrix: invalid mount matrix"),
            (
                "[session]\nsupported = [\"sideways\"]\n",
                "t.toml:2: [session] supported: \"sideways\" is not a mask name"
            ),
            ("[session]\nsupported = []\n", "t.toml:2: [session] supported: must name at least one orientation"),
            (
                "[session]\nidiom = \"watch\"\n",
                "t.toml:2: [session] idiom: unknown idiom \"watch\" (expected a string: phone, pad)"
            ),
            ("[socket]\nmode = \"999\"\n", "t.toml:2: [socket] mode: \"999\" is not an octal mode"),
            ("[socket]\npath = \"relative.sock\"\n", "t.toml:2: [socket] path: \"relative.sock\" is not absolute"),
            ("[clients]\nmax = 0\n", "t.toml:2: [clients] max: must be an integer > 0"),
            ("[clients]\nclaim-linger = -1\n", "t.toml:2: [clients] claim-linger: must be ≥ 0"),
            ("[log]\nlevel = \"loud\"\n", "t.toml:2: [log] level: unknown level \"loud\""),
            ("[dbus]\nmode = \"maybe\"\n", "t.toml:2: [dbus] mode: unknown mode \"maybe\""),
            ("[detector]\nface-enter-tilt = 70\nface-exit-tilt = 72\n", "t.toml:3: [detector] face-exit-tilt:"),
            ("[detector]\nsettle-time = true\n", "t.toml:2: [detector] settle-time: wrong type boolean"),
            ("[sensor\n", "t.toml:1: not valid TOML"),
            (
                "[hinge]\ntablet-above = 180\nlaptop-below = 180\n",
                "t.toml:3: [hinge] laptop-below: laptop-below (180.0) must be below tablet-above (180.0)"
            ),
            ("[hinge]\ntablet-above = 400\n", "t.toml:2: [hinge] tablet-above: 400 is out of range"),
            ("[hinge]\nbase-sensor = \"keyboard\"\n", "t.toml:2: [hinge] base-sensor: invalid sensor \"keyboard\""),
            ("[hinge]\ntablet-mode-switch = \"yes\"\n", "t.toml:2: [hinge] tablet-mode-switch: unknown mode \"yes\""),
        ])
    func errors(text: String, message: String) {
        do {
            _ = try ConfigurationFile.parse(text, file: "t.toml")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.hasPrefix(message), "\(error.description)")
        }
    }

    @Test(
        "a file that cannot be read is named with the reason; a directory is not an empty file",
        arguments: [
            ("/nonexistent/orientd.toml", "/nonexistent/orientd.toml: cannot read: No such file or directory"),
            ("/tmp", "/tmp: cannot read: Is a directory"),
        ])
    func unreadable(path: String, message: String) {
        do {
            _ = try ConfigurationFile.load(path: path)
            Issue.record("\(path) was read")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("the rendering of settings parses back to them")
    func renderingRoundTrip() throws {
        var settings = ServeSettings()
        settings.daemon.idiom = .phone
        settings.daemon.supportedOrientations = [.portrait, .landscapeLeft]
        settings.daemon.controlGroup = "wheel"
        settings.daemon.detector.settle.time = 0.12
        settings.sensor = SensorConfiguration(
            specification: .network(host: "tablet"), mountMatrix: .identity, rate: 50, acquisition: .poll)
        settings.logLevel = .debug
        #expect(try ConfigurationFile.parse(ConfigurationFile.render(settings), file: "r.toml") == settings)
    }

    @Test("options take the same values through the same parsers; errors name the option")
    func options() throws {
        var settings = ServeSettings()
        try DaemonSetting.option("supported").apply(argument: "portrait,landscapeLeft", to: &settings)
        try DaemonSetting.option("socket-mode").apply(argument: "0640", to: &settings)
        try DaemonSetting.option("max-clients").apply(argument: "12", to: &settings)
        try DaemonSetting.option("locked").apply(argument: "true", to: &settings)
        #expect(settings.daemon.supportedOrientations == [.portrait, .landscapeLeft])
        #expect(
            settings.daemon.socketMode == 0o640 && settings.daemon.maximumClients == 12 && settings.daemon.lockedAtStart
        )
        for (option, value, message) in [
            ("socket-mode", "999", "--socket-mode: \"999\" is not an octal mode"),
            ("supported", "sideways", "--supported: \"sideways\" is not a mask name"),
            ("max-clients", "0", "--max-clients: must be an integer > 0"),
            ("rate", "fast", "--rate: \"fast\" is not a number"),
        ] {
            #expect(throws: SettingProblem.self) {
                try DaemonSetting.option(option).apply(argument: value, to: &settings)
            }
            do { try DaemonSetting.option(option).apply(argument: value, to: &settings) } catch {
                #expect(error.description.hasPrefix(message), "\(error.description)")
            }
        }
        // Every setting with an option reads back what it writes (strings and arrays as the command line has them).
        for setting in DaemonSetting.all where setting.option != nil {
            guard let shown = setting.value(in: ServeSettings()) else { continue }
            let text = shown.filter { $0 != "\"" && $0 != "[" && $0 != "]" }
            var fresh = ServeSettings()
            try setting.apply(argument: text, to: &fresh)
            #expect(fresh == ServeSettings(), "\(setting.name)")
        }
    }
}
