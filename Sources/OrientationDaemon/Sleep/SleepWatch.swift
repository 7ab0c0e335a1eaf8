import CSdBus
import NIOConcurrencyHelpers
import SensorCore

#if canImport(Glibc)
import Glibc
#endif

/// What logind says of sleep, as the daemon hears it from ``SleepWatch``.
enum SleepNews: Sendable, Equatable {
    /// logind is followed; `delayRefused` says why it holds no delay inhibitor, if it could not
    /// take one (the sensors then stop as the system sleeps, not before).
    case following(delayRefused: String?)
    /// logind cannot be followed (it is not on the bus): a sleep is noticed by the clock alone.
    case notFollowed(String)
    /// `PrepareForSleep(true)`: stop reading, then ``SleepWatch/readyToSleep()``.
    case preparing
    /// `PrepareForSleep(false)`: the system resumed (or the sleep was called off).
    case resumed
}

/// logind's sleep, followed on a system-bus connection of its own, owned by a thread of its own
/// (`orientd-sleep`, ``BusThread``): it hears `PrepareForSleep` and holds a *delay* inhibitor
/// (`Inhibit("sleep", …, "delay")`), so that before the system sleeps the daemon stops every
/// sensor read and closes its buffers, and then lets it go (``readyToSleep()``). After each
/// resume it takes a new one for the next sleep. logind waits for a delay inhibitor at most
/// `InhibitDelayMaxSec` (5 s by default): a daemon that hangs cannot keep the system awake.
///
/// Why its own connection and not net.hadess.SensorProxy's: that one exists only while the
/// daemon serves the bus (`[dbus] mode`), and sleep matters on every device.
///
/// Invariant for `@unchecked Sendable`: `bus`, `slots`, `inhibitor`, `inhibiting`, `onNews` and
/// `said` are used by one thread at a time: the owner's before ``start(onNews:)`` and after ``stop()``,
/// the bus thread in between; other threads only ``readyToSleep()``, through `thread`'s inbox.
final class SleepWatch: @unchecked Sendable {
    private let bus: OpaquePointer
    private var slots: [OpaquePointer?] = []
    /// The delay inhibitor's descriptor (-1: none held); closing it lets the system sleep.
    private var inhibitor: Int32 = -1
    private var inhibiting = false
    /// The bus thread; its inbox says whether every sensor has stopped (``readyToSleep()``).
    private let thread = BusThread<Bool>(empty: false)
    private var onNews: @Sendable (SleepNews) -> Void = { _ in }
    /// Whether logind's answer to the first inhibitor was said (later ones are news only when
    /// they fail).
    private var said = false

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set) and listens for
    /// `PrepareForSleep`; throws when there is no system bus.
    init() throws(SystemBusError) {
        var connection: OpaquePointer?
        let opened = sd_bus_open_system(&connection)
        guard opened >= 0, let connection else {
            throw SystemBusError(operation: "connecting to the system bus", code: -opened)
        }
        bus = connection
        var slot: OpaquePointer?
        let watched = orientd_logind_watch_sleep(
            bus, &slot,
            { message, context, _ in
                Unmanaged<SleepWatch>.fromOpaque(context!).takeUnretainedValue().prepareForSleep(message!)
            }, Unmanaged.passUnretained(self).toOpaque())
        guard watched >= 0 else {
            sd_bus_flush_close_unref(connection)
            throw SystemBusError(operation: "listening for logind's PrepareForSleep", code: -watched)
        }
        slots = [slot]
    }

    /// Starts the bus thread, which takes the first inhibitor; `onNews` is called on it.
    func start(onNews: @escaping @Sendable (SleepNews) -> Void) {
        self.onNews = onNews
        thread.start(name: "orientd-sleep") { [self] in run() }
    }

    /// Every sensor has stopped reading: the delay inhibitor goes, and the system may sleep (from
    /// any thread).
    func readyToSleep() {
        thread.hand { $0 = true }
    }

    /// Ends the thread, gives any inhibitor back and closes the connection.
    func stop() {
        thread.stop()
        onNews = { _ in }
        releaseInhibitor()
        for slot in slots { sd_bus_slot_unref(slot) }
        slots = []
        sd_bus_flush_close_unref(bus)
    }

    // MARK: - The bus thread

    private func run() {
        inhibit()
        let broke = thread.run(bus) { stopped in
            if stopped { releaseInhibitor() }
        }
        if let broke {
            onNews(.notFollowed("the system bus connection broke (\(String(cString: strerror(-broke))))"))
        }
    }

    private func releaseInhibitor() {
        guard inhibitor >= 0 else { return }
        close(inhibitor)
        inhibitor = -1
    }

    /// Asks logind for a delay inhibitor (its answer comes to ``inhibited(_:)``).
    private func inhibit() {
        guard inhibitor < 0, !inhibiting else { return }
        let asked = orientd_logind_inhibit_sleep_async(
            bus, nil, "orientd", "stops reading the sensors and closes their buffers",
            { reply, context, _ in
                Unmanaged<SleepWatch>.fromOpaque(context!).takeUnretainedValue().inhibited(reply!)
            }, Unmanaged.passUnretained(self).toOpaque())
        if asked < 0 {
            say(.following(delayRefused: "asking logind for a delay inhibitor: \(String(cString: strerror(-asked)))"))
        } else {
            inhibiting = true
        }
    }

    private func inhibited(_ reply: OpaquePointer) -> Int32 {
        inhibiting = false
        var name: UnsafePointer<CChar>?, text: UnsafePointer<CChar>?
        let fd = orientd_logind_read_inhibitor(reply, &name, &text)
        guard fd < 0 else {
            inhibitor = fd
            say(.following(delayRefused: nil))
            return 0
        }
        let errorName = name.map { String(cString: $0) }
        if errorName == "org.freedesktop.DBus.Error.ServiceUnknown"
            || errorName == "org.freedesktop.DBus.Error.NameHasNoOwner"
        {
            say(.notFollowed("logind is not on the system bus"))
        } else {
            let detail = text.map { String(cString: $0) } ?? String(cString: strerror(-fd))
            say(.following(delayRefused: "logind refused a delay inhibitor (\(errorName ?? "error"): \(detail))"))
        }
        return 0
    }

    /// The first answer is said whatever it is; later ones only when they fail.
    private func say(_ news: SleepNews) {
        defer { said = true }
        if !said || news != .following(delayRefused: nil) { onNews(news) }
    }

    private func prepareForSleep(_ message: OpaquePointer) -> Int32 {
        var sleeping: Int32 = 0
        guard orientd_bus_read_boolean(message, &sleeping) >= 0 else { return 0 }
        if sleeping != 0 {
            onNews(.preparing)
        } else {
            releaseInhibitor()  // the sleep was called off before the daemon was ready: not held twice
            inhibit()  // for the next sleep
            onNews(.resumed)
        }
        return 0
    }
}
