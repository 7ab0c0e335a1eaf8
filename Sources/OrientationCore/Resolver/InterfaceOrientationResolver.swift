/// Everything the resolver knows about one app window (resolver.md §3).
public struct ResolverState: Sendable, Hashable {
    public var profile: ResolverProfile
    public var idiom: DeviceIdiom
    /// The app-wide mask (Info.plist "Supported interface orientations").
    public var infoPlistMask: InterfaceOrientationMask
    /// The per-window mask (`application:supportedInterfaceOrientationsForWindow:`); nil = the
    /// Info.plist mask (R-DEF-3).
    public var windowMask: InterfaceOrientationMask?
    /// What the hardware can show (J-DEVICE-CAPABILITY).
    public var deviceSupportedMask: InterfaceOrientationMask
    /// The system rotation lock, and the device orientation it pins (R-LOCK-1).
    public var lock: Bool
    public var lockPin: DeviceOrientation
    /// Nested device-notification subscriptions; starts at 1, UIKit's own (J-NOTIFY-COUNT).
    public var deviceNotificationCount: Int
    /// The last sensor reading.
    public var physicalDevice: DeviceOrientation
    public var interface: InterfaceOrientation
    public var root: PresentationNode
    /// Presented levels, last = topmost.
    public var presented: [Presentation]

    /// A state with the documented defaults (R-DEF-2, R-DEF-3, J-DEVICE-CAPABILITY, J-NOTIFY-COUNT);
    /// an initial lock pins as R-LOCK-1 says.
    public init(
        profile: ResolverProfile = .legacy, idiom: DeviceIdiom = .phone, infoPlistMask: InterfaceOrientationMask? = nil,
        windowMask: InterfaceOrientationMask? = nil, deviceSupportedMask: InterfaceOrientationMask = .all,
        lock: Bool = false,
        deviceNotificationCount: Int = 1, physicalDevice: DeviceOrientation, interface: InterfaceOrientation,
        root: PresentationNode, presented: [Presentation] = []
    ) {
        self.profile = profile
        self.idiom = idiom
        self.infoPlistMask = infoPlistMask ?? idiom.defaultMask
        self.windowMask = windowMask
        self.deviceSupportedMask = deviceSupportedMask
        self.lock = lock
        self.deviceNotificationCount = max(0, deviceNotificationCount)
        self.physicalDevice = physicalDevice
        self.interface = interface
        self.root = root
        self.presented = presented
        self.lockPin = .portrait
        if lock { lockPin = pinForEngagingLock() }
    }

    /// R-DEVEFF-1: unknown without notifications, the pin while locked, the sensor otherwise.
    public var effectiveDevice: DeviceOrientation {
        if deviceNotificationCount == 0 { return .unknown }
        return lock ? lockPin : physicalDevice
    }

    /// The node whose settings count (R-DEC-1): the topmost full-screen level (else the root),
    /// followed down through forwarding containers.
    public var decider: PresentationNode {
        (presented.last(where: \.fullScreen)?.node ?? root).decidingNode
    }

    /// deviceSupportedMask ∩ infoPlistMask ∩ windowMask (R-MASK-1, J-WINDOW-INTERSECT).
    public var appMask: InterfaceOrientationMask {
        deviceSupportedMask.intersection(infoPlistMask).intersection(windowMask ?? infoPlistMask)
    }

    /// appMask ∩ the node's supported mask (R-MASK-1).
    public func effectiveMask(of node: PresentationNode) -> InterfaceOrientationMask {
        appMask.intersection(node.supported ?? idiom.defaultMask)
    }

    /// R-LOCK-1: portrait on a phone (J-LOCK-PORTRAIT-PIN); the current orientation on a pad
    /// (J-LOCK-PAD), portrait when it is unknown.
    func pinForEngagingLock() -> DeviceOrientation {
        idiom == .phone ? .portrait : (interface.deviceOrientation ?? .portrait)
    }

