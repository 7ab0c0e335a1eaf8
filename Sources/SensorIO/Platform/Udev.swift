import CLibUdev
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A failed libudev call.
public struct UdevError: Error, Sendable, Hashable, CustomStringConvertible {
    public let operation: String
    public let code: Int32

    public var description: String { "\(operation): \(Errno.name(code)) (\(String(cString: strerror(code))))" }
}

/// The libudev library context (`struct udev`). One per source; not thread-safe.
public final class Udev {
    let pointer: OpaquePointer

    public init() throws(UdevError) {
        guard let pointer = udev_new() else { throw UdevError(operation: "udev_new", code: errno) }
        self.pointer = pointer
    }

    deinit { udev_unref(pointer) }

    /// Every device of `subsystem` (`udev_enumerate_scan_devices`), in syspath order.
    public func devices(subsystem: String) throws(UdevError) -> [UdevDevice] {
        guard let enumerate = udev_enumerate_new(pointer) else {
            throw UdevError(operation: "udev_enumerate_new", code: errno)
        }
        defer { udev_enumerate_unref(enumerate) }
        var result = udev_enumerate_add_match_subsystem(enumerate, subsystem)
        if result < 0 { throw UdevError(operation: "udev_enumerate_add_match_subsystem(\(subsystem))", code: -result) }
        result = udev_enumerate_scan_devices(enumerate)
        if result < 0 { throw UdevError(operation: "udev_enumerate_scan_devices(\(subsystem))", code: -result) }
        var paths: [String] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            if let name = udev_list_entry_get_name(current) { paths.append(String(cString: name)) }
            entry = udev_list_entry_get_next(current)
        }
        return paths.sorted().compactMap { device(syspath: $0) }
    }

    /// The device at a sysfs path, or nil if it is not there (`udev_device_new_from_syspath`).
    public func device(syspath: String) -> UdevDevice? {
        udev_device_new_from_syspath(pointer, syspath).map { UdevDevice(owning: $0, udev: self) }
    }

    /// The device of a subsystem by name (`dmi`, `id`), or nil (`udev_device_new_from_subsystem_sysname`).
    public func device(subsystem: String, sysname: String) -> UdevDevice? {
        udev_device_new_from_subsystem_sysname(pointer, subsystem, sysname).map { UdevDevice(owning: $0, udev: self) }
    }
}

/// A udev device (`struct udev_device`); owns its reference. Attribute values are cached by libudev
/// for the life of the object, so discovery makes fresh ones.
public final class UdevDevice {
    let pointer: OpaquePointer
    let udev: Udev

    init(owning pointer: OpaquePointer, udev: Udev) {
        self.pointer = pointer
        self.udev = udev
    }

    deinit { udev_device_unref(pointer) }

    public var syspath: String { String(cString: udev_device_get_syspath(pointer)) }
    /// `iio:device0`.
    public var sysname: String { String(cString: udev_device_get_sysname(pointer)) }
    public var deviceNode: String? { udev_device_get_devnode(pointer).map { String(cString: $0) } }
    /// The parent device (an `eventN` node's `inputN`), with a reference of its own.
    public var parent: UdevDevice? {
        udev_device_get_parent(pointer).map { UdevDevice(owning: udev_device_ref($0), udev: udev) }
    }
    /// `iio`, `i2c`, `platform`…; nil for a device without one.
    public var subsystem: String? { udev_device_get_subsystem(pointer).map { String(cString: $0) } }
    /// `add`, `remove`, `change`… for devices received from a monitor; nil for enumerated ones.
    public var action: String? { udev_device_get_action(pointer).map { String(cString: $0) } }

    /// A udev property (`ACCEL_MOUNT_MATRIX`, `ACCEL_LOCATION`), as set by rules and hwdb.
    public func property(_ name: String) -> String? {
        udev_device_get_property_value(pointer, name).map { String(cString: $0) }
    }

    /// True when the device has the sysfs attribute (relative path), readable now or not: a sensor
    /// whose value fails to read is still that sensor, and its faults are reported as such.
    public func hasAttribute(_ name: String) -> Bool {
        access(syspath + "/" + name, F_OK) == 0
    }

    /// A sysfs attribute, relative to the device (`scan_elements/in_accel_x_en` works), trailing
    /// whitespace removed; nil when absent or unreadable.
    public func attribute(_ name: String) -> String? {
        guard let value = udev_device_get_sysattr_value(pointer, name) else { return nil }
        var text = String(cString: value)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }
}

/// A udev monitor for one subsystem (`udev_monitor_new_from_netlink("udev")`): its descriptor becomes
/// readable when a device is added, removed or changed. Owns the monitor.
public final class UdevMonitor {
    let pointer: OpaquePointer
    let udev: Udev

    public init(udev: Udev, subsystem: String) throws(UdevError) {
        guard let pointer = udev_monitor_new_from_netlink(udev.pointer, "udev") else {
            throw UdevError(operation: "udev_monitor_new_from_netlink(udev)", code: errno)
        }
        self.pointer = pointer
        self.udev = udev
        var result = udev_monitor_filter_add_match_subsystem_devtype(pointer, subsystem, nil)
        if result < 0 {
            throw UdevError(operation: "udev_monitor_filter_add_match_subsystem_devtype(\(subsystem))", code: -result)
        }
        result = udev_monitor_enable_receiving(pointer)
        if result < 0 { throw UdevError(operation: "udev_monitor_enable_receiving", code: -result) }
    }

    deinit { udev_monitor_unref(pointer) }

    /// Becomes readable when an event is waiting; owned by the monitor.
    public var fileDescriptor: Int32 { udev_monitor_get_fd(pointer) }

    /// The next waiting event's device, or nil when none is waiting (the descriptor is non-blocking).
    public func receive() -> UdevDevice? {
        udev_monitor_receive_device(pointer).map { UdevDevice(owning: $0, udev: udev) }
    }
}

/// What udev said since a watch's handler last ran, in order: each device's action (`add`,
/// `remove`, `change` after a hwdb entry was installed…) and syspath.
struct UdevChanges {
    var devices: [(action: String?, syspath: String)] = []

    var removed: [String] { devices.filter { $0.action == "remove" }.map(\.syspath) }
}

/// The udev watch every sensor source stands on: a libudev context of its own (for its discovery)
/// and monitors on the subsystems its drivers' devices live in, whose events are handled on the
/// source's queue as they arrive (the queue watches their descriptors: no polling of sysfs).
/// ``cancel()`` stops the handler for good; dropping the watch releases udev.
final class UdevWatch {
    /// For discovery on the source's queue.
    let udev: Udev
    private var sources: [any DispatchSourceRead] = []

    /// `changed` runs on `queue` with what a monitor had waiting.
    init(subsystems: [String], queue: DispatchQueue, changed: @escaping (UdevChanges) -> Void) throws(UdevError) {
        udev = try Udev()
        for subsystem in subsystems {
            let monitor = try UdevMonitor(udev: udev, subsystem: subsystem)
            let source = DispatchSource.makeReadSource(fileDescriptor: monitor.fileDescriptor, queue: queue)
            source.setEventHandler { [monitor] in
                var changes = UdevChanges()
                while let device = monitor.receive() { changes.devices.append((device.action, device.syspath)) }
                if !changes.devices.isEmpty { changed(changes) }
            }
            sources.append(source)
            source.resume()
        }
    }

    /// Call on the handler's queue.
    func cancel() {
        for source in sources { source.cancel() }
        sources = []
    }
}
