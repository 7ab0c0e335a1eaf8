import OrientationCore
import OrientationProtocol
import Testing
@testable import OrientationDaemon
import SensorCore

/// The hub's decisions without a socket, a thread or a clock: inputs in, actions out.
@Suite("Hub state machine")
struct HubStateMachineTests {
    static func machine(_ adjust: (inout DaemonConfiguration) -> Void = { _ in }) -> HubStateMachine {
        var configuration = DaemonConfiguration()
        configuration.claimLinger = 2
        adjust(&configuration)
        return HubStateMachine(configuration: configuration)
    }

    static func connect(_ machine: inout HubStateMachine, privileged: Bool = false) throws -> ListenerID {
        try machine.connect(isPrivileged: privileged).0
    }

    /// The reply of a request that must succeed, and the actions before it.
    static func ok(
        _ machine: inout HubStateMachine, _ request: ClientRequest, from listener: ListenerID,
        at time: Double = 0
    ) throws -> (actions: [HubAction], reply: ReplyBody) {
        let (actions, reply) = machine.handle(request, from: listener, at: time)
        return (actions, try reply.get())
    }

    static func error(
        _ machine: inout HubStateMachine, _ request: ClientRequest, from listener: ListenerID
    ) -> ProtocolError? {
        let (actions, reply) = machine.handle(request, from: listener, at: 0)
        #expect(actions.isEmpty, "a refused request changes nothing: \(actions)")
        guard case .failure(let error) = reply else { return nil }
        return error
    }

    static func publishes(_ actions: [HubAction]) -> [(event: Event, to: [ListenerID])] {
        actions.compactMap { if case .publish(let event, let to) = $0 { (event, to) } else { nil } }
    }

    /// The interface changes among `payloads`, as [from, to].
    static func interfaceChanges(_ payloads: [EventPayload]) -> [[InterfaceOrientation]] {
        payloads.compactMap { if case .interface(let change) = $0 { [change.from, change.to] } else { nil } }
    }

    static func sends(_ actions: [HubAction]) -> [(event: Event, to: ListenerID)] {
        actions.compactMap { if case .send(let event, let to) = $0 { (event, to) } else { nil } }
    }

