import Testing
@testable import OrientationCore

/// A resolver over `root` with the given state; defaults as in resolver.md §1.
private func resolver(
    _ root: PresentationNode, interface: InterfaceOrientation = .portrait, device: DeviceOrientation = .portrait,
    profile: ResolverProfile = .legacy, idiom: DeviceIdiom = .phone, infoPlist: InterfaceOrientationMask? = .all,
    window: InterfaceOrientationMask? = nil, capability: InterfaceOrientationMask = .all, lock: Bool = false,
    notifications: Int = 1, presented: [Presentation] = []
) -> InterfaceOrientationResolver {
    InterfaceOrientationResolver(
        state: ResolverState(
            profile: profile, idiom: idiom, infoPlistMask: infoPlist, windowMask: window,
            deviceSupportedMask: capability,
            lock: lock, deviceNotificationCount: notifications, physicalDevice: device, interface: interface,
            root: root,
            presented: presented))
}

private let portraitOnly = PresentationNode.scene(
    "P", supported: .portrait, shouldAutorotate: false, preferred: .portrait)
private let landscapeLeftOnly = PresentationNode.scene(
    "L", supported: .landscapeLeft, shouldAutorotate: true, preferred: .landscapeLeft)
private let anyScene = PresentationNode.scene("X")

@Suite("Resolver: masks")
struct ResolverMaskTests {
    @Test("the three layers intersect: all ∩ window landscape ∩ scene landscapeRight")
    func threeLayers() {
        var r = resolver(.scene("A", supported: .landscapeRight), window: .landscape)
        // interface landscapeLeft: not in the mask
        #expect(r.apply(.deviceOrientation(.landscapeRight)).interfaceChange == nil)
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange?.to == .landscapeRight)
    }

    @Test("a window mask wider than Info.plist does not widen it (J-WINDOW-INTERSECT)")
    func windowIntersects() {
        var r = resolver(anyScene, infoPlist: .portrait, window: .all)
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange == nil)
        #expect(r.state.interface == .portrait)
    }

    @Test("the device capability is a fourth layer")
    func capability() {
        var r = resolver(.scene("A", supported: .all), capability: .allButUpsideDown)
        #expect(r.apply(.deviceOrientation(.portraitUpsideDown)).interfaceChange == nil)
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange?.to == .landscapeRight)
    }

    @Test("phone defaults exclude upside-down even when Info.plist allows it; pad defaults are all")
    func idiomDefaults() {
        var phone = resolver(anyScene, idiom: .phone, infoPlist: .all)
        #expect(phone.apply(.deviceOrientation(.portraitUpsideDown)).interfaceChange == nil)
        var pad = resolver(anyScene, idiom: .pad, infoPlist: nil)
        #expect(pad.apply(.deviceOrientation(.portraitUpsideDown)).interfaceChange?.to == .portraitUpsideDown)
        #expect(pad.state.infoPlistMask == .all)
    }

    @Test("an empty effective mask is an error only when queried (J-EMPTY-ONLY-WHEN-QUERIED)")
    func emptyMask() {
        var rotating = resolver(.scene("A", supported: .portraitUpsideDown), infoPlist: .allButUpsideDown)
        let outcome = rotating.apply(.deviceOrientation(.landscapeLeft))
        #expect(outcome.error == .emptyMask)
        #expect(outcome.interfaceChange == nil)
        #expect(rotating.state.physicalDevice == .landscapeLeft)  // the reading is a fact, kept
        #expect(rotating.state.interface == .portrait)

        var fixed = resolver(
            .scene("A", supported: .portraitUpsideDown, shouldAutorotate: false), infoPlist: .allButUpsideDown)
        #expect(fixed.apply(.deviceOrientation(.landscapeLeft)).error == nil)
    }

    @Test("setWindowMask is silent until the next query; nil restores Info.plist (R-SET-1)")
    func windowMaskSilent() {
        var r = resolver(anyScene, interface: .landscapeRight, device: .landscapeLeft)
        #expect(r.apply(.setWindowMask(.portrait)).interfaceChange == nil)
        #expect(r.state.interface == .landscapeRight)
        #expect(r.apply(.attemptRotation).interfaceChange == nil)  // legacy: never enforces the mask
        #expect(r.apply(.deviceOrientation(.portrait)).interfaceChange?.to == .portrait)
        #expect(r.apply(.setWindowMask(nil)).interfaceChange == nil)
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange?.to == .landscapeRight)
    }
}

