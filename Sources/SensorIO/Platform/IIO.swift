import CLibIIO
import OrientationCore
import SensorCore
#if canImport(Glibc)
import Glibc
#endif

/// A failed libiio call: which call (and attribute), and the errno it returned.
public struct IIOError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The C function and its subject, e.g. `iio_channel_attr_read(iio:device0 accel_x raw)`.
    public let operation: String
    /// A positive errno value.
    public let code: Int32

    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = abs(code)
    }

    /// `EIO (Input/output error)`.
    public var errnoDescription: String { "\(Errno.name(code)) (\(String(cString: strerror(code))))" }
    public var description: String { "\(operation): \(errnoDescription)" }

    /// The device is gone (unplugged, driver unbound, remote host lost).
    public var meansDeviceGone: Bool { code == ENODEV }
}

/// Names for the errno values a sensor produces.
public enum Errno {
    public static func name(_ code: Int32) -> String {
        switch code {
        case EPERM: "EPERM"
        case ENOENT: "ENOENT"
        case EINTR: "EINTR"
        case EIO: "EIO"
        case ENXIO: "ENXIO"
        case EBADF: "EBADF"
        case EAGAIN: "EAGAIN"
        case ENOMEM: "ENOMEM"
        case EACCES: "EACCES"
        case EBUSY: "EBUSY"
        case ENODEV: "ENODEV"
        case EISDIR: "EISDIR"
        case EINVAL: "EINVAL"
        case EFBIG: "EFBIG"
        case EPIPE: "EPIPE"
        case ETIMEDOUT: "ETIMEDOUT"
        case ECONNREFUSED: "ECONNREFUSED"
        case ECONNRESET: "ECONNRESET"
        case EHOSTUNREACH: "EHOSTUNREACH"
        case ENETUNREACH: "ENETUNREACH"
        case ENOSYS: "ENOSYS"
        case ENOTTY: "ENOTTY"
        default: "errno \(code)"
        }
    }
}

/// An IIO context (`struct iio_context`): the local sysfs tree or an `iiod` on the network. Owns the
/// context and destroys it when the last reference (including devices and buffers) goes away.
/// Not thread-safe: one thread uses a context at a time.
public final class IIOContext {
    let pointer: OpaquePointer
    /// `local:` or `ip:HOST`.
    public let uri: String

    private init(pointer: OpaquePointer, uri: String) {
        self.pointer = pointer
        self.uri = uri
    }

    deinit { iio_context_destroy(pointer) }

    /// The local devices under /sys/bus/iio (`iio_create_local_context`).
    public static func local() throws(IIOError) -> IIOContext {
        guard let pointer = iio_create_local_context() else { throw IIOError("iio_create_local_context", code: errno) }
        return IIOContext(pointer: pointer, uri: "local:")
    }

    /// The devices `iiod` serves on `host` (`iio_create_network_context`, TCP port 30431).
    public static func network(host: String) throws(IIOError) -> IIOContext {
        guard let pointer = iio_create_network_context(host) else {
            throw IIOError("iio_create_network_context(\(host))", code: errno)
        }
        return IIOContext(pointer: pointer, uri: "ip:\(host)")
    }

    /// Timeout of blocking operations (buffer refills, network requests); 0 waits forever.
    public func setTimeout(milliseconds: UInt32) throws(IIOError) {
        let result = iio_context_set_timeout(pointer, milliseconds)
        if result < 0 { throw IIOError("iio_context_set_timeout(\(uri))", code: result) }
    }

    public var devices: [IIODevice] {
        (0..<iio_context_get_devices_count(pointer)).compactMap { index in
            iio_context_get_device(pointer, index).map { IIODevice(context: self, pointer: $0) }
        }
    }

    /// The device with this id (`iio:device0`), name or label (`iio_context_find_device`).
    public func device(_ identifier: String) -> IIODevice? {
        iio_context_find_device(pointer, identifier).map { IIODevice(context: self, pointer: $0) }
    }
}

/// A device of a context (`struct iio_device`); keeps its context alive.
public struct IIODevice {
    let context: IIOContext
    let pointer: OpaquePointer

