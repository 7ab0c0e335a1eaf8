import OrientationProtocol

/// Which program turns the screen for `orientctl follow --rotate`.
public enum RotationBackend: String, Sendable, Hashable, CaseIterable {
    /// sway's IPC through `swaymsg`: `output NAME transform T`, `input DEVICE map_to_output NAME`.
    case sway
    /// `hyprctl keyword monitor NAME,transform,N`, and the touch and tablet transform.
    case hyprland
    /// Any compositor with the wlr-output-management protocol (labwc, wayfire, river…), through
    /// `wlr-randr`.
    case wlroots
    /// `xrandr --rotate` and the touchscreens' "Coordinate Transformation Matrix" through `xinput`.
    case x11

    /// The backend a session's environment calls for, and why (for the log); or why none.
    public static func detect(environment: [String: String]) -> Result<(RotationBackend, String), DetectionFailure> {
        let desktop = (environment["XDG_CURRENT_DESKTOP"] ?? "").split(separator: ":").map { $0.lowercased() }
        if let own = desktop.first(where: { ["gnome", "kde", "phosh", "ubuntu", "unity", "budgie"].contains($0) }) {
            return .failure(
                DetectionFailure(
                    description: "XDG_CURRENT_DESKTOP says \(own): that desktop rotates the screen itself "
                        + """
                        through the net.hadess.SensorProxy D-Bus interface orientd serves; nothing to do (or say \
                        which backend with --rotate)
                        """,
                    nothingToDo: true))
        }
        if let socket = environment["SWAYSOCK"], !socket.isEmpty { return .success((.sway, "SWAYSOCK is set")) }
        if let signature = environment["HYPRLAND_INSTANCE_SIGNATURE"], !signature.isEmpty {
            return .success((.hyprland, "HYPRLAND_INSTANCE_SIGNATURE is set"))
        }
        if let display = environment["WAYLAND_DISPLAY"], !display.isEmpty {
            return .success((.wlroots, "WAYLAND_DISPLAY is set (a wlroots compositor is assumed)"))
        }
        if let display = environment["DISPLAY"], !display.isEmpty { return .success((.x11, "DISPLAY is set")) }
        return .failure(
            DetectionFailure(
                description: "no graphical session found (SWAYSOCK, HYPRLAND_INSTANCE_SIGNATURE, WAYLAND_DISPLAY "
                    + "and DISPLAY are unset): run it in the session, or say which backend with --rotate"))
    }

