/// Which UIKit era's rules the resolver applies (resolver.md §9).
public enum ResolverProfile: String, Sendable, Hashable, CaseIterable, Codable {
    /// Seed-era UIKit (iOS 6–15): `shouldAutorotate` gates rotation, `attemptRotation` and the
    /// forced-rotation hack exist.
    case legacy
    /// iOS 16+: `shouldAutorotate` is ignored, `attemptRotation` is `updateSupportedOrientations`,
    /// forced rotation is a geometry request.
    case ios16
}

/// Phone or pad: sets the default masks and how the rotation lock pins (resolver.md §3).
public enum DeviceIdiom: String, Sendable, Hashable, CaseIterable, Codable {
    case phone
    case pad

    /// The mask a node or app that declares nothing supports (R-DEF-1, R-DEF-2).
    public var defaultMask: InterfaceOrientationMask { self == .phone ? .allButUpsideDown : .all }
}

/// One node of the presentation model: what iOS calls a view controller (resolver.md §1).
///
/// A `scene` decides with its own settings. A `navigation` (a stack, last = top) or `tab`
/// (one selected child) container hands the decision to its visible child when
/// `delegatesToChild` is true and decides with its own settings otherwise.
public struct PresentationNode: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case scene
        case navigation
        case tab
    }

    public var kind: Kind
    /// Identifies the node in actions (`updateScene`, `container`) and in the `decider` output.
    public var id: String
    /// Containers only: forward the three settings to the visible child.
    public var delegatesToChild: Bool
    /// nil means the idiom's default (R-DEF-1).
    public var supported: InterfaceOrientationMask?
    /// nil means true (R-DEF-1).
    public var shouldAutorotate: Bool?
    /// nil means "the current interface orientation" when presented (J-IMPLICIT-PREFERRED).
    public var preferred: InterfaceOrientation?
    /// The navigation stack (last = top) or the tabs; empty for a scene.
    public var children: [PresentationNode]
    /// The selected tab's index; unused otherwise.
    public var selected: Int

    public init(
        kind: Kind = .scene, id: String, delegatesToChild: Bool = false, supported: InterfaceOrientationMask? = nil,
        shouldAutorotate: Bool? = nil, preferred: InterfaceOrientation? = nil, children: [PresentationNode] = [],
        selected: Int = 0
    ) {
        self.kind = kind
        self.id = id
        self.delegatesToChild = delegatesToChild
        self.supported = supported
        self.shouldAutorotate = shouldAutorotate
        self.preferred = preferred
        self.children = children
        self.selected = selected
    }

    /// A scene (a leaf view controller).
    public static func scene(
        _ id: String, supported: InterfaceOrientationMask? = nil, shouldAutorotate: Bool? = nil,
        preferred: InterfaceOrientation? = nil
    ) -> PresentationNode {
        PresentationNode(
            kind: .scene, id: id, supported: supported, shouldAutorotate: shouldAutorotate, preferred: preferred)
    }

    /// A navigation container with its stack (last = top).
    public static func navigation(
        _ id: String, delegatesToChild: Bool = true, stack: [PresentationNode],
        supported: InterfaceOrientationMask? = nil, shouldAutorotate: Bool? = nil,
        preferred: InterfaceOrientation? = nil
    ) -> PresentationNode {
        PresentationNode(
            kind: .navigation, id: id, delegatesToChild: delegatesToChild, supported: supported,
            shouldAutorotate: shouldAutorotate, preferred: preferred, children: stack)
    }

    /// A tab container with its tabs and selection.
    public static func tab(
        _ id: String, delegatesToChild: Bool = true, tabs: [PresentationNode], selected: Int = 0,
        supported: InterfaceOrientationMask? = nil, shouldAutorotate: Bool? = nil,
        preferred: InterfaceOrientation? = nil
    ) -> PresentationNode {
        PresentationNode(
            kind: .tab, id: id, delegatesToChild: delegatesToChild, supported: supported,
            shouldAutorotate: shouldAutorotate, preferred: preferred, children: tabs, selected: selected)
    }

    /// The child on screen: the top of a stack or the selected tab; nil for a scene.
    public var visibleChild: PresentationNode? {
        switch kind {
        case .scene: nil
        case .navigation: children.last
        case .tab: children.indices.contains(selected) ? children[selected] : nil
        }
    }

    /// The node that decides for this subtree (R-DEC-1 step 2): forwarding containers hand over to
    /// their visible child.
    public var decidingNode: PresentationNode {
        var node = self
        while node.kind != .scene, node.delegatesToChild, let child = node.visibleChild { node = child }
        return node
    }

    /// Applies `body` to the deepest node of `kind` on the visible path; false if there is none.
    mutating func modifyDeepestVisible(_ kind: Kind, _ body: (inout PresentationNode) -> Void) -> Bool {
        switch self.kind {
        case .navigation where !children.isEmpty:
            if children[children.count - 1].modifyDeepestVisible(kind, body) { return true }
        case .tab where children.indices.contains(selected):
            if children[selected].modifyDeepestVisible(kind, body) { return true }
        default:
            break
        }
        guard self.kind == kind else { return false }
        body(&self)
        return true
    }

    /// Applies `body` to the first node (depth first) with this id and, if given, kind; false if there
    /// is none.
    mutating func modify(id: String, kind: Kind? = nil, _ body: (inout PresentationNode) -> Void) -> Bool {
        if self.id == id, kind == nil || self.kind == kind {
            body(&self)
            return true
        }
        for index in children.indices where children[index].modify(id: id, kind: kind, body) { return true }
        return false
    }
}