    /// `iio:deviceN` or `triggerN`.
    public var id: String { String(cString: iio_device_get_id(pointer)) }
    public var name: String? { iio_device_get_name(pointer).map { String(cString: $0) } }
    public var label: String? { iio_device_get_label(pointer).map { String(cString: $0) } }
    public var isTrigger: Bool { iio_device_is_trigger(pointer) }

    public var channels: [IIOChannel] {
        (0..<iio_device_get_channels_count(pointer)).compactMap { index in
            iio_device_get_channel(pointer, index).map { IIOChannel(device: self, pointer: $0) }
        }
    }

    /// The input channel with this id (`accel_x`).
    public func inputChannel(_ id: String) -> IIOChannel? {
        iio_device_find_channel(pointer, id, false).map { IIOChannel(device: self, pointer: $0) }
    }

    public func hasAttribute(_ name: String) -> Bool { iio_device_find_attr(pointer, name) != nil }

    /// Reads a device attribute (`iio_device_attr_read`); the text without its trailing newline.
    public func readAttribute(_ name: String) throws(IIOError) -> String {
        let (text, count) = readAttributeText(capacity: 1024) { iio_device_attr_read(pointer, name, $0, $1) }
        if count < 0 { throw IIOError("iio_device_attr_read(\(id) \(name))", code: Int32(count)) }
        return text
    }

    public func writeAttribute(_ name: String, _ value: String) throws(IIOError) {
        let count = iio_device_attr_write(pointer, name, value)
        if count < 0 { throw IIOError("iio_device_attr_write(\(id) \(name)=\(value))", code: Int32(count)) }
    }

    /// Sets (or with nil clears) the trigger that paces buffered capture (`iio_device_set_trigger`).
    public func setTrigger(_ trigger: IIODevice?) throws(IIOError) {
        let result = iio_device_set_trigger(pointer, trigger?.pointer)
        if result < 0 { throw IIOError("iio_device_set_trigger(\(id), \(trigger?.name ?? "none"))", code: result) }
    }

    /// The trigger currently set, if any.
    public var currentTrigger: IIODevice? {
        var trigger: OpaquePointer?
        guard iio_device_get_trigger(pointer, &trigger) == 0, let trigger else { return nil }
        return IIODevice(context: context, pointer: trigger)
    }

    /// Opens the device's buffer with the enabled channels (`iio_device_create_buffer`).
    public func createBuffer(samples: Int) throws(IIOError) -> IIOBuffer {
        guard let buffer = iio_device_create_buffer(pointer, samples, false) else {
            throw IIOError("iio_device_create_buffer(\(id), \(samples) samples)", code: errno)
        }
        return IIOBuffer(device: self, pointer: buffer)
    }
}

/// A channel of a device (`struct iio_channel`); keeps the context alive.
public struct IIOChannel {
    let device: IIODevice
    let pointer: OpaquePointer

    /// `accel_x`, `timestamp`.
    public var id: String { String(cString: iio_channel_get_id(pointer)) }
    /// The extended name libiio splits off the id (`tilt_comp` of `rot_from_north_magnetic`), if any.
    public var name: String? { iio_channel_get_name(pointer).map { String(cString: $0) } }
    /// The sysfs spelling without `in_`: the id and the extended name joined
    /// (`rot_from_north_magnetic_tilt_comp`), as the kernel's ABI documents channels.
    public var sysfsName: String { name.map { "\(id)_\($0)" } ?? id }
    public var isOutput: Bool { iio_channel_is_output(pointer) }
    /// True when the channel can be captured through the buffer (it has scan elements).
    public var isScanElement: Bool { iio_channel_is_scan_element(pointer) }

    public func hasAttribute(_ name: String) -> Bool { iio_channel_find_attr(pointer, name) != nil }

    /// The sysfs file name of a channel attribute (`in_accel_x_raw` for `raw`), if the channel has it.
    public func attributeFileName(_ name: String) -> String? {
        iio_channel_attr_get_filename(pointer, name).map { String(cString: $0) }
    }

    /// Reads a channel attribute (`iio_channel_attr_read`), e.g. `raw`, `scale`, `offset`.
    public func readAttribute(_ name: String) throws(IIOError) -> String {
        let (text, count) = readAttributeText(capacity: 256) { iio_channel_attr_read(pointer, name, $0, $1) }
        if count < 0 { throw IIOError("iio_channel_attr_read(\(device.id) \(id) \(name))", code: Int32(count)) }
        return text
    }