@Suite("Resolver: containers")
struct ResolverContainerTests {
    @Test("a forwarding navigation container hands the decision to its top")
    func forwardingNavigation() {
        var r = resolver(.navigation("nav", delegatesToChild: true, stack: [portraitOnly]))
        #expect(r.state.decider.id == "P")
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange == nil)  // P does not autorotate
    }

    @Test("a non-forwarding container decides with its own settings; children are ignored")
    func nonForwarding() {
        var r = resolver(.navigation("nav", delegatesToChild: false, stack: [portraitOnly]))
        #expect(r.state.decider.id == "nav")
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange?.to == .landscapeRight)
    }

    @Test("a tab container forwards to the selected tab; selecting does not evaluate (J-TAB-LIKE-PUSH)")
    func tabs() {
        var r = resolver(.tab("tabs", tabs: [portraitOnly, anyScene], selected: 0), device: .landscapeLeft)
        #expect(r.state.decider.id == "P")
        #expect(r.apply(.selectTab(1)).interfaceChange == nil)
        #expect(r.state.decider.id == "X")
        #expect(r.state.interface == .portrait)
        #expect(r.apply(.attemptRotation).interfaceChange?.to == .landscapeRight)
        #expect(r.apply(.selectTab(5)).error == ResolverError(.invalidAction, .noSuchTab))
    }

    @Test("push never evaluates, even into an empty mask (R-PUSH-1)")
    func pushSilent() {
        var r = resolver(.navigation("nav", stack: [anyScene]), infoPlist: .allButUpsideDown)
        let outcome = r.apply(.push(.scene("E", supported: .portraitUpsideDown)))
        #expect(outcome.error == nil)
        #expect(outcome.interfaceChange == nil)
        #expect(r.state.decider.id == "E")
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).error == .emptyMask)
    }

    @Test("pop adopts the device orientation if the revealed decider supports it, else stays (J-POP-REVEAL)")
    func popReveal() {
        // Device landscape, interface forced portrait on top; the revealed X supports landscape.
        var r = resolver(.navigation("nav", stack: [anyScene, portraitOnly]), device: .landscapeLeft)
        #expect(r.apply(.pop()).interfaceChange?.to == .landscapeRight)

        // The revealed L supports only landscapeLeft; device portrait: no change, even though
        // portrait is outside L's mask.
        var stays = resolver(.navigation("nav", stack: [landscapeLeftOnly, anyScene]))
        #expect(stays.apply(.pop()).interfaceChange == nil)
        #expect(stays.state.interface == .portrait)
    }

    @Test("pop of a single-element stack is a no-op; no navigation is an error")
    func popEdges() {
        var single = resolver(.navigation("nav", stack: [anyScene]))
        #expect(single.apply(.pop()) == ResolverOutcome())
        #expect(single.state.root.children.count == 1)
        var none = resolver(anyScene)
        #expect(none.apply(.pop()).error == ResolverError(.invalidAction, .noNavigationContainer))
        #expect(none.apply(.push(anyScene)).error == ResolverError(.invalidAction, .noNavigationContainer))
    }

    @Test("push targets the deepest visible navigation, or the one named")
    func pushTargets() {
        let inner = PresentationNode.navigation("inner", stack: [anyScene])
        var r = resolver(.navigation("outer", stack: [.tab("tabs", tabs: [inner], selected: 0)]))
        _ = r.apply(.push(.scene("Y")))
        #expect(r.state.decider.id == "Y")
        #expect(r.state.root.children[0].children[0].children.map(\.id) == ["X", "Y"])
        _ = r.apply(.push(.scene("Z"), container: "outer"))
        #expect(r.state.root.children.map(\.id) == ["tabs", "Z"])
    }

    @Test("push goes to the topmost level, presented or not")
    func pushIntoPresentation() {
        var r = resolver(
            .navigation("root", stack: [anyScene]),
            presented: [Presentation(node: .navigation("modal", stack: [.scene("M")]), fullScreen: true)])
        _ = r.apply(.push(.scene("N")))
        #expect(r.state.presented[0].node.children.map(\.id) == ["M", "N"])
        #expect(r.state.decider.id == "N")
    }
}

