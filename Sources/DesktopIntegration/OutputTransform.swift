import OrientationCore

/// How a compositor turns an output, in wl_output's terms (counter-clockwise), the way mutter, KWin
/// and Phosh turn the panel for the same pose: the device turned left edge up (device
/// landscapeRight, interface landscapeLeft) shows the picture turned 90°; upside down 180°; right
/// edge up (device landscapeLeft, interface landscapeRight) 270°.
public enum OutputTransform: Int, Sendable, Hashable, CaseIterable {
    case normal = 0
    case rotated90 = 90
    case rotated180 = 180
    case rotated270 = 270

    /// The transform that shows `interface` upright; nil for unknown (keep the last).
    ///
    /// UIKit's rotation is clockwise (interface landscapeRight is +90°); wl_output's is
    /// counter-clockwise, so the one is the other negated.
    public init?(interface: InterfaceOrientation) {
        guard let degrees = interface.rotationDegrees else { return nil }
        self.init(rawValue: ((-degrees) % 360 + 360) % 360)
    }

    /// sway, wlr-randr: `normal`, `90`, `180`, `270`.
    public var wayland: String { self == .normal ? "normal" : "\(rawValue)" }

    /// xrandr `--rotate`: `normal`, `left` (90° counter-clockwise), `inverted`, `right`.
    public var xrandr: String {
        switch self {
        case .normal: "normal"
        case .rotated90: "left"
        case .rotated180: "inverted"
        case .rotated270: "right"
        }
    }

    /// Hyprland's transform numbers: 0, 1 (90°), 2 (180°), 3 (270°).
    public var hyprland: Int { rawValue / 90 }

    /// The X input "Coordinate Transformation Matrix" (row-major, 3×3) that maps a touchscreen's
    /// coordinates onto the output turned this way.
    public var coordinateMatrix: [String] {
        switch self {
        case .normal: ["1", "0", "0", "0", "1", "0", "0", "0", "1"]
        case .rotated90: ["0", "-1", "1", "1", "0", "0", "0", "0", "1"]
        case .rotated180: ["-1", "0", "1", "0", "-1", "1", "0", "0", "1"]
        case .rotated270: ["0", "1", "0", "-1", "0", "1", "0", "0", "1"]
        }
    }
}