    public struct DetectionFailure: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
        /// The session turns the screen by itself: not an error.
        public var nothingToDo = false
    }

    // MARK: - Discovery

    /// The command that lists the outputs.
    public var outputsCommand: [String] {
        switch self {
        case .sway: ["swaymsg", "-t", "get_outputs", "-r"]
        case .hyprland: ["hyprctl", "monitors", "-j"]
        case .wlroots: ["wlr-randr"]
        case .x11: ["xrandr", "--query"]
        }
    }

    /// The command that lists input devices, where the backend maps touch devices one by one.
    public var inputsCommand: [String]? {
        switch self {
        case .sway: ["swaymsg", "-t", "get_inputs", "-r"]
        case .x11: ["xinput", "list", "--long"]
        case .hyprland, .wlroots: nil
        }
    }

    /// Output names from `outputsCommand`'s output, in the order listed (X11: connected only).
    public func outputs(from text: String) -> [String] {
        switch self {
        case .sway, .hyprland:
            guard let document = try? JSONValue.parse(Array(text.utf8)), case .array(let items) = document else {
                return []
            }
            return items.compactMap { item in
                guard case .object(let members) = item,
                    case .string(let name)? = members.first(where: { $0.key == "name" })?.value
                else { return nil }
                return name
            }
        case .wlroots:
            // Each output starts at the line's beginning: `HEADLESS-1 "Headless output 1"`.
            return text.split(separator: "\n").compactMap { line in
                guard let first = line.first, !first.isWhitespace else { return nil }
                return line.split(separator: " ").first.map(String.init)
            }
        case .x11:
            return text.split(separator: "\n").compactMap { line in
                let words = line.split(separator: " ")
                return words.count >= 2 && words[1] == "connected" ? String(words[0]) : nil
            }
        }
    }

    /// Touchscreens and pens from `inputsCommand`'s output: sway's inputs of type `touch` or
    /// `tablet_tool` (by identifier); X11's devices with a touch class or a pen's name.
    public func touchDevices(from text: String) -> [String] {
        switch self {
        case .sway:
            guard let document = try? JSONValue.parse(Array(text.utf8)), case .array(let items) = document else {
                return []
            }
            return items.compactMap { item in
                guard case .object(let members) = item,
                    case .string(let type)? = members.first(where: { $0.key == "type" })?.value,
                    ["touch", "tablet_tool"].contains(type),
                    case .string(let identifier)? = members.first(where: { $0.key == "identifier" })?.value
                else { return nil }
                return identifier
            }
        case .x11:
            // `xinput list --long`: a device line (`⎜   ↳ NAME  id=N  [slave  pointer  (2)]`) then its
            // classes, indented (`Touch mode: direct` / `XITouchClass`).
            var devices: [String] = []
            var current: (name: String, touch: Bool)?
            func finish() {
                if let current, current.touch, !devices.contains(current.name) { devices.append(current.name) }
            }
            for line in text.split(separator: "\n") {
                if let idRange = line.firstRange(of: "\tid=") ?? line.firstRange(of: " id=") {
                    finish()
                    let name = line[..<idRange.lowerBound].drop { !$0.isLetter && !$0.isNumber }
                        .trimmingSuffixWhitespace()
                    let lower = name.lowercased()
                    let pen = ["pen", "stylus", "eraser"].contains { lower.contains($0) } && line.contains("pointer")
                    current = (String(name), pen)
                } else if line.contains("XITouchClass") || line.contains("Touch mode: direct") {
                    current?.touch = true
                }
            }
            finish()
            return devices
        case .hyprland, .wlroots:
            return []
        }
    }

    /// The output to turn when none is named: the built-in panel (eDP, DSI, LVDS), else the only
    /// output; nil with the reason otherwise.
    public static func builtInOutput(_ outputs: [String]) -> Result<String, DetectionFailure> {
        if let panel = outputs.first(where: { name in
            ["edp", "dsi", "lvds"].contains { name.lowercased().hasPrefix($0) }
        }) {
            return .success(panel)
        }
        if outputs.count == 1 { return .success(outputs[0]) }
        if outputs.isEmpty { return .failure(DetectionFailure(description: "the compositor lists no output")) }
        return .failure(
            DetectionFailure(
                description:
                    """
                    no built-in panel (eDP, DSI, LVDS) among \(outputs.joined(separator: ", ")): say which with \
                    --output
                    """
            ))
    }

    // MARK: - Turning

    /// What the rotation does, by kind: a failure of one kind is reported once.
    public enum Step: String, Sendable, Hashable {
        case output
        case touch
    }

    /// The command lines that turn `output` to `transform` and map `touch` onto it, in order.
    public func commands(
        transform: OutputTransform, output: String, touch: [String]
    ) -> [(step: Step, arguments: [String])] {
        switch self {
        case .sway:
            // sway turns a touch device mapped to an output with it.
            return [(.output, ["swaymsg", "output", output, "transform", transform.wayland])]
                + touch.map { (.touch, ["swaymsg", "input", $0, "map_to_output", output]) }
        case .hyprland:
            return [
                (.output, ["hyprctl", "keyword", "monitor", "\(output),transform,\(transform.hyprland)"]),
                (.touch, ["hyprctl", "keyword", "input:touchdevice:transform", "\(transform.hyprland)"]),
                (.touch, ["hyprctl", "keyword", "input:touchdevice:output", output]),
                (.touch, ["hyprctl", "keyword", "input:tablet:transform", "\(transform.hyprland)"]),
                (.touch, ["hyprctl", "keyword", "input:tablet:output", output]),
            ]
        case .wlroots:
            return [(.output, ["wlr-randr", "--output", output, "--transform", transform.wayland])]
        case .x11:
            return [(.output, ["xrandr", "--output", output, "--rotate", transform.xrandr])]
                + touch.map {
                    (
                        .touch,
                        ["xinput", "set-prop", $0, "Coordinate Transformation Matrix"] + transform.coordinateMatrix
                    )
                }
        }
    }

    /// Whether the backend maps named touch devices itself (Hyprland turns all of them by its
    /// global settings; wlr-output-management knows no input devices).
    public var mapsTouchDevices: Bool { self == .sway || self == .x11 }
}

extension Substring {
    fileprivate func trimmingSuffixWhitespace() -> Substring {
        var copy = self
        while copy.last?.isWhitespace == true { copy.removeLast() }
        return copy
    }
}