@Suite("Resolver: presentation")
struct ResolverPresentationTests {
    @Test("full-screen presentation rotates to the explicit preferred orientation")
    func explicitPreferred() throws {
        var r = resolver(anyScene)
        let change = try #require(r.apply(.present(landscapeLeftOnly)).interfaceChange)
        #expect(change.to == .landscapeLeft)
        #expect(change.cause == "present")
        #expect(change.decider == "L")
    }

    @Test("an unset preferred means the current orientation; outside the mask it is an error, atomically")
    func implicitPreferred() {
        var r = resolver(anyScene)
        let outcome = r.apply(.present(.scene("L", supported: .landscapeLeft)))
        #expect(outcome.error == .preferredNotSupported)
        #expect(r.state.presented.isEmpty)
        #expect(r.state.interface == .portrait)
        #expect(
            r.apply(.present(.scene("E", supported: .portraitUpsideDown, preferred: .portraitUpsideDown))).error == nil)
    }

    @Test("an explicit preferred outside the mask, and an empty mask, are rejected")
    func presentationErrors() {
        var r = resolver(anyScene, infoPlist: .allButUpsideDown)
        #expect(
            r.apply(.present(.scene("Q", supported: .portrait, preferred: .landscapeLeft))).error
                == .preferredNotSupported)
        #expect(r.apply(.present(.scene("E", supported: .portraitUpsideDown))).error == .emptyMask)
        #expect(r.state.presented.isEmpty)
    }

    @Test("presentation ignores shouldAutorotate (J-PRESENT-IGNORES-AUTOROTATE)")
    func presentIgnoresAutorotate() {
        var r = resolver(landscapeLeftOnly, interface: .landscapeLeft)
        #expect(r.apply(.present(portraitOnly)).interfaceChange?.to == .portrait)
    }

    @Test("a presentation that does not fill the window never decides, and its dismissal does not evaluate")
    func sheets() {
        var r = resolver(anyScene)
        #expect(r.apply(.present(portraitOnly, fullScreen: false)) == ResolverOutcome())
        #expect(r.state.decider.id == "X")
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange?.to == .landscapeRight)
        #expect(r.apply(.dismiss) == ResolverOutcome())
        #expect(r.apply(.dismiss) == ResolverOutcome())  // nothing presented: no-op
    }

    @Test("dismiss: device first, then keep, then preferred, then the canonical order")
    func dismissOrder() {
        // Device landscape and supported by the revealed root: adopt it, ignoring shouldAutorotate.
        var deviceFirst = resolver(
            .scene("R", shouldAutorotate: false), device: .landscapeLeft,
            presented: [Presentation(node: portraitOnly)])
        #expect(deviceFirst.apply(.dismiss).interfaceChange?.to == .landscapeRight)

        // Device upside-down (unsupported on phone), interface portrait supported: keep.
        var keep = resolver(anyScene, device: .portraitUpsideDown, presented: [Presentation(node: portraitOnly)])
        #expect(keep.apply(.dismiss).interfaceChange == nil)

        // Nothing fits: canonical order portrait, landscapeRight, landscapeLeft, upside-down.
        var canonical = resolver(
            .scene("R", supported: .landscape), device: .faceUp, presented: [Presentation(node: portraitOnly)])
        #expect(canonical.apply(.dismiss).interfaceChange?.to == .landscapeRight)
        var preferred = resolver(
            .scene("R", supported: .landscape, preferred: .landscapeLeft), device: .faceUp,
            presented: [Presentation(node: portraitOnly)])
        #expect(preferred.apply(.dismiss).interfaceChange?.to == .landscapeLeft)
    }
}

