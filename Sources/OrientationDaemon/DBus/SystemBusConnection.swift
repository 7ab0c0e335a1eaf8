import CSdBus
import NIOConcurrencyHelpers
import OrientationCore
import OrientationProtocol
import SensorCore

#if canImport(Glibc)
import Glibc
#endif

/// Why the system bus cannot be served: the call that failed and its errno.
public struct SystemBusError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var code: Int32

    public var description: String { "\(operation): \(String(cString: strerror(code)))" }
}

/// A method call of net.hadess.SensorProxy, kept by the bus thread until the front end answers it.
/// The front end holds only this value; the message stays the bus thread's.
struct BusCall: Hashable, Sendable {
    var id: Int
    /// The caller's unique bus name (`:1.42`).
    var sender: String
    var method: SensorProxyMethod
    /// The caller's uid as the bus driver tells it (nil if it could not): claims are checked fairly
    /// across users.
    var uid: UInt32? = nil
}

/// What the bus thread reports to the front end.
enum SystemBusEvent: Sendable, Equatable {
    /// A method call to answer with ``SystemBusCommand/reply(_:)`` or ``SystemBusCommand/fail(_:name:message:)``.
    case call(BusCall)
    /// A unique name left the bus (its claims end).
    case nameVanished(String)
    /// Another process took net.hadess.SensorProxy over.
    case nameLost
    /// The answer to ``SystemBusCommand/authorize(_:action:)`` or ``SystemBusCommand/identify(_:)``.
    case authorization(BusCall, BusAuthorization)
    /// The bus connection broke; the front end is gone until the daemon reconnects (SIGHUP).
    case disconnected(String)
}

/// polkit's answer, or the caller's identity when polkit is asked nothing or is not there.
enum BusAuthorization: Sendable, Equatable {
    case allowed
    case denied
    /// polkit is not on the bus (no owner of org.freedesktop.PolicyKit1).
    case polkitAbsent
    /// The caller's process, as the bus driver knows it.
    case identity(PeerCredentials)
    /// polkit or the bus driver answered with an error.
    case failed(String)
}

/// What the front end asks of the bus thread.
enum SystemBusCommand: Sendable, Equatable {
    case reply(BusCall)
    case fail(BusCall, name: String, message: String)
    /// New property values (Get reads them from now on).
    case setValues(SensorProxyValues)
    /// PropertiesChanged with the current values of `changes`, to one unique name.
    case emitChanged(to: String, SensorProxyValues.Changes)
    case authorize(BusCall, action: String)
    /// Asks the bus driver who the caller is (for claims without polkit).
    case identify(BusCall)
    /// A call whose sender left the bus before it was answered: nothing to send, the message goes.
    case forget(BusCall)
}

/// The well-known name and whether this connection has it.
enum BusNameOutcome: Sendable, Equatable {
    case acquired
    /// Held by a process that does not allow replacement, or the bus policy refuses it to us.
    case refused(String)
}

/// The system bus connection behind the net.hadess.SensorProxy front end: sd-bus, owned by one
/// thread of its own (`orientd-dbus`), which serves the objects' property reads from the values it
/// was last given and passes method calls, vanished names and polkit's answers to the front end.
///
/// Why a thread and not the hub's event loop: SwiftNIO has no public way to watch a descriptor it
/// does not own, and sd-bus is not thread-safe (``BusThread``).
///
/// Invariant for `@unchecked Sendable`: `bus`, `object`, `slots`, `strings`, `openCalls`, `nextCallID`
/// and `onEvent` are used by one thread at a time: the owner's before ``start(onEvent:)``
/// starts the bus thread and after ``stop()`` has joined it, the bus thread (``run()`` and the
/// sd-bus callbacks it dispatches) in between; other threads only ``submit(_:)``, through `thread`'s
/// inbox.
final class SystemBusConnection: @unchecked Sendable {
    static let wellKnownName = "net.hadess.SensorProxy"

