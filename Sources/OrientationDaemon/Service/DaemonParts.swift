import Logging
import NIOConcurrencyHelpers
import NIOCore
import SensorCore

#if canImport(Glibc)
import Glibc
#endif

/// The kinds of part the daemon is made of, each a ``DaemonPart`` with its name: the list
/// (``OrientationDaemonService``) says which parts a device has, these say what each one does.
///
/// Parts start and stop from Swift Concurrency's jobs, which run on the event loop that serves
/// every client (`Orientd.main`). What blocks (udev discovery, sysfs walks, opening devices, bus
/// round trips, joining a sensor's readers) therefore runs on a thread of its own
/// (``WorkerThread/run(_:_:)``). What stays on the loop is brief: starting and joining the silence
/// alarm's and the acceptor's threads, which wait for nothing but a wake-up.
extension DaemonPart {
    /// The hub: wires every source's events to it; at the end, cancels its own timers.
    static func hub(_ hub: OrientationHub, wire: @escaping @Sendable () -> Void) -> DaemonPart {
        DaemonPart(
            "hub", start: { wire() },
            stop: { try? await hub.eventLoop.submit { hub.stopTimers() }.get() })
    }

    /// The silence alarm's timerfd and its watcher thread (``MonotonicAlarm``).
    static func silenceAlarm(_ alarm: MonotonicAlarm) -> DaemonPart {
        DaemonPart("silence-alarm", start: { alarm.start() }, stop: { alarm.stop() })
    }

    /// A sensor source (the display's, the base's, the hinge angle's, a kind's): `start` watches udev
    /// for its sensor and opens it, `stop` ends its reading and watching, both off the loop.
    static func sensor(
        _ name: String, start: @escaping @Sendable () throws -> Void, stop: @escaping @Sendable () -> Void
    ) -> DaemonPart {
        DaemonPart(
            name, start: { try await WorkerThread.run("orientd-start") { try start() } },
            stop: { await WorkerThread.run("orientd-stop") { stop() } })
    }

    /// libinput's tablet-mode switch: the reporter, whose uinput device comes with the first mode.
    static func tabletModeSwitch(
        _ access: TabletModeSwitchAccess, hub: OrientationHub, configuration: DaemonConfiguration
    ) -> DaemonPart {
        DaemonPart(
            "tablet-mode-switch",
            start: {
                try await hub.eventLoop.submit {
                    hub.tabletModeReporter = TabletModeReporter(
                        setting: configuration.tabletModeSwitch, uinputPath: configuration.uinputPath,
                        probe: access.probe, create: access.create)
                }.get()
            },
            stop: {
                try? await hub.eventLoop.submit {
                    hub.tabletModeReporter?.stop()
                    hub.tabletModeReporter = nil
                }.get()
            })
    }

    /// The Unix socket: opened once the display sensor has said whether it exists (at most 2 s), so
    /// the first hello is already true; at the end, nobody new, a goodbye to everyone, the file gone.
    static func socket(
        _ hub: OrientationHub, configuration: DaemonConfiguration, activated: Int32?, firstEvent: AsyncStream<Void>,
        firstEventSeen: AsyncStream<Void>.Continuation, logger: Logger
    ) -> DaemonPart {
        let loop = hub.eventLoop
        let acceptor = NIOLockedValueBox<ConnectionAcceptor?>(nil)
        return DaemonPart(
            "socket",
            start: {
                // A loop timer, not Task.sleep: that sleeps on a libdispatch global-queue worker,
                // whose first run starts libdispatch's 1 Hz monitor for good (see Orientd.main).
                let timeout = loop.scheduleTask(in: .seconds(2)) { firstEventSeen.finish() }
                for await _ in firstEvent { break }
                timeout.cancel()
                raiseDescriptorLimit(clients: configuration.maximumClients, logger: logger)
                let bound = try SocketServer.bind(hub.socket, configuration: configuration, activated: activated)
                acceptor.withLockedValue { $0 = bound }
            },
            stop: {
                // Taken out: released at the end of the stop, it closes its last descriptor then.
                guard
                    let bound = acceptor.withLockedValue({ acceptor in
                        defer { acceptor = nil }
                        return acceptor
                    })
                else { return }
                bound.stop()  // no new client from here on, before the goodbye
                try? await loop.flatSubmit {
                    hub.beginShutdown()
                    return hub.closeAll(reason: "orientd is shutting down")
                }.get()
                if activated == nil { unlink(configuration.socketPath) }  // an activated one is systemd's
            })
    }

    /// net.hadess.SensorProxy as `[dbus] mode` says (``SensorProxyService``).
    static func bus(_ bus: SensorProxyService, configuration: DaemonConfiguration) -> DaemonPart {
        DaemonPart(
            "dbus", start: { try await bus.apply(configuration, atStart: true) }, stop: { await bus.stop() })
    }