@Suite("Resolver: rotation lock")
struct ResolverLockTests {
    @Test("phone: engaging pins portrait and returns there; device changes are recorded only")
    func phoneLock() {
        var r = resolver(anyScene, interface: .landscapeRight, device: .landscapeLeft)
        #expect(r.apply(.setLock(true)).interfaceChange?.to == .portrait)
        #expect(r.state.effectiveDevice == .portrait)
        #expect(r.apply(.deviceOrientation(.landscapeRight)).interfaceChange == nil)
        #expect(r.state.physicalDevice == .landscapeRight)
        #expect(r.apply(.setLock(false)).interfaceChange?.to == .landscapeLeft)  // J-UNLOCK-RESYNC
    }

    @Test("pad: engaging pins the current orientation")
    func padLock() {
        var r = resolver(anyScene, interface: .landscapeRight, device: .landscapeLeft, idiom: .pad)
        #expect(r.apply(.setLock(true)).interfaceChange == nil)
        #expect(r.state.effectiveDevice == .landscapeLeft)
        #expect(r.apply(.deviceOrientation(.portrait)).interfaceChange == nil)
        #expect(r.state.interface == .landscapeRight)
    }

    @Test("an initial lock pins as engaging does")
    func initialLock() {
        let r = resolver(anyScene, interface: .landscapeLeft, device: .landscapeRight, idiom: .pad, lock: true)
        #expect(r.state.effectiveDevice == .landscapeRight)
        let phone = resolver(anyScene, interface: .landscapeLeft, device: .landscapeRight, lock: true)
        #expect(phone.state.effectiveDevice == .portrait)
    }

    @Test("the lock does not block forced rotation; attemptRotation uses the pin")
    func forceUnderLock() {
        var r = resolver(anyScene, device: .landscapeLeft, lock: true)
        #expect(r.apply(.forceRotation(.landscapeLeft)).interfaceChange?.to == .landscapeLeft)
        #expect(r.apply(.attemptRotation).interfaceChange?.to == .portrait)
    }

    @Test("a landscape-only decider stays landscape when the lock engages")
    func landscapeOnlyUnderLock() {
        var r = resolver(landscapeLeftOnly, interface: .landscapeLeft, device: .landscapeRight)
        #expect(r.apply(.setLock(true)).interfaceChange == nil)
        #expect(r.state.interface == .landscapeLeft)
    }
}

@Suite("Resolver: device → interface inversion")
struct ResolverInversionTests {
    @Test("device landscapeLeft shows interface landscapeRight (+90°), and the other way round (−90°)")
    func inversion() throws {
        var r = resolver(anyScene)
        let right = try #require(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange)
        #expect(right.to == .landscapeRight)
        #expect(right.rotationDegrees == 90)
        #expect(right.transform == [0, 1, -1, 0, 0, 0])
        #expect(right.deltaDegrees == 90)
        let left = try #require(r.apply(.deviceOrientation(.landscapeRight)).interfaceChange)
        #expect(left.to == .landscapeLeft)
        #expect(left.rotationDegrees == -90)
        #expect(left.deltaDegrees == 180)  // a half turn is reported as +180 (J-DELTA)
    }