    @Test("light and proximity claim their own sensor, apart from the accelerometer, with the linger")
    func kindClaims() throws {
        var hub = Self.machine()
        let reader = try Self.connect(&hub), phone = try Self.connect(&hub)
        _ = hub.kindSensorAvailable(.light, name: "iio:device1", unit: .lux, at: 0)
        #expect(hub.state.kinds[.light] == KindSensorState(sensor: "iio:device1", unit: .lux))
        #expect(
            hub.kindReading(.light(level: 5, unit: .lux), at: 0.5).isEmpty, "nothing read is published while unclaimed")
        let claim = try Self.ok(&hub, .subscribe([.light]), from: reader).actions
        #expect(claim.contains(.startSampling(.kind(.light))) && !claim.contains(.startSampling(.display)))
        #expect(
            try Self.ok(&hub, .subscribe([.proximity]), from: phone).actions.contains(.startSampling(.kind(.proximity)))
        )
        let first = Self.publishes(hub.kindReading(.light(level: 100, unit: .lux), at: 1))
        #expect(
            first.count == 1 && first[0].to == [reader]
                && first[0].event.payload == .reading(.light, from: nil, to: .light(level: 100, unit: .lux)))
        #expect(hub.kindReading(.light(level: 104, unit: .lux), at: 1.5).isEmpty, "4 % is below the rule")
        #expect(Self.publishes(hub.kindReading(.light(level: 106, unit: .lux), at: 2)).count == 1)
        let release = try Self.ok(&hub, .unsubscribe([.light]), from: reader).actions
        #expect(release == [.scheduleStop(after: 2)])
        #expect(
            hub.scheduledStopDue(at: 4) == [.stopSampling(.kind(.light))],
            "proximity still claimed, and no accelerometer ever")
        #expect(hub.state.kinds[.light]?.reading == .light(level: 106, unit: .lux), "the last level stays")
        let lost = Self.publishes(hub.kindSensorLost(.light, at: 5))
        #expect(
            lost.count == 1 && lost[0].event.payload == .reading(.light, from: .light(level: 106, unit: .lux), to: nil))
        #expect(hub.state.kinds[.light] == nil)
    }

    @Test(
        "a started light or proximity sensor awaits its first reading, which counts even when it repeats the last value"
    )
    func firstReading() throws {
        var hub = Self.machine()
        let reader = try Self.connect(&hub)
        _ = try Self.ok(&hub, .subscribe([.proximity]), from: reader)
        #expect(hub.awaitingFirstReading.isEmpty, "no proximity sensor: nothing to wait for")
        _ = hub.kindSensorAvailable(.light, name: "iio:device1", unit: .lux, at: 0)
        _ = try Self.ok(&hub, .subscribe([.light]), from: reader)
        #expect(hub.awaitingFirstReading == [.light])
        _ = hub.kindReading(.light(level: 10, unit: .lux), at: 1)
        #expect(hub.awaitingFirstReading.isEmpty)
        _ = try Self.ok(&hub, .unsubscribe([.light]), from: reader)
        _ = hub.scheduledStopDue(at: 4)
        _ = try Self.ok(&hub, .subscribe([.light]), from: reader)
        #expect(hub.awaitingFirstReading == [.light], "a claim after the linger reads afresh")
        #expect(hub.kindReading(.light(level: 10, unit: .lux), at: 5).isEmpty, "the same level publishes nothing")
        #expect(hub.awaitingFirstReading.isEmpty, "and still is the first reading")
        _ = hub.kindSensorLost(.light, at: 6)
        _ = hub.kindSensorAvailable(.light, name: "iio:device1", unit: .lux, at: 7)
        #expect(hub.awaitingFirstReading == [.light], "a sensor that comes back while claimed is read afresh")
        _ = hub.kindSensorLost(.light, at: 8)
        #expect(hub.awaitingFirstReading.isEmpty, "a sensor that goes away is not waited for")
    }

    @Test("the heading is for root and the control group only")
    func headingIsPrivileged() throws {
        var hub = Self.machine()
        let user = try Self.connect(&hub), root = try Self.connect(&hub, privileged: true)
        #expect(Self.error(&hub, .subscribe([.device, .heading]), from: user)?.code == .permissionDenied)
        #expect(hub.subscribedTopics(of: user).isEmpty, "a refused subscribe subscribes to nothing")
        #expect(try Self.ok(&hub, .subscribe([.heading]), from: root).actions.contains(.startSampling(.kind(.compass))))
    }

    @Test("hinge and mode claim the sensor, publish to their subscribers only, and are in the state")
    func hingeAndMode() throws {
        var hub = Self.machine()
        let convertible = try Self.connect(&hub), other = try Self.connect(&hub)
        _ = hub.sensorAvailable(name: "mock", at: 0)
        #expect(
            try Self.ok(&hub, .subscribe([.hinge, .mode]), from: convertible).actions.contains(.startSampling(.display))
        )
        _ = try Self.ok(&hub, .subscribe([.device]), from: other)
        let seq = hub.seq
        let angle = Self.publishes(hub.detected(SensorDecision(hinge: [.angle(187.5)]), at: 1))
        #expect(angle.count == 1 && angle[0].to == [convertible])
        #expect(angle[0].event.payload == .hinge(from: nil, to: 187.5) && angle[0].event.seq == seq + 1)
        #expect(hub.detected(SensorDecision(hinge: [.angle(187.5)]), at: 1.1).isEmpty, "no change, no event")
        let modeActions = hub.detected(SensorDecision(hinge: [.mode(.tablet)]), at: 2)
        #expect(modeActions.contains(.reportTabletMode(.tablet)), "libinput's switch hears the mode as an action")
        let mode = Self.publishes(modeActions)
        #expect(
            mode.count == 1 && mode[0].event.payload == .mode(from: nil, to: .tablet) && mode[0].to == [convertible])
        #expect(
            Self.publishes(hub.detected(SensorDecision(hinge: [.angle(nil)]), at: 3)).first?.event.payload
                == .hinge(from: 187.5, to: nil))
        #expect(hub.state.hinge == nil && hub.state.mode == .tablet)
        let reply = try Self.ok(&hub, .get, from: other).reply
        guard case .snapshot(_, let state) = reply else {
            Issue.record("get answers with the state")
            return
        }
        #expect(state.mode == .tablet)
    }

    @Test(
        """
        a convertible's base sensor samples for hinge and mode claims, and for any claim while the mode decides \
        rotation
        """
    )
    func baseSensorSampling() throws {
        var configuration = DaemonConfiguration()
        configuration.claimLinger = 2
        configuration.laptopKeepsNormal = false
        var hub = HubStateMachine(configuration: configuration, hasBaseSensor: true)
        let a = try Self.connect(&hub), b = try Self.connect(&hub)
        _ = hub.sensorAvailable(name: "mock", at: 0)
        let device = try Self.ok(&hub, .subscribe([.device]), from: a).actions
        #expect(
            device.contains(.startSampling(.display)) && !device.contains(.startSampling(.base)),
            "rotation by mode off: the device alone needs no base")
        #expect(try Self.ok(&hub, .subscribe([.mode]), from: b).actions == [.startSampling(.base)])
        #expect(hub.sampling == [.display, .base] && hub.baseClaims == 1)
        // The hinge's last claim ends; the display is still claimed: only the base stops, after the linger.
        #expect(hub.disconnect(b) == [.scheduleStop(after: 2), .statusChanged])
        #expect(hub.scheduledStopDue(at: 3) == [.stopSampling(.base)])
        #expect(hub.sampling == [.display] && hub.state.sensor == .active)
        // With rotation by mode (the default) any claim needs the mode, so the base samples too.
        configuration.laptopKeepsNormal = true
        #expect(hub.reload(configuration, at: 4).actions.contains(.startSampling(.base)))
        #expect(hub.sampling == [.display, .base])
        // Without a base sensor nothing asks the base to sample.
        var tablet = HubStateMachine(configuration: configuration, hasBaseSensor: false)
        let c = try Self.connect(&tablet)
        let actions = try Self.ok(&tablet, .subscribe([.hinge, .device]), from: c).actions
        #expect(actions.contains(.startSampling(.display)) && !actions.contains(.startSampling(.base)))
    }

    @Test("in laptop mode the sessions keep the natural orientation; in tablet mode they follow the display")
    func rotationByMode() throws {
        var hub = Self.machine()
        let a = try Self.connect(&hub)
        _ = try Self.ok(&hub, .subscribe([.device, .interface, .mode]), from: a)
        _ = hub.detected(SensorDecision(orientation: .landscapeLeft), at: 1)
        #expect(
            hub.state.interface == .landscapeRight,
            "no mode known: the display decides (UIKit: device left → interface right)")
        let laptop = Self.publishes(hub.detected(SensorDecision(hinge: [.mode(.laptop)]), at: 2)).map(\.event.payload)
        #expect(
            laptop.first == .mode(from: nil, to: .laptop)
                && Self.interfaceChanges(laptop) == [[.landscapeRight, .portrait]])
        #expect(hub.state.device == .landscapeLeft, "the device topic keeps saying what the display sensor reads")
        // Tilting the lid changes the device orientation and nothing else.
        #expect(
            Self.publishes(hub.detected(SensorDecision(orientation: .portraitUpsideDown), at: 3)).map(\.event.payload)
                == [
                    .device(from: .landscapeLeft, to: .portraitUpsideDown)
                ])
        // A session opened in laptop mode starts at the natural orientation.
        guard case .sessionChange(let session, _) = try Self.ok(&hub, .openSession(initial: nil), from: a).reply else {
            Issue.record("no session")
            return
        }
        #expect(session.effectiveDevice == .portrait && session.interface == .portrait)
        // Tent: tablet mode, display upside down: the interface turns 180°, the session too.
        let tent = hub.detected(SensorDecision(hinge: [.mode(.tablet)]), at: 4)
        #expect(Self.interfaceChanges(Self.publishes(tent).map(\.event.payload)) == [[.portrait, .portraitUpsideDown]])
        #expect(!Self.sends(tent).isEmpty, "the session hears the new device orientation")
        // Rotation by mode off: laptop mode follows the display too.
        var configuration = hub.configuration
        configuration.laptopKeepsNormal = false
        _ = hub.detected(SensorDecision(hinge: [.mode(.laptop)]), at: 5)
        #expect(hub.state.interface == .portrait)
        _ = hub.reload(configuration, at: 6)
        #expect(hub.state.interface == .portraitUpsideDown)
    }

    @Test("the first claim starts sampling; claims nest across topics and listeners; the last release lingers")
    func claimsNestAndLinger() throws {
        var hub = Self.machine()
        let a = try Self.connect(&hub), b = try Self.connect(&hub)
        _ = hub.sensorAvailable(name: "mock", at: 0)
        let first = try Self.ok(&hub, .subscribe([.device]), from: a)
        #expect(first.actions.contains(.startSampling(.display)))
        #expect(hub.isSampling && hub.claims == 1 && hub.state.sensor == .active)
        // Nested: a second subscribe to the same topic, another claiming topic, another listener.
        for (request, listener) in [
            (ClientRequest.subscribe([.device]), a), (.subscribe([.interface]), a),
            (.subscribe([.device, .sensor]), b),
        ] {
            #expect(!(try Self.ok(&hub, request, from: listener).actions.contains(.startSampling(.display))))
        }
        #expect(hub.claims == 4)
        // Subscribing to sensor or lock claims nothing.
        #expect(try Self.ok(&hub, .subscribe([.lock]), from: b).actions.isEmpty)
        #expect(hub.claims == 4)
        #expect(try Self.ok(&hub, .unsubscribe([.device, .interface]), from: a).actions.isEmpty)
        #expect(hub.claims == 2)
        #expect(hub.disconnect(b) == [.statusChanged])  // a still holds one claim
        #expect(hub.claims == 1)
        let last = try Self.ok(&hub, .unsubscribe([.device]), from: a)
        #expect(last.actions == [.scheduleStop(after: 2)])
        #expect(hub.isSampling, "sampling goes on through the linger")
        // A claim during the linger cancels the stop; the timer firing late changes nothing.
        #expect(try Self.ok(&hub, .subscribe([.interface]), from: a).actions == [.cancelScheduledStop])
        #expect(hub.scheduledStopDue(at: 2).isEmpty)
        #expect(hub.isSampling)
        // The last claim ends with the connection: after the linger, sampling stops and the sensor idles.
        #expect(hub.disconnect(a) == [.scheduleStop(after: 2), .statusChanged])
        let stop = hub.scheduledStopDue(at: 5)
        #expect(stop.first == .stopSampling(.display))
        #expect(Self.publishes(stop).map(\.event.payload) == [.sensor(from: .active, to: .idle)])
        #expect(!hub.isSampling && hub.state.sensor == .idle)
    }

    @Test("subscriptions are counted per topic; the reply lists what is subscribed, in protocol order")
    func subscribeAndUnsubscribe() throws {
        var hub = Self.machine()
        let a = try Self.connect(&hub)
        guard
            case .subscriptions(let topics, _, _, _) = try Self.ok(&hub, .subscribe([.lock, .device, .lock]), from: a)
                .reply
        else {
            Issue.record("not a subscriptions reply")
            return
        }
        #expect(topics == [.device, .lock])
        _ = try Self.ok(&hub, .unsubscribe([.lock, .sensor]), from: a)
        #expect(
            hub.subscribedTopics(of: a) == [.device, .lock], "lock was subscribed twice: one unsubscribe leaves one")
        _ = try Self.ok(&hub, .unsubscribe([.lock]), from: a)
        #expect(hub.subscribedTopics(of: a) == [.device])
    }

    @Test("every change grows seq by one and reaches exactly the subscribers of its topic")
    func seqAndFanOut() throws {
        var hub = Self.machine()
        let device = try Self.connect(&hub), lock = try Self.connect(&hub),
            root = try Self.connect(&hub, privileged: true)
        _ = try Self.ok(&hub, .subscribe([.device]), from: device)
        _ = try Self.ok(&hub, .subscribe([.lock]), from: lock)
        let before = hub.seq
        let turned = Self.publishes(hub.detected(SensorDecision(orientation: .landscapeLeft), at: 7))
        // The device changed, and the system session (a pad, all orientations) followed it.
        #expect(turned.map(\.event.topic) == [.device, .interface])
        #expect(turned.map(\.event.seq) == [before + 1, before + 2])
        #expect(turned[0].to == [device] && turned[1].to.isEmpty)
        #expect(turned[0].event.time == 7)
        #expect(
            turned[1].event.state.interface == .landscapeRight, "device landscapeLeft shows interface landscapeRight")
        // The same orientation again is not a change.
        #expect(hub.detected(SensorDecision(orientation: .landscapeLeft), at: 8).isEmpty)
        let locked = try Self.ok(&hub, .lock(true), from: root)
        #expect(Self.publishes(locked.actions).map(\.event.payload) == [.lock(true)])
        #expect(Self.publishes(locked.actions).first?.to == [lock])
        #expect(hub.seq == before + 3)
        #expect(locked.reply == .state(hub.state) && hub.state.locked)
        // Locking again changes nothing and publishes nothing.
        #expect(Self.publishes(try Self.ok(&hub, .lock(true), from: root).actions).isEmpty)
        #expect(hub.seq == before + 3)
    }

    @Test(
        """
        a lost sensor makes the orientation unknown; faults fail it until every one recovers, each in the state \
        with since when
        """
    )
    func sensorStatus() throws {
        var hub = Self.machine()
        _ = hub.sensorAvailable(name: "iio:device0", at: 0)
        #expect(hub.state.sensor == .idle && hub.state.sensorName == "iio:device0")
        _ = hub.detected(SensorDecision(orientation: .portrait), at: 1)
        func fault(_ kind: SensorFault.Kind) -> SensorFault {
            SensorFault(kind: kind, device: "iio:device0", detail: "why \(kind)")
        }
        // 2026-11-26T08:01:02Z
        #expect(
            Self.publishes(hub.sensorFault(fault(.axisStuck), unixTime: 1_795_680_062.7, at: 2)).map(\.event.payload)
                == [.sensor(from: .idle, to: .failed)])
        #expect(
            hub.state.faults == [
                SensorFaultState(
                    kind: "axis-stuck", device: "iio:device0", detail: "why axisStuck",
                    since: "2026-11-26T08:01:02Z")
            ])
        #expect(
            Self.publishes(hub.sensorFault(fault(.readFailed), unixTime: 1_795_680_063, at: 2)).isEmpty,
            "already failed")
        _ = hub.sensorFault(fault(.badScale), unixTime: 1_795_680_064, at: 2)
        #expect(hub.state.faults.map(\.kind) == ["axis-stuck", "read-failed", "bad-scale"])
        #expect(Self.publishes(hub.sensorRecovered(.readFailed, at: 3)).isEmpty, "axis-stuck and bad-scale still hold")
        #expect(Self.publishes(hub.sensorRecovered(.axisStuck, at: 3)).isEmpty, "bad-scale still holds")
        #expect(
            Self.publishes(hub.sensorRecovered(.badScale, at: 3)).map(\.event.payload) == [
                .sensor(from: .failed, to: .idle)
            ])
        #expect(hub.state.faults.isEmpty)
        _ = hub.sensorFault(fault(.noGravity), unixTime: 1_795_680_065, at: 3.5)
        let lost = Self.publishes(hub.sensorLost(at: 4)).map(\.event.payload)
        #expect(lost.first == .device(from: .portrait, to: .unknown))
        #expect(lost.last == .sensor(from: .failed, to: .absent))
        #expect(hub.state.sensorName == nil && hub.state.device == .unknown && hub.state.faults.isEmpty)
    }

    @Test("since: UTC timestamps to the second, across leap years and before 1970")
    func faultTimestamps() {
        #expect(SensorFaultState.timestamp(unixTime: 0) == "1970-01-01T00:00:00Z")
        #expect(SensorFaultState.timestamp(unixTime: 951_782_400) == "2000-02-29T00:00:00Z")
        #expect(SensorFaultState.timestamp(unixTime: 1_795_680_062.999) == "2026-11-26T08:01:02Z")
        #expect(SensorFaultState.timestamp(unixTime: 4_107_542_399) == "2100-02-28T23:59:59Z")
        #expect(SensorFaultState.timestamp(unixTime: -1) == "1969-12-31T23:59:59Z")
    }

    @Test("sessions: one per listener, following device and lock, their events for their owner only")
    func sessions() throws {
        var hub = Self.machine()
        let owner = try Self.connect(&hub), root = try Self.connect(&hub, privileged: true)
        _ = hub.detected(SensorDecision(orientation: .landscapeLeft), at: 0)
        let opened = try Self.ok(&hub, .openSession(initial: nil), from: owner)
        guard case .sessionChange(let snapshot, let change) = opened.reply else {
            Issue.record("\(opened.reply)")
            return
        }
        #expect(snapshot.interface == .landscapeRight && snapshot.decider == "root")
        #expect(change?.cause == "launch")
        #expect(hub.hasSession(owner))
        // The device turns: the session follows, and only its owner hears it, with the daemon's seq.
        let turned = hub.detected(SensorDecision(orientation: .portrait), at: 1)
        let heard = Self.sends(turned)
        #expect(heard.map(\.to) == [owner])
        #expect(heard.first?.event.seq == hub.seq)
        guard case .session(1, let sessionChange)? = heard.first?.event.payload else {
            Issue.record("\(heard)")
            return
        }
        #expect(sessionChange.to == .portrait)
        // The lock pins the session where it is (a pad pins the current orientation, R-LOCK-1).
        _ = try Self.ok(&hub, .lock(true), from: root)
        _ = hub.detected(SensorDecision(orientation: .landscapeRight), at: 2)
        #expect(
            try Self.ok(&hub, .getSession, from: owner).reply
                == .session(
                    SessionSnapshot(
                        ResolverState(
                            idiom: .pad, physicalDevice: .portrait, interface: .portrait, root: .scene("root")))))
        // A scene op's change goes to the owner before the reply.
        let presented = try Self.ok(
            &hub, .scene(.scenePresent, .present(.scene("sheet", supported: .landscape, preferred: .landscapeLeft))),
            from: owner)
        #expect(Self.sends(presented.actions).map(\.to) == [owner])
        guard case .sessionChange(let after, let presentChange) = presented.reply else {
            Issue.record("\(presented.reply)")
            return
        }
        #expect(after.decider == "sheet" && presentChange?.to.isLandscape == true)
        #expect(try Self.ok(&hub, .closeSession, from: owner).reply == .empty)
        #expect(!hub.hasSession(owner))
    }

    @Test("a session opened while locked starts locked and pinned by the resolver's own rule")
    func sessionJoinsTheLock() throws {
        var hub = Self.machine()
        let root = try Self.connect(&hub, privileged: true)
        _ = hub.detected(SensorDecision(orientation: .portrait), at: 0)
        _ = try Self.ok(&hub, .lock(true), from: root)
        _ = hub.detected(SensorDecision(orientation: .landscapeLeft), at: 1)
        let initial = ResolverState(
            profile: .ios16, idiom: .pad, physicalDevice: .unknown, interface: .portraitUpsideDown, root: .scene("A"))
        let opened = try Self.ok(&hub, .openSession(initial: initial), from: root)
        // Pinned to the given interface's orientation, not the daemon's device: the lock engaged there.
        guard case .sessionChange(let snapshot, nil) = opened.reply else {
            Issue.record("\(opened.reply)")
            return
        }
        #expect(snapshot.effectiveDevice == .portraitUpsideDown)
    }

    @Test("every refusal: its code, and nothing changed")
    func errorReplies() throws {
        var hub = Self.machine {
            $0.maximumClients = 2
            $0.maximumSessionNodes = 3
        }
        let user = try Self.connect(&hub), other = try Self.connect(&hub)
        #expect(throws: ProtocolError.tooManyClients(maximum: 2)) { try hub.connect(isPrivileged: true) }
        #expect(Self.error(&hub, .lock(true), from: user)?.code == .permissionDenied)
        #expect(Self.error(&hub, .setSystemSupportedOrientations(.portrait), from: user)?.code == .permissionDenied)
        #expect(!hub.state.locked)
        #expect(Self.error(&hub, .getSession, from: user)?.code == .noSession)
        #expect(Self.error(&hub, .closeSession, from: user)?.code == .noSession)
        #expect(Self.error(&hub, .scene(.scenePop, .pop()), from: user)?.code == .noSession)
        let big = PresentationNode.navigation("nav", stack: [.scene("a"), .scene("b"), .scene("c")])
        #expect(
            Self.error(
                &hub, .openSession(initial: ResolverState(physicalDevice: .unknown, interface: .unknown, root: big)),
                from: user)?.code == .limitExceeded)
        _ = try Self.ok(&hub, .openSession(initial: nil), from: user)
        #expect(Self.error(&hub, .openSession(initial: nil), from: user)?.code == .sessionExists)
        #expect(Self.error(&hub, .scene(.scenePresent, .present(big)), from: user)?.code == .limitExceeded)
        // The session shows portrait: a full-screen scene for landscape only must name its preference.
        let rejected = Self.error(
            &hub, .scene(.scenePresent, .present(.scene("wide", supported: .landscape))), from: user)
        #expect(rejected?.code == ProtocolErrorCode(.invalidInterfaceOrientation))
        #expect(rejected?.reason == "preferredNotSupported")
        #expect(Self.error(&hub, .scene(.scenePop, .pop()), from: user)?.code == ProtocolErrorCode(.invalidAction))
        #expect(Self.error(&hub, .scene(.scenePush, .push(big)), from: user)?.code == .limitExceeded)
        // The other listener is untouched by all of it.
        #expect(!hub.hasSession(other))
        // A listener the hub no longer knows (a front end's bug) gets internal-error, not a crash.
        _ = hub.disconnect(other)
        #expect(Self.error(&hub, .get, from: other)?.code == .internalError)
    }

    @Test("a session that rejects a device change hears why; the daemon goes on")
    func sessionRejection() throws {
        var hub = Self.machine()
        let owner = try Self.connect(&hub)
        // A scene that supports nothing the app allows: every rotation it is asked for is refused.
        let initial = ResolverState(
            profile: .ios16, idiom: .pad, infoPlistMask: .portrait, physicalDevice: .unknown,
            interface: .portrait, root: .scene("A", supported: .landscape))
        _ = try Self.ok(&hub, .openSession(initial: initial), from: owner)
        let heard = Self.sends(hub.detected(SensorDecision(orientation: .landscapeLeft), at: 0))
        guard case .sessionRejected(let error)? = heard.first?.event.payload else {
            Issue.record("\(heard)")
            return
        }
        #expect(error.code == ProtocolErrorCode(.invalidInterfaceOrientation))
        #expect(hub.state.device == .landscapeLeft)
    }

    @Test("a new mask re-evaluates the system session; socket settings wait for a restart")
    func reload() throws {
        var hub = Self.machine()
        _ = hub.detected(SensorDecision(orientation: .landscapeLeft), at: 0)
        #expect(hub.state.interface == .landscapeRight)
        var new = hub.configuration
        new.supportedOrientations = .portrait
        new.socketPath = "/elsewhere.sock"
        new.claimLinger = 5
        let (actions, restart) = hub.reload(new, at: 1)
        #expect(restart == ["socket path"])
        #expect(Self.publishes(actions).map(\.event.state.interface) == [.portrait])
        #expect(hub.configuration.socketPath == DaemonConfiguration().socketPath && hub.configuration.claimLinger == 5)
    }

    @Test("the status line counts listeners and names the state")
    func statusLine() throws {
        var hub = Self.machine()
        #expect(hub.statusLine == "sensor absent; 0 clients; device unknown, interface portrait")
        let a = try Self.connect(&hub)
        _ = hub.sensorAvailable(name: "iio:device0", at: 0)
        #expect(hub.statusLine == "sensor idle (iio:device0); 1 client; device unknown, interface portrait")
        _ = hub.disconnect(a)
        #expect(hub.disconnect(a).isEmpty, "a second disconnect is nothing")
    }

    @Test("one reading's decision is one input: orientation, tilt, rate, hinge angle and mode in one action list")
    func oneDecision() throws {
        var hub = HubStateMachine(configuration: DaemonConfiguration(), hasBaseSensor: true)
        let client = try Self.connect(&hub)
        _ = hub.sensorAvailable(name: "iio:device0", rate: 25, at: 0)
        _ = try Self.ok(&hub, .subscribe([.device, .hinge, .mode]), from: client)
        let actions = hub.detected(
            SensorDecision(
                orientation: .landscapeLeft, tilt: .tiltedUp, restRate: .some(4),
                hinge: [.angle(123.44), .mode(.laptop)]),
            at: 1)
        #expect(
            Self.publishes(actions).map(\.event.payload) == [
                .device(from: .unknown, to: .landscapeLeft), .hinge(from: nil, to: 123.4),
                .mode(from: nil, to: .laptop),
            ])
        #expect(actions.filter { $0 == .reportTabletMode(.laptop) }.count == 1)
        #expect(hub.state.tilt == .tiltedUp && hub.state.rate == 4 && hub.state.hinge == 123.4)
        #expect(hub.detected(SensorDecision(hinge: [.mode(.laptop)]), at: 2).isEmpty, "the same mode again: nothing")
        // New detector parameters restart detection: its pace starts at the sampling rate again.
        var configuration = hub.configuration
        configuration.detector.settle.time += 0.01
        _ = hub.reload(configuration, at: 3)
        #expect(hub.state.rate == 25)
    }

    @Test("the state's rate: the sensor's while sampling, the rest rate while the device rests, null when not read")
    func rate() throws {
        var hub = Self.machine()
        _ = hub.sensorAvailable(name: "iio:device0", rate: 25, at: 0)
        #expect(hub.state.rate == nil, "not read before a claim")
        let client = try Self.connect(&hub)
        _ = try Self.ok(&hub, .subscribe([.device]), from: client)
        #expect(hub.state.rate == 25)
        _ = hub.detected(SensorDecision(restRate: .some(2)), at: 0)
        #expect(hub.state.rate == 2)
        _ = hub.detected(SensorDecision(restRate: .some(nil)), at: 0)
        #expect(hub.state.rate == 25)
        _ = hub.detected(SensorDecision(restRate: .some(2)), at: 0)
        _ = try Self.ok(&hub, .unsubscribe([.device]), from: client)
        _ = hub.scheduledStopDue(at: 5)
        #expect(hub.state.rate == nil)
        _ = try Self.ok(&hub, .subscribe([.device]), from: client, at: 6)
        #expect(hub.state.rate == 25, "a new claim starts at the sampling rate")
    }

    @Test(
        """
        the state's gyroscope: working with one of its own beside a sensor; failed while it cannot be read and \
        with the detector's evidence (which outlasts a read again); none without a sensor
        """
    )
    func gyroscopeState() {
        var hub = Self.machine()
        _ = hub.sensorAvailable(name: "iio:device0", at: 0)
        #expect(hub.state.gyroscope == nil)
        _ = hub.gyroscopeAvailable(true, at: 1)
        #expect(hub.state.gyroscope == GyroscopeState(status: .working))
        _ = hub.gyroscopeUnreadable("iio:device1: in_anglvel_x_raw: EIO", at: 2)
        #expect(
            hub.state.gyroscope
                == GyroscopeState(status: .failed, detail: "cannot be read: iio:device1: in_anglvel_x_raw: EIO"))
        _ = hub.gyroscopeUnreadable(nil, at: 3)
        #expect(hub.state.gyroscope == GyroscopeState(status: .working))
        _ = hub.detected(SensorDecision(gyroscope: .failed("frozen")), at: 4)
        _ = hub.gyroscopeUnreadable("EIO", at: 5)
        _ = hub.gyroscopeUnreadable(nil, at: 6)
        #expect(hub.state.gyroscope == GyroscopeState(status: .failed, detail: "frozen"), "the evidence stands")
        _ = hub.sensorLost(at: 7)
        #expect(hub.state.gyroscope == nil, "read with the accelerometer: none without one")
        _ = hub.sensorAvailable(name: "iio:device2", at: 8)
        #expect(hub.state.gyroscope == GyroscopeState(status: .working), "a new sensor, judged afresh")
    }

    @Test("an IMU's gyroscope read problem shows it failed until it reads again, or sampling stops")
    func imuGyroscopeProblem() throws {
        var hub = Self.machine()
        _ = hub.sensorAvailable(name: "iio:device0", gyroscope: true, at: 0)
        let app = try Self.connect(&hub)
        _ = try Self.ok(&hub, .subscribe([.device]), from: app)
        _ = hub.sensorAvailable(
            name: "iio:device0", gyroscope: true, gyroscopeProblem: "in_anglvel_y_raw reads nan", at: 1)
        #expect(
            hub.state.gyroscope == GyroscopeState(status: .failed, detail: "cannot be read: in_anglvel_y_raw reads nan")
        )
        _ = hub.disconnect(app)
        _ = hub.scheduledStopDue(at: 4)
        #expect(hub.state.gyroscope == GyroscopeState(status: .working), "nothing read, nothing failing to read")
    }
}