    /// Engages or releases the rotation lock; engaging it pins the device orientation (R-LOCK-1).
    /// The `setLock` action does this and then lets the interface follow; a state being set up (a
    /// session joining a locked daemon) uses it alone.
    public mutating func setLock(_ on: Bool) {
        if on, !lock { lockPin = pinForEngagingLock() }
        lock = on
    }
}

/// The interface-orientation resolver: UIKit's rotation rules as a pure state machine
/// (docs/resolver.md).
///
/// Each action is applied atomically and returns its decisions: at most one interface change, or
/// the error that rejected it, in which case the state is as before (R-ERR-ATOMIC; only a sensor
/// reading is kept, because it is a fact).
public struct InterfaceOrientationResolver: Sendable {
    public private(set) var state: ResolverState

    public init(state: ResolverState) {
        self.state = state
    }

    /// Applies one action.
    public mutating func apply(_ action: ResolverAction) -> ResolverOutcome {
        let before = state
        var change: InterfaceOrientationChange?
        do {
            change = try perform(action)
        } catch {
            let reading = state.physicalDevice
            state = before
            if case .deviceOrientation = action { state.physicalDevice = reading }
            return ResolverOutcome(deviceChange: deviceChange(from: before), error: error)
        }
        return ResolverOutcome(interfaceChange: change, deviceChange: deviceChange(from: before))
    }

    /// O-2: reported when the effective device orientation changed and notifications are on.
    private func deviceChange(from before: ResolverState) -> EffectiveDeviceChange? {
        let (old, new) = (before.effectiveDevice, state.effectiveDevice)
        guard old != new, state.deviceNotificationCount > 0 else { return nil }
        return EffectiveDeviceChange(from: old, to: new)
    }

    private mutating func perform(_ action: ResolverAction) throws(ResolverError) -> InterfaceOrientationChange? {
        let cause = action.name
        switch action {
        case .deviceOrientation(let value):  // R-DEVICE-1
            return try whenEffectiveDeviceChanges(cause) { $0.physicalDevice = value }

        case .push(let node, let container):  // R-PUSH-1: no evaluation
            try modifyNavigation(container) { $0.children.append(node) }
            return nil

        case .pop(let container):  // R-POP-1
            let deciderBefore = state.decider.id
            try modifyNavigation(container) { navigation in
                if navigation.children.count > 1 { navigation.children.removeLast() }
            }
            guard state.decider.id != deciderBefore else { return nil }
            return try revealAfterPop(cause)

        case .selectTab(let index, let container):  // R-TAB-1: no evaluation
            var inRange = true
            let found = modifyContainer(.tab, id: container) { tab in
                if tab.children.indices.contains(index) { tab.selected = index } else { inRange = false }
            }
            guard found, inRange else { throw ResolverError(.invalidAction, .noSuchTab) }
            return nil

        case .present(let node, let fullScreen):  // R-PRESENT-1, R-PRESENT-2
            guard fullScreen else {
                state.presented.append(Presentation(node: node, fullScreen: false))
                return nil
            }
            let newDecider = node.decidingNode
            let mask = state.effectiveMask(of: newDecider)
            guard !mask.isEmpty else { throw .emptyMask }
            let target = newDecider.preferred ?? state.interface  // J-IMPLICIT-PREFERRED
            guard mask.allows(target) else { throw .preferredNotSupported }
            state.presented.append(Presentation(node: node, fullScreen: true))
            return rotate(to: target, cause)

        case .dismiss:  // R-DISMISS-1
            guard let removed = state.presented.popLast(), removed.fullScreen else { return nil }
            return try revealAfterDismiss(cause)

        case .setLock(let on):  // R-LOCK-1..3
            return try whenEffectiveDeviceChanges(cause) { state in state.setLock(on) }

        case .attemptRotation:  // R-ATTEMPT-1
            return state.profile == .ios16 ? try revealAfterDismiss(cause) : try autorotate(cause)

        case .forceRotation(let target):  // R-FORCE-1
            if state.profile == .ios16 { return try requestGeometry(InterfaceOrientationMask(target), cause) }
            return try autorotate(toward: target, cause)

        case .requestGeometryUpdate(let requested):  // R-GEO-1
            return try requestGeometry(requested, cause)

        case .updateSupportedOrientations:  // R-UPDATE-1
            return try revealAfterDismiss(cause)

        case .updateScene(let id, let supported, let shouldAutorotate, let preferred):  // R-SET-1: silent
            let found = modifyAnyLevel {
                $0.modify(id: id) { node in
                    if case .set(let value) = supported { node.supported = value }
                    if case .set(let value) = shouldAutorotate { node.shouldAutorotate = value }
                    if case .set(let value) = preferred { node.preferred = value }
                }
            }
            guard found else { throw ResolverError(.invalidAction, .unknownScene) }
            return nil

        case .setWindowMask(let mask):  // R-SET-1: silent
            state.windowMask = mask
            return nil

        case .beginDeviceNotifications:  // R-NOTIF-1
            return try whenEffectiveDeviceChanges(cause) { $0.deviceNotificationCount += 1 }

        case .endDeviceNotifications:
            return try whenEffectiveDeviceChanges(cause) {
                $0.deviceNotificationCount = max(0, $0.deviceNotificationCount - 1)
            }

        case .launch:  // R-LAUNCH-1: ignores the current orientation
            let decider = state.decider
            let mask = state.effectiveMask(of: decider)
            guard !mask.isEmpty else { throw .emptyMask }
            if let preferred = decider.preferred, mask.allows(preferred) { return rotate(to: preferred, cause) }
            if let wanted = deviceTarget, mask.allows(wanted) { return rotate(to: wanted, cause) }
            return rotate(to: pick(from: mask, preferred: nil), cause)
        }
    }

