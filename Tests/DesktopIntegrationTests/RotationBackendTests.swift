#if canImport(Glibc)
import Glibc
#endif
import Testing
import OrientationCore
@testable import DesktopIntegration

@Suite("Screen rotation")
struct RotationBackendTests {
    // MARK: - The mapping

    @Test(
        "the device's pose gives the transform mutter, KWin and Phosh apply (counter-clockwise)",
        arguments: [
            (DeviceOrientation.portrait, OutputTransform.normal),
            (.landscapeRight, .rotated90),  // left edge up
            (.portraitUpsideDown, .rotated180),
            (.landscapeLeft, .rotated270),  // right edge up
        ])
    func mapping(device: DeviceOrientation, transform: OutputTransform) throws {
        let interface = try #require(device.interfaceOrientation)
        #expect(OutputTransform(interface: interface) == transform)
    }

    @Test("face up, face down and unknown keep the last transform")
    func keepsTheLast() {
        #expect(DeviceOrientation.faceUp.interfaceOrientation == nil)
        #expect(OutputTransform(interface: .unknown) == nil)
    }

    @Test(
        "each transform's spellings",
        arguments: [
            (OutputTransform.normal, "normal", "normal", 0),
            (.rotated90, "90", "left", 1),
            (.rotated180, "180", "inverted", 2),
            (.rotated270, "270", "right", 3),
        ])
    func spellings(transform: OutputTransform, wayland: String, xrandr: String, hyprland: Int) {
        #expect(transform.wayland == wayland)
        #expect(transform.xrandr == xrandr)
        #expect(transform.hyprland == hyprland)
    }