    /// logind's sleep (``SleepWatch``): the sensors stop before each sleep and read afresh after it.
    /// Without a system bus or logind the daemon runs as before and says so once: a sleep is then
    /// noticed by the clock (``SuspendNotice``).
    static func sleepWatch(_ hub: OrientationHub, logger: Logger) -> DaemonPart {
        let running = NIOLockedValueBox<SleepWatch?>(nil)
        let loop = hub.eventLoop
        let byTheClock = "a sleep is noticed by the clock alone (CLOCK_BOOTTIME)"
        return DaemonPart(
            "sleep-watch",
            start: {
                let watch: SleepWatch
                do throws(SystemBusError) {
                    watch = try await WorkerThread.run("orientd-start") { () throws(SystemBusError) in try SleepWatch()
                    }
                } catch {
                    logger.notice("logind not followed (\(error)): \(byTheClock)")
                    return
                }
                running.withLockedValue { $0 = watch }
                watch.start { news in
                    switch news {
                    case .following(let refused):
                        if let refused {
                            logger.warning("following logind's sleep without a delay: \(refused)")
                        } else {
                            logger.info("following logind: sensors stop before each sleep and read afresh after it")
                        }
                    case .notFollowed(let reason):
                        logger.notice("logind not followed (\(reason)): \(byTheClock)")
                    case .preparing:
                        loop.execute { hub.systemSleeps { watch.readyToSleep() } }
                    case .resumed:
                        loop.execute { hub.systemResumed() }
                    }
                }
            },
            stop: {
                // Taken out: released at the end of the stop, it closes its wake-up's eventfd then.
                guard
                    let watch = running.withLockedValue({ running in
                        defer { running = nil }
                        return running
                    })
                else { return }
                await WorkerThread.run("orientd-stop") { watch.stop() }
            })
    }

    /// Readiness: READY=1 and the status line once the socket accepts, the sensor is open or known
    /// absent and the bus is served or known not to be; the watchdog's pings from the hub's own
    /// loop; start-up's pages given back. At the end, the hub's shutting-down state, then STOPPING=1.
    static func readiness(
        _ hub: OrientationHub, notifier: SystemdNotifier, ready: NIOLockedValueBox<Bool>,
        configuration: DaemonConfiguration, activated: Int32?, logger: Logger
    ) -> DaemonPart {
        let loop = hub.eventLoop
        let timers = NIOLockedValueBox<[Scheduled<Void>]>([])
        let watchdog = NIOLockedValueBox<RepeatedTask?>(nil)
        return DaemonPart(
            "readiness",
            start: {
                logger.notice(
                    "listening",
                    metadata: [
                        "socket.path": "\(configuration.socketPath)", "server": "\(hub.serverName)",
                        "socket.activated": "\(activated != nil)",
                    ])
                let status = try await loop.submit {
                    hub.statusObserver = { status in notifier.notify("STATUS=\(status)") }  // every change
                    return hub.statusLine
                }.get()
                ready.withLockedValue { $0 = true }
                notifier.notify("READY=1\nSTATUS=\(status)")
                releaseStartupPages(stage: "readiness", logger: logger)
                let laterRelease = loop.scheduleTask(in: StartupPageRelease.secondReleaseDelay) {
                    releaseStartupPages(stage: "first-minute", logger: logger)
                }
                timers.withLockedValue { $0 = [laterRelease] }
                // Watchdog pings come from the hub's own loop, so they stop when the pipeline hangs.
                let pings = notifier.watchdogInterval.map { interval in
                    loop.scheduleRepeatedTask(initialDelay: .zero, delay: .nanoseconds(Int64(interval * 1e9))) { _ in
                        notifier.notify("WATCHDOG=1")
                    }
                }
                watchdog.withLockedValue { $0 = pings }
            },
            stop: {
                ready.withLockedValue { $0 = false }
                watchdog.withLockedValue { $0 }?.cancel()
                for timer in timers.withLockedValue({ $0 }) { timer.cancel() }
                // "shutting down" stays systemd's last word; the hub stops its sensors and accepts
                // nobody from here on.
                try? await loop.submit {
                    hub.statusObserver = nil
                    hub.beginShutdown()
                }.get()
                notifier.notify("STOPPING=1\nSTATUS=shutting down")
                logger.notice("shutting down")
            })
    }

    /// Code that ran once goes back to the kernel: at readiness, start-up's; a minute later, that of
    /// the first clients and detections (see ``StartupPageRelease``).
    private static func releaseStartupPages(stage: String, logger: Logger) {
        let outcome = StartupPageRelease.releaseNow()
        if let failure = outcome.failure {
            logger.info("start-up pages kept", metadata: ["stage": "\(stage)", "reason": "\(failure)"])
        }
        logger.debug(
            "start-up pages released",
            metadata: [
                "stage": "\(stage)",
                "advised.kib": "\(outcome.advisedBytes / 1024)",
                "rss.kib.before": "\(outcome.residentKiBBefore.map(String.init) ?? "?")",
                "rss.kib.after": "\(outcome.residentKiBAfter.map(String.init) ?? "?")",
            ])
    }

    /// Every client takes two descriptors (SwiftNIO's and the writer's duplicate); systemd starts
    /// services with a soft limit of 1,024, so the soft limit is raised towards the hard one as far
    /// as `clients` need, and a hard limit too low for them is said at start, not found at the
    /// 500th client.
    private static func raiseDescriptorLimit(clients: Int, logger: Logger) {
        let needed = rlim_t(2 * clients + 64)
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < needed else { return }
        limit.rlim_cur = min(needed, limit.rlim_max)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 || limit.rlim_cur < needed {
            logger.warning(
                "the open-file limit is too low for the maximum number of clients",
                metadata: [
                    "limit": "\(limit.rlim_cur)", "needed": "\(needed)", "clients.max": "\(clients)",
                ])
        }
    }
}