/// A presented level: a node shown modally, filling the window or not (a sheet or popover).
public struct Presentation: Sendable, Hashable {
    public var node: PresentationNode
    public var fullScreen: Bool

    public init(node: PresentationNode, fullScreen: Bool = true) {
        self.node = node
        self.fullScreen = fullScreen
    }
}

/// A change to one optional setting of `updateScene`: leave it, or set it (nil = back to default).
public enum SettingUpdate<Value: Sendable & Hashable>: Sendable, Hashable {
    case unchanged
    case set(Value?)
}

/// The inputs of the resolver (resolver.md §1 `Action`, semantics in §6).
public enum ResolverAction: Sendable, Hashable {
    /// A new physical (sensor) reading.
    case deviceOrientation(DeviceOrientation)
    /// Push onto the navigation container `container` (default: the deepest one on the visible path).
    case push(PresentationNode, container: String? = nil)
    case pop(container: String? = nil)
    case selectTab(Int, container: String? = nil)
    case present(PresentationNode, fullScreen: Bool = true)
    case dismiss
    case setLock(Bool)
    case attemptRotation
    case forceRotation(InterfaceOrientation)
    case requestGeometryUpdate(InterfaceOrientationMask)
    case updateSupportedOrientations
    case updateScene(
        id: String, supported: SettingUpdate<InterfaceOrientationMask> = .unchanged,
        shouldAutorotate: SettingUpdate<Bool> = .unchanged, preferred: SettingUpdate<InterfaceOrientation> = .unchanged)
    /// nil restores the default (the Info.plist mask).
    case setWindowMask(InterfaceOrientationMask?)
    case beginDeviceNotifications
    case endDeviceNotifications
    case launch

    /// The action's name in the vector schema and in events' `cause`.
    public var name: String {
        switch self {
        case .deviceOrientation: "deviceOrientation"
        case .push: "push"
        case .pop: "pop"
        case .selectTab: "selectTab"
        case .present: "present"
        case .dismiss: "dismiss"
        case .setLock: "setLock"
        case .attemptRotation: "attemptRotation"
        case .forceRotation: "forceRotation"
        case .requestGeometryUpdate: "requestGeometryUpdate"
        case .updateSupportedOrientations: "updateSupportedOrientations"
        case .updateScene: "updateScene"
        case .setWindowMask: "setWindowMask"
        case .beginDeviceNotifications: "beginDeviceNotifications"
        case .endDeviceNotifications: "endDeviceNotifications"
        case .launch: "launch"
        }
    }
}

/// An `interfaceOrientationChanged` event (resolver.md §7 O-1).
public struct InterfaceOrientationChange: Sendable, Hashable {
    public var from: InterfaceOrientation
    public var to: InterfaceOrientation
    /// The action that caused it.
    public var cause: String
    /// The id of the deciding node after the action.
    public var decider: String

    /// Rotation of the content for `to`, degrees clockwise on screen (resolver.md §2.5).
    public var rotationDegrees: Int? { to.rotationDegrees }
    /// The turn from `from`, in (−180, 180]; nil when `from` is unknown.
    public var deltaDegrees: Int? { to.deltaDegrees(from: from) }
    /// `[a, b, c, d, tx, ty]` for `to`.
    public var transform: [Int]? { to.transform }
    /// True when the bounds swap width and height (landscape).
    public var boundsSwapped: Bool { to.isLandscape }
}

/// A rejected action (resolver.md §8): the state is as it was before (R-ERR-ATOMIC).
public struct ResolverError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case invalidInterfaceOrientation
        case geometryRequestDenied
        case geometryRequestUnsupported
        case invalidAction
    }

    public enum Reason: String, Sendable, Hashable, CaseIterable {
        case emptyMask
        case preferredNotSupported
        case noRequestedOrientationSupported
        case emptyRequest
        case noNavigationContainer
        case noSuchTab
        case unknownScene
    }

    public var code: Code
    public var reason: Reason

    public init(_ code: Code, _ reason: Reason) {
        self.code = code
        self.reason = reason
    }

    public static let emptyMask = ResolverError(.invalidInterfaceOrientation, .emptyMask)
    public static let preferredNotSupported = ResolverError(.invalidInterfaceOrientation, .preferredNotSupported)

    public var description: String { "\(code.rawValue)/\(reason.rawValue)" }
}

/// The effective device orientation changed (resolver.md §7 O-2, `deviceOrientationChanged`).
public struct EffectiveDeviceChange: Sendable, Hashable {
    public var from: DeviceOrientation
    public var to: DeviceOrientation

    public init(from: DeviceOrientation, to: DeviceOrientation) {
        self.from = from
        self.to = to
    }
}

/// What one action did: at most one interface change, the effective device change it caused (only
/// reported while device notifications are on), or the error that rejected it.
public struct ResolverOutcome: Sendable, Hashable {
    public var interfaceChange: InterfaceOrientationChange?
    public var deviceChange: EffectiveDeviceChange?
    public var error: ResolverError?

    public init(
        interfaceChange: InterfaceOrientationChange? = nil, deviceChange: EffectiveDeviceChange? = nil,
        error: ResolverError? = nil
    ) {
        self.interfaceChange = interfaceChange
        self.deviceChange = deviceChange
        self.error = error
    }
}