    // MARK: - Evaluation procedures (resolver.md §5)

    /// `d`: the interface orientation the effective device orientation asks for (R-MAP-2: none for
    /// flat and unknown).
    private var deviceTarget: InterfaceOrientation? { state.effectiveDevice.interfaceOrientation }

    /// Runs `change`, then EVAL-AUTOROTATE if the effective device orientation changed (R-DEVICE-1,
    /// R-LOCK-3, R-NOTIF-1; J-DEDUPE).
    private mutating func whenEffectiveDeviceChanges(
        _ cause: String, _ change: (inout ResolverState) -> Void
    ) throws(ResolverError) -> InterfaceOrientationChange? {
        let before = state.effectiveDevice
        change(&state)
        guard state.effectiveDevice != before else { return nil }
        return try autorotate(cause)
    }

    /// EVAL-AUTOROTATE, toward the device orientation or a forced target (J-FORCE-LEGACY): gated by
    /// the decider's shouldAutorotate (legacy profile only); an empty mask is an error; a target
    /// outside the mask leaves the interface as it is.
    private mutating func autorotate(
        toward forced: InterfaceOrientation? = nil, _ cause: String
    ) throws(ResolverError) -> InterfaceOrientationChange? {
        guard let target = forced ?? deviceTarget, target != .unknown else { return nil }
        let decider = state.decider
        if state.profile == .legacy, decider.shouldAutorotate == false { return nil }
        let mask = state.effectiveMask(of: decider)
        guard !mask.isEmpty else { throw .emptyMask }
        return mask.allows(target) ? rotate(to: target, cause) : nil
    }

    /// EVAL-REVEAL-DISMISS: the device orientation if supported (J-DISMISS-DEVICE-FIRST), else keep a
    /// supported interface, else enforce the mask (J-DISMISS-ENFORCE). shouldAutorotate is not asked.
    private mutating func revealAfterDismiss(_ cause: String) throws(ResolverError) -> InterfaceOrientationChange? {
        let decider = state.decider
        let mask = state.effectiveMask(of: decider)
        guard !mask.isEmpty else { throw .emptyMask }
        if let wanted = deviceTarget, mask.allows(wanted) { return rotate(to: wanted, cause) }
        if mask.allows(state.interface) { return nil }
        return rotate(to: pick(from: mask, preferred: decider.preferred), cause)
    }

