/// The physical attitude of the device, as the detector derives it from gravity.
///
/// The seven values and their meaning follow UIKit's `UIDeviceOrientation` (resolver.md §2.1).
/// The raw value is the wire name, so JSON and logs spell them exactly as clients expect.
public enum DeviceOrientation: String, CaseIterable, Sendable, Codable, Hashable {
    /// Not determined yet, or the sensor has been silent for too long.
    case unknown
    /// Upright, bottom edge (home button) down.
    case portrait
    /// Upright, bottom edge (home button) up.
    case portraitUpsideDown
    /// On its side, home button on the right: the device was turned to the left (left edge down).
    case landscapeLeft
    /// On its side, home button on the left: the device was turned to the right (right edge down).
    case landscapeRight
    /// Lying flat, screen towards the sky.
    case faceUp
    /// Lying flat, screen towards the ground.
    case faceDown

    /// UIKit's numeric value (`UIDeviceOrientation` raw values, resolver.md §2.1).
    public var uikitRawValue: Int {
        switch self {
        case .unknown: 0
        case .portrait: 1
        case .portraitUpsideDown: 2
        case .landscapeLeft: 3
        case .landscapeRight: 4
        case .faceUp: 5
        case .faceDown: 6
        }
    }

    /// True for the four orientations in which the screen stands upright.
    public var isUpright: Bool {
        switch self {
        case .portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight: true
        case .unknown, .faceUp, .faceDown: false
        }
    }

    /// True for faceUp and faceDown.
    public var isFlat: Bool { self == .faceUp || self == .faceDown }

    /// The interface orientation this device orientation asks for, or nil when it never rotates the
    /// interface (faceUp, faceDown, unknown: R-MAP-2).
    ///
    /// The landscape cases cross over (R-MAP-1): turning the device to the left needs the content
    /// turned to the right. Never compare raw values instead of going through this mapping.
    public var interfaceOrientation: InterfaceOrientation? {
        switch self {
        case .portrait: .portrait
        case .portraitUpsideDown: .portraitUpsideDown
        case .landscapeLeft: .landscapeRight
        case .landscapeRight: .landscapeLeft
        case .unknown, .faceUp, .faceDown: nil
        }
    }
}

extension DeviceOrientation: CustomStringConvertible {
    public var description: String { rawValue }
}