    private let bus: OpaquePointer
    /// The objects, built from ``SensorProxyProperty/table`` and ``SensorProxyMethod/table``.
    private let object: OpaquePointer
    private var slots: [OpaquePointer?] = []
    /// The string values the object points at, by property index (bus thread only).
    private var strings: [Int: UnsafeMutablePointer<CChar>] = [:]
    /// The bus thread and the commands handed to it.
    private let thread = BusThread<[SystemBusCommand]>(empty: [])
    private var onEvent: @Sendable (SystemBusEvent) -> Void = { _ in }
    /// Calls not answered yet, by id, with the message's reference (bus thread only).
    private var openCalls: [Int: OpaquePointer] = [:]
    private var nextCallID = 0
    /// Each calling unique name's uid, asked of the bus driver once (bus thread only; a name
    /// leaves the table when it leaves the bus).
    private var senderUIDs: [String: UInt32] = [:]

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set) and adds the two objects.
    init() throws(SystemBusError) {
        var connection: OpaquePointer?
        let opened = sd_bus_open_system(&connection)
        guard opened >= 0, let connection else {
            throw SystemBusError(operation: "connecting to the system bus", code: -opened)
        }
        bus = connection
        guard let made = Self.makeObject() else {
            sd_bus_flush_close_unref(connection)
            throw SystemBusError(operation: "building /net/hadess/SensorProxy", code: ENOMEM)
        }
        object = made
        orientd_sp_object_set_handler(
            object,
            { message, method, context in
                let connection = Unmanaged<SystemBusConnection>.fromOpaque(context!).takeUnretainedValue()
                return connection.received(message!, method: Int(method))
            }, Unmanaged.passUnretained(self).toOpaque())
        let context = Unmanaged.passUnretained(self).toOpaque()
        var objects = [OpaquePointer?](repeating: nil, count: SensorProxyObject.allCases.count)
        var owners: OpaquePointer?, lost: OpaquePointer?, arguments: OpaquePointer?
        var result = orientd_sp_add_objects(bus, object, &objects)
        if result >= 0 { result = orientd_bus_check_standard_arguments(bus, &arguments) }
        if result >= 0 {
            result = orientd_bus_watch_name_owners(
                bus, &owners,
                { message, context, _ in
                    Unmanaged<SystemBusConnection>.fromOpaque(context!).takeUnretainedValue().nameOwnerChanged(message!)
                }, context)
        }
        if result >= 0 {
            result = orientd_bus_watch_name_lost(
                bus, &lost,
                { message, context, _ in
                    Unmanaged<SystemBusConnection>.fromOpaque(context!).takeUnretainedValue().nameLost(message!)
                }, context)
        }
        slots = objects + [owners, lost, arguments]
        guard result >= 0 else {
            release()
            throw SystemBusError(operation: "serving /net/hadess/SensorProxy", code: -result)
        }
    }

    /// Asks for net.hadess.SensorProxy, replacing an owner that allows it (iio-sensor-proxy does).
    func requestName() -> BusNameOutcome {
        let result = sd_bus_request_name(bus, Self.wellKnownName, UInt64(SD_BUS_NAME_REPLACE_EXISTING))
        switch result {
        case 0...: return .acquired
        case -EEXIST:
            return .refused("\(Self.wellKnownName) is owned by another process that does not allow replacement")
        case -EACCES, -EPERM:
            return .refused(
                "the bus policy does not let this user own \(Self.wellKnownName) (see /usr/share/dbus-1/system.d/)")
        default: return .refused("requesting \(Self.wellKnownName): \(String(cString: strerror(-result)))")
        }
    }

    /// Starts the bus thread; `onEvent` is called on it.
    func start(onEvent: @escaping @Sendable (SystemBusEvent) -> Void) {
        self.onEvent = onEvent
        thread.start(name: "orientd-dbus") { [self] in run() }
    }

    /// Hands a command to the bus thread (from any thread).
    func submit(_ command: SystemBusCommand) {
        thread.hand { $0.append(command) }
    }

    /// Stops the thread, gives the name back and closes the connection. Calls not answered yet are
    /// dropped (their callers get an error from the bus when the connection closes).
    func stop() {
        thread.stop()
        onEvent = { _ in }  // the front end it names holds this connection: no cycle outlives the stop
        release()
    }

    private func release() {
        for message in openCalls.values { sd_bus_message_unref(message) }
        openCalls = [:]
        for slot in slots { sd_bus_slot_unref(slot) }
        slots = []
        sd_bus_flush_close_unref(bus)
        orientd_sp_object_free(object)
        for string in strings.values { free(string) }
        strings = [:]
    }

    /// The C objects from the Swift tables (the C side copies every name).
    private static func makeObject() -> OpaquePointer? {
        let objects = SensorProxyObject.allCases, properties = SensorProxyProperty.table
        let methods = SensorProxyMethod.table
        let names = objects.flatMap { [$0.path, $0.interface] } + properties.map(\.name) + methods.map(\.name)
        let copies = names.map { strdup($0)! }
        defer { copies.forEach { free($0) } }
        var index = 0
        func next() -> UnsafePointer<CChar> {
            defer { index += 1 }
            return UnsafePointer(copies[index])
        }
        let objectSpecs = objects.map { _ in orientd_sp_object_spec(path: next(), interface: next()) }
        let propertySpecs = properties.map {
            orientd_sp_property_spec(
                name: next(), type: CChar(UInt8(ascii: $0.initial.type.unicodeScalars.first!)),
                object: Int32($0.object.rawValue))
        }
        let methodSpecs = methods.map { orientd_sp_method_spec(name: next(), object: Int32($0.object.rawValue)) }
        return orientd_sp_object_new(
            objectSpecs, Int32(objectSpecs.count), propertySpecs, Int32(propertySpecs.count), methodSpecs,
            Int32(methodSpecs.count), nil, nil)
    }

    // MARK: - The bus thread

    private func run() {
        // Commands first: values set before the thread started (or while it slept) are served to
        // the calls waiting on the socket, never the ones before them.
        let broke = thread.run(bus) { commands in commands.forEach(perform) }
        if let broke {
            onEvent(.disconnected("the system bus connection broke: \(String(cString: strerror(-broke)))"))
        }
    }

    private func received(_ message: OpaquePointer, method index: Int) -> Int32 {
        guard SensorProxyMethod.table.indices.contains(index), let sender = sd_bus_message_get_sender(message) else {
            return -EINVAL
        }
        let id = nextCallID
        nextCallID += 1
        openCalls[id] = sd_bus_message_ref(message)
        let name = String(cString: sender)
        onEvent(
            .call(BusCall(id: id, sender: name, method: SensorProxyMethod.table[index], uid: uid(of: name, message))))
        return 1
    }

    /// The uid of the unique name that sent `message`: asked of the bus driver the first time.
    private func uid(of name: String, _ message: OpaquePointer) -> UInt32? {
        if let known = senderUIDs[name] { return known }
        var uid: uid_t = 0, gid: gid_t = 0, pid: pid_t = 0
        guard orientd_bus_sender_identity(message, &uid, &gid, &pid) >= 0 else { return nil }
        senderUIDs[name] = uid
        return uid
    }

    private func nameOwnerChanged(_ message: OpaquePointer) -> Int32 {
        var name: UnsafePointer<CChar>?, old: UnsafePointer<CChar>?, new: UnsafePointer<CChar>?
        guard orientd_bus_read_name_owner_changed(message, &name, &old, &new) >= 0, let name, let new else { return 0 }
        // A unique name leaving: its new owner is empty.
        if name.pointee == CChar(UInt8(ascii: ":")), new.pointee == 0 {
            let unique = String(cString: name)
            senderUIDs[unique] = nil
            onEvent(.nameVanished(unique))
        }
        return 0
    }

    private func nameLost(_ message: OpaquePointer) -> Int32 {
        var name: UnsafePointer<CChar>?
        if orientd_bus_read_string(message, &name) >= 0, let name, String(cString: name) == Self.wellKnownName {
            onEvent(.nameLost)
        }
        return 0
    }

    private func perform(_ command: SystemBusCommand) {
        switch command {
        case .reply(let call):
            guard let message = openCalls.removeValue(forKey: call.id) else { return }
            _ = orientd_bus_reply_empty(message)
            sd_bus_message_unref(message)
        case .fail(let call, let name, let text):
            guard let message = openCalls.removeValue(forKey: call.id) else { return }
            _ = orientd_bus_reply_error(message, name, text)
            sd_bus_message_unref(message)
        case .forget(let call):
            if let message = openCalls.removeValue(forKey: call.id) { sd_bus_message_unref(message) }
        case .setValues(let values):
            for (index, value) in values.values.enumerated() {
                switch value {
                case .boolean(let flag):
                    orientd_sp_set_value(
                        object, Int32(index), orientd_sp_value(boolean: flag ? 1 : 0, number: 0, string: nil))
                case .double(let number):
                    orientd_sp_set_value(
                        object, Int32(index), orientd_sp_value(boolean: 0, number: number, string: nil))
                case .string(let text):
                    // The object points at the copy until the next one replaces it.
                    let copy = strdup(text)!
                    orientd_sp_set_value(object, Int32(index), orientd_sp_value(boolean: 0, number: 0, string: copy))
                    if let old = strings.updateValue(copy, forKey: index) { free(old) }
                }
            }
        case .emitChanged(let destination, let changes):
            _ = orientd_sp_emit_changed(bus, object, destination, UInt(changes.rawValue))
        case .authorize(let call, let action):
            let request = Unmanaged.passRetained(PendingAuthorization(connection: self, call: call)).toOpaque()
            let result = orientd_bus_check_authorization_async(
                bus, nil, call.sender, action,
                { reply, context, _ in
                    let request = Unmanaged<PendingAuthorization>.fromOpaque(context!).takeRetainedValue()
                    request.connection.onEvent(
                        .authorization(request.call, SystemBusConnection.readAuthorization(reply!)))
                    return 0
                }, request)
            if result < 0 {
                Unmanaged<PendingAuthorization>.fromOpaque(request).release()
                onEvent(.authorization(call, .failed("asking polkit: \(String(cString: strerror(-result)))")))
            }
        case .identify(let call):
            guard let message = openCalls[call.id] else { return }
            var uid: uid_t = 0, gid: gid_t = 0, pid: pid_t = 0
            let result = orientd_bus_sender_identity(message, &uid, &gid, &pid)
            onEvent(
                .authorization(
                    call,
                    result < 0
                        ? .failed("asking the bus who \(call.sender) is: \(String(cString: strerror(-result)))")
                        : .identity(PeerCredentials(pid: pid, uid: uid, gid: gid))))
        }
    }

    private static func readAuthorization(_ reply: OpaquePointer) -> BusAuthorization {
        if sd_bus_message_is_method_error(reply, nil) != 0 {
            let error = sd_bus_message_get_error(reply)
            let name = error?.pointee.name.map { String(cString: $0) } ?? "an error"
            if name == "org.freedesktop.DBus.Error.ServiceUnknown"
                || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
            {
                return .polkitAbsent
            }
            let text = error?.pointee.message.map { String(cString: $0) } ?? ""
            return .failed("polkit answered \(name)\(text.isEmpty ? "" : ": \(text)")")
        }
        switch orientd_bus_read_authorization(reply) {
        case 1: return .allowed
        case 0: return .denied
        case let code: return .failed("polkit's answer could not be read: \(String(cString: strerror(-code)))")
        }
    }

    private final class PendingAuthorization {
        let connection: SystemBusConnection
        let call: BusCall
        init(connection: SystemBusConnection, call: BusCall) {
            self.connection = connection
            self.call = call
        }
    }
}