    /// EVAL-REVEAL-POP (J-POP-REVEAL): the device orientation if the revealed decider supports it,
    /// otherwise no change, even when the interface is outside its mask.
    private mutating func revealAfterPop(_ cause: String) throws(ResolverError) -> InterfaceOrientationChange? {
        let mask = state.effectiveMask(of: state.decider)
        guard !mask.isEmpty else { throw .emptyMask }
        if let wanted = deviceTarget, mask.allows(wanted) { return rotate(to: wanted, cause) }
        return nil
    }

    /// R-GEO-1: ignores shouldAutorotate and the lock.
    private mutating func requestGeometry(
        _ requested: InterfaceOrientationMask, _ cause: String
    ) throws(ResolverError) -> InterfaceOrientationChange? {
        guard !requested.isEmpty else { throw ResolverError(.geometryRequestUnsupported, .emptyRequest) }
        let decider = state.decider
        let mask = state.effectiveMask(of: decider)
        guard !mask.isEmpty else { throw .emptyMask }
        let allowed = requested.intersection(mask)
        guard !allowed.isEmpty else { throw ResolverError(.geometryRequestDenied, .noRequestedOrientationSupported) }
        if allowed.allows(state.interface) { return nil }
        if let wanted = deviceTarget, allowed.allows(wanted) { return rotate(to: wanted, cause) }
        return rotate(to: pick(from: allowed, preferred: decider.preferred), cause)
    }

    /// R-PICK-1: `preferred` if allowed, else the first of portrait, landscapeRight, landscapeLeft,
    /// portraitUpsideDown (J-CANON-ORDER). `mask` must not be empty.
    private func pick(from mask: InterfaceOrientationMask, preferred: InterfaceOrientation?) -> InterfaceOrientation {
        if let preferred, mask.allows(preferred) { return preferred }
        let canonical: [InterfaceOrientation] = [.portrait, .landscapeRight, .landscapeLeft, .portraitUpsideDown]
        return canonical.first(where: mask.allows) ?? .unknown
    }

    /// R-ROTATE-1: nothing when already there; otherwise one event.
    private mutating func rotate(to target: InterfaceOrientation, _ cause: String) -> InterfaceOrientationChange? {
        guard target != .unknown, target != state.interface else { return nil }
        let change = InterfaceOrientationChange(
            from: state.interface, to: target, cause: cause, decider: state.decider.id)
        state.interface = target
        return change
    }

    // MARK: - Finding containers

    /// The navigation container named `id`, or the deepest one on the visible path of the topmost
    /// level (R-PUSH-1).
    private mutating func modifyNavigation(
        _ id: String?, _ body: (inout PresentationNode) -> Void
    ) throws(ResolverError) {
        guard modifyContainer(.navigation, id: id, body) else {
            throw ResolverError(.invalidAction, .noNavigationContainer)
        }
    }

    private mutating func modifyContainer(
        _ kind: PresentationNode.Kind, id: String?, _ body: (inout PresentationNode) -> Void
    ) -> Bool {
        if let id { return modifyAnyLevel { $0.modify(id: id, kind: kind, body) } }
        if state.presented.isEmpty { return state.root.modifyDeepestVisible(kind, body) }
        return state.presented[state.presented.count - 1].node.modifyDeepestVisible(kind, body)
    }

    /// Tries `body` on the levels from the topmost presentation down to the root; true once one
    /// accepts.
    private mutating func modifyAnyLevel(_ body: (inout PresentationNode) -> Bool) -> Bool {
        for index in state.presented.indices.reversed() where body(&state.presented[index].node) { return true }
        return body(&state.root)
    }
}