    @Test("flat and unknown never rotate; repeats are ignored; returning upright is a change")
    func flatAndDedupe() {
        var r = resolver(anyScene)
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange?.to == .landscapeRight)
        #expect(r.apply(.deviceOrientation(.faceUp)).interfaceChange == nil)
        #expect(r.apply(.deviceOrientation(.unknown)).interfaceChange == nil)
        #expect(r.state.interface == .landscapeRight)
        #expect(r.apply(.forceRotation(.portrait)).interfaceChange?.to == .portrait)
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange?.to == .landscapeRight)
        _ = r.apply(.forceRotation(.portrait))
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange == nil)  // same value again
    }
}

@Suite("Resolver: device notifications")
struct ResolverNotificationTests {
    @Test("notifications nest; at zero the device is unknown and nothing rotates; re-enabling evaluates")
    func nesting() throws {
        var r = resolver(anyScene)
        _ = r.apply(.beginDeviceNotifications)
        _ = r.apply(.endDeviceNotifications)
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange?.to == .landscapeRight)
        let ended = r.apply(.endDeviceNotifications)
        #expect(ended.interfaceChange == nil)
        #expect(ended.deviceChange == nil)  // no notification once they are off
        #expect(r.state.effectiveDevice == .unknown)
        #expect(r.apply(.deviceOrientation(.portrait)).interfaceChange == nil)
        _ = r.apply(.endDeviceNotifications)
        #expect(r.state.deviceNotificationCount == 0)
        let begun = r.apply(.beginDeviceNotifications)
        #expect(begun.interfaceChange?.to == .portrait)
        #expect(begun.deviceChange == EffectiveDeviceChange(from: .unknown, to: .portrait))
    }

    @Test("device changes are reported for all seven values while notifications are on")
    func deviceChanges() {
        var r = resolver(anyScene)
        #expect(
            r.apply(.deviceOrientation(.faceDown)).deviceChange == EffectiveDeviceChange(from: .portrait, to: .faceDown)
        )
        #expect(r.apply(.deviceOrientation(.faceDown)).deviceChange == nil)
    }
}

@Suite("Resolver: forced rotation, attemptRotation, launch, settings")
struct ResolverRequestTests {
    @Test("legacy forced rotation is gated like a device change and never writes the device")
    func legacyForce() {
        var gated = resolver(portraitOnly)
        #expect(gated.apply(.forceRotation(.landscapeLeft)) == ResolverOutcome())
        var r = resolver(anyScene)
        #expect(r.apply(.forceRotation(.portraitUpsideDown)) == ResolverOutcome())  // outside the mask: ignored
        #expect(r.apply(.forceRotation(.landscapeLeft)).interfaceChange?.to == .landscapeLeft)
        #expect(r.state.physicalDevice == .portrait)
        #expect(r.state.effectiveDevice == .portrait)
    }

