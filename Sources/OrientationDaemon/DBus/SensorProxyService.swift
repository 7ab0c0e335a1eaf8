import Logging
import NIOConcurrencyHelpers
import NIOCore
import SensorCore

/// net.hadess.SensorProxy's life: the bus connection and the front end, started, stopped and
/// started again as `[dbus] mode` and `[dbus] polkit` say (at start and on SIGHUP), with the
/// outcome reported to the hub for `get`'s `dbus` field.
final class SensorProxyService: Sendable {
    private let hub: OrientationHub
    private let logger = Logger(label: "orientd.dbus")
    /// What runs now, and the settings it was started with (reloads are serialised by the caller).
    private let running = NIOLockedValueBox<(connection: SystemBusConnection?, mode: DBusMode, polkit: Bool)?>(nil)

    init(hub: OrientationHub) {
        self.hub = hub
    }

    /// Serves the bus as `configuration` says. At start, `on` with the bus unreachable throws (the
    /// daemon exits 69); on a reload it is logged and the socket goes on. A reload with unchanged
    /// settings leaves a serving front end alone and tries again where the name is not served (the
    /// bus was unreachable, the name taken, or the connection lost), so SIGHUP is the way back.
    func apply(_ configuration: DaemonConfiguration, atStart: Bool) async throws(SystemBusError) {
        if let current = running.withLockedValue({ $0 }), current.mode == configuration.dbusMode,
            current.polkit == configuration.dbusPolkit
        {
            let hub = self.hub
            let serving = (try? await hub.eventLoop.submit { hub.sensorProxy != nil }.get()) ?? false
            if current.mode == .off || serving { return }
        }
        await stop()
        let connection = try await start(configuration, atStart: atStart)
        running.withLockedValue { $0 = (connection, configuration.dbusMode, configuration.dbusPolkit) }
    }

    /// Stops serving: the front end's listeners leave the hub, then the connection closes.
    func stop() async {
        guard
            let current = running.withLockedValue({ running in
                defer { running = nil }
                return running
            })
        else { return }
        let hub = self.hub
        try? await hub.eventLoop.submit {
            hub.sensorProxy?.stop()
            hub.sensorProxy = nil
        }.get()
        if let connection = current.connection {
            await WorkerThread.run("orientd-busstop") { connection.stop() }  // joins the bus thread
        }
    }

    private func report(_ status: String) async {
        let hub = self.hub
        try? await hub.eventLoop.submit { hub.setSystemBusStatus(status) }.get()
    }

    /// The connection when the name is served; nil otherwise (and the status says why).
    private func start(
        _ configuration: DaemonConfiguration, atStart: Bool
    ) async throws(SystemBusError) -> SystemBusConnection? {
        guard configuration.dbusMode != .off else {
            await report("off")
            return nil
        }
        // Connecting, authenticating and asking for the name are bus round trips (sd-bus waits up to
        // 25 s for a bus that does not answer): on a thread of their own, never on the event loop,
        // which serves every client meanwhile (a SIGHUP that restarts the bus delays no event).
        let connection: SystemBusConnection
        do {
            connection = try await WorkerThread.run("orientd-busopen") { () throws(SystemBusError) in
                try SystemBusConnection()
            }
        } catch {
            if configuration.dbusMode == .on && atStart { throw error }
            let level: Logger.Level = configuration.dbusMode == .on ? .error : .notice
            logger.log(
                level: level, "the system bus is not reachable: net.hadess.SensorProxy is not served",
                metadata: ["reason": "\(error)"])
            await report("not served: the system bus is not reachable (\(error))")
            return nil
        }
        if case .refused(let reason) = await WorkerThread.run("orientd-busname", { connection.requestName() }) {
            logger.warning("net.hadess.SensorProxy is not served", metadata: ["reason": "\(reason)"])
            await report("not served: \(reason)")
            await WorkerThread.run("orientd-busstop") { connection.stop() }
            return nil
        }
        let hub = self.hub, logger = self.logger
        let checksPolkit = configuration.dbusPolkit
        let frontEnd = try? await hub.eventLoop.submit {
            let frontEnd = SensorProxyFrontEnd(hub: hub, checksPolkit: checksPolkit, submit: { connection.submit($0) })
            hub.sensorProxy = frontEnd
            frontEnd.start()
            hub.setSystemBusStatus("serving")
            return frontEnd
        }.get()
        connection.start { event in
            hub.eventLoop.execute {
                switch event {
                case .nameLost, .disconnected:
                    let reason =
                        if case .disconnected(let text) = event { text } else {
                            "another process took \(SystemBusConnection.wellKnownName) over"
                        }
                    logger.warning("net.hadess.SensorProxy is no longer served", metadata: ["reason": "\(reason)"])
                    // Only if this front end is still the hub's (a reload may have replaced it).
                    guard let frontEnd, hub.sensorProxy === frontEnd else { return }
                    frontEnd.stop()
                    hub.sensorProxy = nil
                    hub.setSystemBusStatus("not served: \(reason)")
                default:
                    frontEnd?.handle(event)
                }
            }
        }
        logger.notice("serving net.hadess.SensorProxy on the system bus", metadata: ["polkit": "\(checksPolkit)"])
        return connection
    }
}