    /// What a numeric attribute held: its value, or (rarely) the text that is not a number.
    public enum Number: Sendable, Equatable {
        case value(Double)
        case notANumber(String)

        /// The value of attribute text as read (up to a NUL); see ``AttributeNumber``.
        init(_ text: UnsafeRawBufferPointer) {
            let bytes = UnsafeRawBufferPointer(rebasing: text[..<(text.firstIndex(of: 0) ?? text.endIndex)])
            if let value = AttributeNumber.parse(bytes) {
                self = .value(value)
            } else {
                self = .notANumber(String(String(decoding: bytes, as: UTF8.self).trimmingWhitespace()))
            }
        }
    }

    /// Reads a numeric attribute (the per-sample `raw`) without building strings when it holds a
    /// number; see ``AttributeNumber``.
    /// `name` is a literal, so that no C string is built per call.
    public func readNumber(_ name: StaticString) throws(IIOError) -> Number {
        let result = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer -> Result<Number, IIOError> in
            let count = name.withUTF8Buffer { name in
                iio_channel_attr_read(
                    pointer, UnsafeRawPointer(name.baseAddress!).assumingMemoryBound(to: CChar.self),
                    buffer.baseAddress!, buffer.count)
            }
            if count < 0 {
                return .failure(IIOError("iio_channel_attr_read(\(device.id) \(id) \(name))", code: Int32(count)))
            }
            return .success(
                Number(UnsafeRawBufferPointer(start: buffer.baseAddress, count: min(Int(count), buffer.count))))
        }
        return try result.get()
    }

    public func writeAttribute(_ name: String, _ value: String) throws(IIOError) {
        let count = iio_channel_attr_write(pointer, name, value)
        if count < 0 {
            throw IIOError("iio_channel_attr_write(\(device.id) \(id) \(name)=\(value))", code: Int32(count))
        }
    }

    public func enable() { iio_channel_enable(pointer) }
    public func disable() { iio_channel_disable(pointer) }

    /// Decodes one sample of this channel at `source` in the buffer: byte order, shift, mask and
    /// sign extension as the scan element's `type` says (`iio_channel_convert`).
    public func decode(_ source: UnsafeRawPointer) -> Int64 {
        guard let format = iio_channel_get_data_format(pointer)?.pointee else { return 0 }
        var output: UInt64 = 0
        withUnsafeMutableBytes(of: &output) { iio_channel_convert(pointer, $0.baseAddress, source) }
        let width = Int(format.length)
        guard width > 0, width < 64 else { return Int64(bitPattern: output) }
        let mask: UInt64 = (1 << UInt64(width)) - 1
        let value = output & mask
        if format.is_signed, value & (1 << UInt64(width - 1)) != 0 {
            return Int64(bitPattern: value | ~mask)
        }
        return Int64(bitPattern: value)
    }
}

/// An open device buffer (`struct iio_buffer`); destroyed (capture stopped, channels disabled) on
/// deinit. Refilled by one thread; ``cancel()`` may be called from any.
///
/// Invariant for `@unchecked Sendable`: only one thread (the acquisition's worker) calls
/// ``refill()``, ``forEachSample(of:_:)`` and ``sampleCount(of:)`` and touches `device` and its
/// context; other threads only call ``cancel()`` (`iio_buffer_cancel`, which libiio makes for
/// exactly that: waking a refill blocked on another thread) or drop their reference.
public final class IIOBuffer: @unchecked Sendable {
    let device: IIODevice
    let pointer: OpaquePointer

    init(device: IIODevice, pointer: OpaquePointer) {
        self.device = device
        self.pointer = pointer
    }

    deinit { iio_buffer_destroy(pointer) }

    /// Blocks until the buffer holds new samples (`iio_buffer_refill`); returns the bytes read.
    public func refill() throws(IIOError) -> Int {
        let count = iio_buffer_refill(pointer)
        if count < 0 { throw IIOError("iio_buffer_refill(\(device.id))", code: Int32(count)) }
        return count
    }