    @Test("attemptRotation re-syncs to the device after a silent settings change (R-ATTEMPT-1)")
    func attempt() {
        var r = resolver(.scene("A", supported: .portrait), device: .landscapeLeft)
        #expect(r.apply(.updateScene(id: "A", supported: .set(.allButUpsideDown))).interfaceChange == nil)
        #expect(r.state.interface == .portrait)
        #expect(r.apply(.attemptRotation).interfaceChange?.to == .landscapeRight)
        #expect(
            r.apply(.updateScene(id: "nope", shouldAutorotate: .set(false))).error
                == ResolverError(.invalidAction, .unknownScene))
    }

    @Test("updateScene changes only the given settings; null restores the default")
    func updateScene() {
        var r = resolver(.scene("A", supported: .portrait, shouldAutorotate: false, preferred: .portrait))
        _ = r.apply(.updateScene(id: "A", supported: .set(nil)))
        #expect(r.state.root.supported == nil)
        #expect(r.state.root.shouldAutorotate == false)
        #expect(r.state.root.preferred == .portrait)
    }

    @Test("launch: preferred, then the device, then the canonical order; from unknown the delta is null")
    func launch() throws {
        var preferred = resolver(.scene("A", preferred: .landscapeLeft), interface: .unknown)
        let change = try #require(preferred.apply(.launch).interfaceChange)
        #expect(change.to == .landscapeLeft)
        #expect(change.from == .unknown)
        #expect(change.deltaDegrees == nil)
        var device = resolver(anyScene, interface: .unknown, device: .landscapeRight)
        #expect(device.apply(.launch).interfaceChange?.to == .landscapeLeft)
        var canonical = resolver(.scene("A", supported: .landscape), interface: .unknown, device: .faceUp)
        #expect(canonical.apply(.launch).interfaceChange?.to == .landscapeRight)
        var empty = resolver(
            .scene("A", supported: .portraitUpsideDown), interface: .unknown, infoPlist: .allButUpsideDown)
        #expect(empty.apply(.launch).error == .emptyMask)
        #expect(empty.state.interface == .unknown)
    }

    @Test("updateSupportedOrientations enforces the mask in both profiles (R-UPDATE-1)")
    func updateSupported() {
        var r = resolver(.scene("A", supported: .landscape), device: .faceUp)
        #expect(r.apply(.updateSupportedOrientations).interfaceChange?.to == .landscapeRight)
    }
}

@Suite("Resolver: ios16 profile")
struct ResolverIOS16Tests {
    @Test("shouldAutorotate is ignored")
    func autorotateIgnored() {
        var r = resolver(.scene("A", shouldAutorotate: false), profile: .ios16)
        #expect(r.apply(.deviceOrientation(.landscapeLeft)).interfaceChange?.to == .landscapeRight)
        var legacy = resolver(.scene("A", shouldAutorotate: false))
        #expect(legacy.apply(.deviceOrientation(.landscapeLeft)).interfaceChange == nil)
    }

    @Test("attemptRotation is updateSupportedOrientations: it enforces the mask")
    func attemptEnforces() {
        var r = resolver(.scene("A", supported: .landscape), device: .faceUp, profile: .ios16)
        #expect(r.apply(.attemptRotation).interfaceChange?.to == .landscapeRight)
        var legacy = resolver(.scene("A", supported: .landscape), device: .faceUp)
        #expect(legacy.apply(.attemptRotation).interfaceChange == nil)
    }

    @Test("forced rotation is a geometry request: it can be denied, and ignores shouldAutorotate")
    func forceIsGeometry() {
        var r = resolver(portraitOnly, profile: .ios16)
        #expect(
            r.apply(.forceRotation(.landscapeLeft)).error
                == ResolverError(.geometryRequestDenied, .noRequestedOrientationSupported))
        var ok = resolver(.scene("A", shouldAutorotate: false), profile: .ios16)
        #expect(ok.apply(.forceRotation(.landscapeLeft)).interfaceChange?.to == .landscapeLeft)
    }

    @Test("geometry requests: empty is unsupported; current kept; device preferred; then pick; honoured under lock")
    func geometry() {
        var r = resolver(anyScene, device: .landscapeLeft, lock: true)
        #expect(r.apply(.requestGeometryUpdate([])).error == ResolverError(.geometryRequestUnsupported, .emptyRequest))
        // portrait is allowed: no change
        #expect(r.apply(.requestGeometryUpdate(.allButUpsideDown)) == ResolverOutcome())
        // pinned device is portrait: pick
        #expect(r.apply(.requestGeometryUpdate(.landscape)).interfaceChange?.to == .landscapeRight)
        var unlocked = resolver(anyScene, device: .landscapeRight)
        // the device's
        #expect(unlocked.apply(.requestGeometryUpdate(.landscape)).interfaceChange?.to == .landscapeLeft)
        var empty = resolver(.scene("E", supported: .portraitUpsideDown), infoPlist: .allButUpsideDown)
        #expect(empty.apply(.requestGeometryUpdate(.all)).error == .emptyMask)
    }
}
