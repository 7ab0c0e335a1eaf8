/// The orientation of the displayed interface: where the top of the content is (resolver.md §2.2).
///
/// Unlike ``DeviceOrientation`` it is two-dimensional: there is no face-up interface.
public enum InterfaceOrientation: String, CaseIterable, Sendable, Codable, Hashable {
    case unknown
    case portrait
    case portraitUpsideDown
    /// Content rotated so that its top is at the device's left edge; shown when the device is
    /// ``DeviceOrientation/landscapeRight``.
    case landscapeLeft
    /// Content rotated so that its top is at the device's right edge; shown when the device is
    /// ``DeviceOrientation/landscapeLeft``.
    case landscapeRight

    /// UIKit's numeric value (`UIInterfaceOrientation`); landscape values are swapped relative to
    /// the device orientation on purpose (resolver.md §2.2).
    public var uikitRawValue: Int {
        switch self {
        case .unknown: 0
        case .portrait: 1
        case .portraitUpsideDown: 2
        case .landscapeLeft: 4
        case .landscapeRight: 3
        }
    }

    /// The device orientation that asks for this interface orientation (the inverse of
    /// ``DeviceOrientation/interfaceOrientation``); nil for unknown.
    public var deviceOrientation: DeviceOrientation? {
        switch self {
        case .portrait: .portrait
        case .portraitUpsideDown: .portraitUpsideDown
        case .landscapeLeft: .landscapeRight
        case .landscapeRight: .landscapeLeft
        case .unknown: nil
        }
    }

    /// True for landscapeLeft and landscapeRight, whose bounds swap width and height.
    public var isLandscape: Bool { self == .landscapeLeft || self == .landscapeRight }

    /// Rotation of the root content relative to the native portrait screen, in degrees, positive
    /// clockwise on screen (resolver.md §2.5); nil for unknown.
    public var rotationDegrees: Int? {
        switch self {
        case .portrait: 0
        case .landscapeLeft: -90
        case .landscapeRight: 90
        case .portraitUpsideDown: 180
        case .unknown: nil
        }
    }

    /// The affine transform `[a, b, c, d, tx, ty]` = `[cos θ, sin θ, −sin θ, cos θ, 0, 0]` with exact
    /// integers (resolver.md §2.5); nil for unknown.
    public var transform: [Int]? {
        switch self {
        case .portrait: [1, 0, 0, 1, 0, 0]
        case .landscapeLeft: [0, -1, 1, 0, 0, 0]
        case .landscapeRight: [0, 1, -1, 0, 0, 0]
        case .portraitUpsideDown: [-1, 0, 0, -1, 0, 0]
        case .unknown: nil
        }
    }

    /// The turn from `from` to `self`, normalised into (−180, 180] with half turns as +180 (J-DELTA);
    /// nil when either end is unknown.
    public func deltaDegrees(from: InterfaceOrientation) -> Int? {
        guard let start = from.rotationDegrees, let end = rotationDegrees else { return nil }
        var delta = (end - start) % 360
        if delta <= -180 { delta += 360 }
        if delta > 180 { delta -= 360 }
        return delta
    }
}

extension InterfaceOrientation: CustomStringConvertible {
    public var description: String { rawValue }
}

/// A set of interface orientations, with UIKit's bit values (`1 << uikitRawValue`, resolver.md §2.4).
///
/// The bits are *interface* orientations: a mask of `.landscapeLeft` accepts the *device*
/// orientation landscapeRight. `unknown` has no bit.
public struct InterfaceOrientationMask: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let portrait = InterfaceOrientationMask(rawValue: 1 << 1)
    public static let portraitUpsideDown = InterfaceOrientationMask(rawValue: 1 << 2)
    public static let landscapeRight = InterfaceOrientationMask(rawValue: 1 << 3)
    public static let landscapeLeft = InterfaceOrientationMask(rawValue: 1 << 4)
    public static let landscape: InterfaceOrientationMask = [.landscapeLeft, .landscapeRight]
    public static let allButUpsideDown: InterfaceOrientationMask = [.portrait, .landscape]
    public static let all: InterfaceOrientationMask = [.portrait, .portraitUpsideDown, .landscape]

    /// The mask holding exactly one orientation; empty for unknown.
    public init(_ orientation: InterfaceOrientation) {
        self = orientation == .unknown ? [] : InterfaceOrientationMask(rawValue: 1 << orientation.uikitRawValue)
    }

    /// True when `orientation` is a member; never for unknown.
    public func allows(_ orientation: InterfaceOrientation) -> Bool {
        orientation != .unknown && contains(InterfaceOrientationMask(orientation))
    }

    /// The member orientations in UIKit's order (portrait, portraitUpsideDown, landscapeLeft,
    /// landscapeRight).
    public var orientations: [InterfaceOrientation] {
        [.portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight].filter(allows)
    }

    /// The names of resolver.md §2.4, longest combination first, for parsing and printing.
    public static let namedMasks: [(name: String, mask: InterfaceOrientationMask)] = [
        ("all", .all), ("allButUpsideDown", .allButUpsideDown), ("landscape", .landscape),
        ("portrait", .portrait), ("portraitUpsideDown", .portraitUpsideDown),
        ("landscapeLeft", .landscapeLeft), ("landscapeRight", .landscapeRight),
    ]

    /// Looks up one of the names of resolver.md §2.4 (`"all"`, `"landscape"`, `"portrait"`, …).
    public init?(name: String) {
        guard let match = Self.namedMasks.first(where: { $0.name == name }) else { return nil }
        self = match.mask
    }
}