    /// Makes a blocked or later ``refill()`` fail with EBADF (`iio_buffer_cancel`).
    public func cancel() { iio_buffer_cancel(pointer) }

    /// Calls `body` with the address of `channel`'s value in each sample of the last refill.
    public func forEachSample(of channel: IIOChannel, _ body: (UnsafeRawPointer) -> Void) {
        let step = iio_buffer_step(pointer)
        guard step > 0, let first = iio_buffer_first(pointer, channel.pointer), let end = iio_buffer_end(pointer) else {
            return
        }
        var address = UnsafeRawPointer(first)
        let limit = UnsafeRawPointer(end)
        while address < limit {
            body(address)
            address += step
        }
    }

    /// The number of samples of the last refill.
    public func sampleCount(of channel: IIOChannel) -> Int {
        var count = 0
        forEachSample(of: channel) { _ in count += 1 }
        return count
    }
}

/// Runs one of libiio's `*_attr_read` calls into a zeroed buffer: the text up to the first NUL
/// (libiio terminates it; writes may leave one too) and the call's result (negative: an errno).
private func readAttributeText(
    capacity: Int, _ read: (UnsafeMutablePointer<CChar>, Int) -> Int
) -> (text: String, result: Int) {
    var buffer = [CChar](repeating: 0, count: capacity)
    let result = buffer.withUnsafeMutableBufferPointer { read($0.baseAddress!, $0.count) }
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return (text, result)
}

/// One sysfs attribute file of a local device, kept open and re-read from offset 0 for every sample.
///
/// Why not libiio: `iio_channel_attr_read` opens, reads and closes the file on every call (five
/// system calls and a path walk per axis). The kernel's sysfs ABI regenerates an attribute's text
/// on each read at offset 0 of an open file, so one `pread` per axis is enough. After a failed read
/// the file is reopened before the next one (a rebound driver, a replaced node).
///
/// A file replaced under the same name (a new inode: umockdev's `set_attribute` does that, and so
/// do the test fixtures of iio-sensor-proxy and of the desktops built on it) would otherwise go
/// unnoticed forever: once a second the path's inode is compared with the open file's, one stat(2)
/// per second and none per sample (the clock is read through the vDSO), and a replaced file is
/// reopened.
final class SysfsAttributeFile {
    let path: String
    private var descriptor: Int32 = -1
    /// The open file's device and inode.
    private var identity: (device: UInt64, inode: UInt64)?
    private var nextIdentityCheck = 0.0
    static let identityCheckInterval = 1.0

    init(path: String) {
        self.path = path
    }

    deinit { closeFile() }

    /// Closes the file; the next read opens it again.
    func closeFile() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    /// The attribute's value (or the text that is not a number).
    func readNumber() throws(IIOError) -> IIOChannel.Number {
        if descriptor >= 0, MonotonicClock.now() >= nextIdentityCheck, isReplaced() {
            close(descriptor)
            descriptor = -1
        }
        if descriptor < 0 {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            if descriptor < 0 { throw IIOError("open(\(path))", code: errno) }
            var status = stat()
            identity = fstat(descriptor, &status) == 0 ? (UInt64(status.st_dev), UInt64(status.st_ino)) : nil
            nextIdentityCheck = MonotonicClock.now() + Self.identityCheckInterval
        }
        let result = withUnsafeTemporaryAllocation(byteCount: 64, alignment: 1) {
            buffer -> Result<IIOChannel.Number, IIOError> in
            var count: Int
            repeat {
                count = pread(descriptor, buffer.baseAddress, buffer.count, 0)
            } while count < 0 && errno == EINTR
            if count < 0 { return .failure(IIOError("pread(\(path))", code: errno)) }
            return .success(IIOChannel.Number(UnsafeRawBufferPointer(rebasing: buffer[..<count])))
        }
        if case .failure = result {
            close(descriptor)
            descriptor = -1
        }
        return try result.get()
    }

    /// Whether the path now names another file than the one open (schedules the next check).
    private func isReplaced() -> Bool {
        nextIdentityCheck = MonotonicClock.now() + Self.identityCheckInterval
        var status = stat()
        guard let identity, stat(path, &status) == 0 else { return false }
        return (UInt64(status.st_dev), UInt64(status.st_ino)) != identity
    }
}