    @Test("the touch matrix turns the unit square with the output", arguments: OutputTransform.allCases)
    func touchMatrix(transform: OutputTransform) throws {
        let m = transform.coordinateMatrix.compactMap(Double.init)
        try #require(m.count == 9)
        func map(_ x: Double, _ y: Double) -> [Double] { [m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5]] }
        // Touch coordinates run 0…1 (y downwards). The panel's right edge shows, with the content
        // turned θ counter-clockwise, the output's edge at θ clockwise from the right in y-down
        // terms: its bottom for 90 (xrandr left), its left for 180, its top for 270.
        let corners = Set([map(0, 0), map(1, 0), map(0, 1), map(1, 1)].map { "\($0)" })
        #expect(corners == Set([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]].map { "\($0)" }))
        let angle = Double(transform.rawValue) * .pi / 180
        let expected = [0.5 + 0.5 * cos(angle), 0.5 + 0.5 * sin(angle)]
        let got = map(1, 0.5)
        #expect(
            abs(got[0] - expected[0]) < 1e-9 && abs(got[1] - expected[1]) < 1e-9, "\(transform): \(got) vs \(expected)")
    }

    // MARK: - Command lines

    @Test("sway: the output's transform, then each touch device mapped to it")
    func swayCommands() {
        let lines = RotationBackend.sway.commands(
            transform: .rotated270, output: "eDP-1", touch: ["1267:12345:ELAN_Touchscreen", "1386:20:Wacom_Pen"])
        #expect(
            lines.map(\.arguments) == [
                ["swaymsg", "output", "eDP-1", "transform", "270"],
                ["swaymsg", "input", "1267:12345:ELAN_Touchscreen", "map_to_output", "eDP-1"],
                ["swaymsg", "input", "1386:20:Wacom_Pen", "map_to_output", "eDP-1"],
            ])
        #expect(lines.map(\.step) == [.output, .touch, .touch])
        #expect(
            RotationBackend.sway.commands(transform: .normal, output: "DSI-1", touch: []).map(\.arguments)
                == [["swaymsg", "output", "DSI-1", "transform", "normal"]])
    }

    @Test("hyprland: the monitor's transform and the touch and tablet transform")
    func hyprlandCommands() {
        #expect(
            RotationBackend.hyprland.commands(transform: .rotated90, output: "eDP-1", touch: []).map(\.arguments) == [
                ["hyprctl", "keyword", "monitor", "eDP-1,transform,1"],
                ["hyprctl", "keyword", "input:touchdevice:transform", "1"],
                ["hyprctl", "keyword", "input:touchdevice:output", "eDP-1"],
                ["hyprctl", "keyword", "input:tablet:transform", "1"],
                ["hyprctl", "keyword", "input:tablet:output", "eDP-1"],
            ])
    }

    @Test("wlroots: wlr-randr's transform")
    func wlrootsCommands() {
        #expect(
            RotationBackend.wlroots.commands(transform: .rotated180, output: "DSI-1", touch: ["ignored"]).map(
                \.arguments)
                == [["wlr-randr", "--output", "DSI-1", "--transform", "180"]])
    }

    @Test("x11: xrandr's rotation and each touch device's matrix")
    func x11Commands() {
        #expect(
            RotationBackend.x11.commands(transform: .rotated90, output: "eDP-1", touch: ["ELAN Touchscreen"]).map(
                \.arguments) == [
                    ["xrandr", "--output", "eDP-1", "--rotate", "left"],
                    [
                        "xinput", "set-prop", "ELAN Touchscreen", "Coordinate Transformation Matrix", "0", "-1", "1",
                        "1", "0", "0", "0", "0", "1",
                    ],
                ])
    }

    // MARK: - What the compositor lists

    static let swayOutputs =
        #"""
        [{"id": 3, "type": "output", "name": "HDMI-A-1", "active": true}, {"id": 4, "type": "output", "name": \#
        "eDP-1", "active": true}]
        """#
    static let swayInputs = #"""
        [{"identifier": "1:1:AT_Translated_Set_2_keyboard", "name": "AT Translated Set 2 keyboard", "type": "keyboard"},
         {"identifier": "1267:12345:ELAN_Touchscreen", "name": "ELAN Touchscreen", "type": "touch"},
         {"identifier": "1386:20:Wacom_Pen", "name": "Wacom Pen", "type": "tablet_tool"},
         {"identifier": "2:7:SynPS/2_Synaptics_TouchPad", "name": "SynPS/2 Synaptics TouchPad", "type": "touchpad"}]
        """#
    static let wlrRandr = """
        eDP-1 "BOE 0x0A1B (eDP-1)"
          Enabled: yes
          Modes:
            1920x1080 px, 60.000000 Hz (preferred, current)
          Position: 0,0
          Transform: normal
          Scale: 1.000000
        HDMI-A-1 "Dell Inc. DELL U2415 (HDMI-A-1)"
          Enabled: yes
        """
    static let xrandr = """
        Screen 0: minimum 8 x 8, current 1920 x 1080, maximum 32767 x 32767
        HDMI-1 disconnected (normal left inverted right x axis y axis)
        DSI-1 connected primary 800x1280+0+0 (normal left inverted right x axis y axis) 107mm x 172mm
           800x1280      60.00*+
        DP-1 connected 2560x1440+800+0 (normal left inverted right x axis y axis) 597mm x 336mm
        """
    static let xinput = """
        ⎡ Virtual core pointer                    \tid=2\t[master pointer  (3)]
        \tReporting 7 classes:
        \t\tClass originated from: 11. Type: XIButtonClass
        ⎜   ↳ Virtual core XTEST pointer              \tid=4\t[slave  pointer  (2)]
        \tReporting 3 classes:
        \t\tClass originated from: 4. Type: XIButtonClass
        ⎜   ↳ Goodix Capacitive TouchScreen           \tid=11\t[slave  pointer  (2)]
        \tReporting 4 classes:
        \t\tClass originated from: 11. Type: XIButtonClass
        \t\tClass originated from: 11. Type: XITouchClass
        \t\t  Touch mode: direct
        \t\t  Max number of touches: 10
        ⎜   ↳ Wacom HID 5256 Pen stylus               \tid=13\t[slave  pointer  (2)]
        \tReporting 8 classes:
        \t\tClass originated from: 13. Type: XIButtonClass
        ⎜   ↳ SynPS/2 Synaptics TouchPad              \tid=14\t[slave  pointer  (2)]
        \tReporting 7 classes:
        \t\tClass originated from: 14. Type: XIButtonClass
        ⎣ Virtual core keyboard                   \tid=3\t[master keyboard (2)]
        \tReporting 1 classes:
        \t\tClass originated from: 3. Type: XIKeyClass
        """

    @Test("outputs as each backend's tool lists them")
    func outputs() {
        #expect(RotationBackend.sway.outputs(from: Self.swayOutputs) == ["HDMI-A-1", "eDP-1"])
        #expect(RotationBackend.hyprland.outputs(from: #"[{"id": 0, "name": "eDP-1", "width": 1920}]"#) == ["eDP-1"])
        #expect(RotationBackend.wlroots.outputs(from: Self.wlrRandr) == ["eDP-1", "HDMI-A-1"])
        #expect(RotationBackend.x11.outputs(from: Self.xrandr) == ["DSI-1", "DP-1"])
        #expect(RotationBackend.sway.outputs(from: "not json").isEmpty)
    }

    @Test("touchscreens and pens, not touchpads or keyboards")
    func touchDevices() {
        #expect(
            RotationBackend.sway.touchDevices(from: Self.swayInputs) == [
                "1267:12345:ELAN_Touchscreen", "1386:20:Wacom_Pen",
            ])
        #expect(
            RotationBackend.x11.touchDevices(from: Self.xinput) == [
                "Goodix Capacitive TouchScreen", "Wacom HID 5256 Pen stylus",
            ])
    }

    @Test("the built-in panel, else the only output, else a clear refusal")
    func builtInOutput() throws {
        #expect(try RotationBackend.builtInOutput(["HDMI-A-1", "eDP-1"]).get() == "eDP-1")
        #expect(try RotationBackend.builtInOutput(["DP-1", "DSI-1"]).get() == "DSI-1")
        #expect(try RotationBackend.builtInOutput(["HEADLESS-1"]).get() == "HEADLESS-1")
        guard case .failure(let failure) = RotationBackend.builtInOutput(["DP-1", "HDMI-A-1"]) else {
            Issue.record("two external outputs must not be guessed between")
            return
        }
        #expect(failure.description.contains("DP-1, HDMI-A-1: say which with --output"))
    }

    @Test(
        "auto picks from the session and says why; desktops that rotate themselves are left alone",
        arguments: [
            (["SWAYSOCK": "/run/user/1000/sway-ipc.sock", "WAYLAND_DISPLAY": "wayland-1"], "sway"),
            (["HYPRLAND_INSTANCE_SIGNATURE": "abc", "WAYLAND_DISPLAY": "wayland-1"], "hyprland"),
            (["WAYLAND_DISPLAY": "wayland-0", "XDG_CURRENT_DESKTOP": "labwc:wlroots"], "wlroots"),
            (["DISPLAY": ":0"], "x11"),
            (["WAYLAND_DISPLAY": "wayland-0", "XDG_CURRENT_DESKTOP": "GNOME"], "none"),
            ([:], "none"),
        ])
    func detect(environment: [String: String], expected: String) {
        switch RotationBackend.detect(environment: environment) {
        case .success(let (backend, reason)):
            #expect(backend.rawValue == expected)
            #expect(!reason.isEmpty)
        case .failure(let failure):
            #expect(expected == "none", "\(failure)")
            #expect(
                failure.description.contains(environment.isEmpty ? "no graphical session" : "rotates the screen itself")
            )
        }
    }

    // MARK: - The rotator

    final class Recorder: @unchecked Sendable {
        var lines: [[String]] = []
        var failing: Set<String> = []
        var listings: [String: String] = [:]

        func run(_ arguments: [String]) -> ExternalCommand {
            lines.append(arguments)
            let failed = failing.contains(arguments[1]) || failing.contains(arguments[0])
            return ExternalCommand(
                status: failed ? 1 : 0, output: listings[arguments.joined(separator: " ")] ?? "",
                errors: failed ? "no such thing" : "", arguments: arguments)
        }
    }

    @Test("finds the panel and the touch devices, turns, keeps the last for unknown")
    func rotator() throws {
        let recorder = Recorder()
        recorder.listings = [
            "swaymsg -t get_outputs -r": Self.swayOutputs, "swaymsg -t get_inputs -r": Self.swayInputs,
        ]
        var notes: [String] = []
        var rotator = try ScreenRotator(
            backend: .sway, output: nil, touch: [], run: recorder.run, note: { notes.append($0) })
        #expect(rotator.output == "eDP-1")
        #expect(rotator.touch == ["1267:12345:ELAN_Touchscreen", "1386:20:Wacom_Pen"])
        #expect(notes.contains { $0.hasPrefix("output eDP-1") })
        recorder.lines = []
        #expect(rotator.apply(.landscapeLeft) == .init(turned: .rotated90, reports: []))
        #expect(recorder.lines.first == ["swaymsg", "output", "eDP-1", "transform", "90"])
        recorder.lines = []
        #expect(rotator.apply(.unknown) == .init(turned: nil, reports: []))
        #expect(recorder.lines.isEmpty)
        #expect(rotator.current == .rotated90)
    }

    @Test("a failing step is reported once per kind until it works again, and the rest still runs")
    func failuresOncePerKind() throws {
        let recorder = Recorder()
        recorder.failing = ["input"]
        var rotator = try ScreenRotator(
            backend: .sway, output: "eDP-1", touch: ["a", "b"], run: recorder.run, note: { _ in })
        let first = rotator.apply(.portrait)
        #expect(first.turned == .normal)
        #expect(first.reports.count == 1)
        #expect(
            first.reports.first?.hasPrefix(
                "mapping touch input failed: swaymsg input a map_to_output eDP-1 exited with status 1: no such thing")
                == true)
        #expect(rotator.apply(.landscapeRight).reports.isEmpty, "said once")
        recorder.failing = []
        #expect(rotator.apply(.portrait).reports.isEmpty)
        recorder.failing = ["output"]
        let again = rotator.apply(.portraitUpsideDown)
        #expect(again.turned == nil)
        #expect(again.reports.count == 1 && again.reports[0].hasPrefix("turning the output failed"))
    }

    @Test("no output to guess between: setup says so")
    func setupFailure() {
        let recorder = Recorder()
        recorder.listings = ["xrandr --query": "DP-1 connected\nHDMI-1 connected\n"]
        #expect(throws: ScreenRotator.SetupFailure.self) {
            _ = try ScreenRotator(backend: .x11, output: nil, touch: [], run: recorder.run, note: { _ in })
        }
    }
}
