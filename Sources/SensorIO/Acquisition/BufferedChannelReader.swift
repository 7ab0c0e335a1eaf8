import NIOConcurrencyHelpers
import OrientationCore
import SensorCore
#if canImport(Glibc)
import Glibc
#endif

/// Reads one channel of a local IIO device's buffer on a thread of its own, through libiio: HID
/// sensor hubs' ambient light (`in_intensity_both`) and compass
/// (`in_rot_from_north_magnetic_tilt_comp`), which report only when their value changes.
///
/// The device's other channels are disabled, the trigger set, the buffer enabled while the kind is
/// claimed and destroyed (capture stopped) by ``stop()``. A refill that times out is normal for a
/// sensor that reports on change; a device that vanishes (ENODEV) ends the reader through `lost`.
/// Values are `(value + offset) × scale`; a value that makes no sense (negative light, NaN) is a
/// fault said once per episode, and the reading is dropped.
final class BufferedChannelReader: SensorReader, Sendable {
    private let device: String
    private let conversion: any BufferConversion
    private let emit: @Sendable (KindSensorEvent) -> Void
    private let capture = BufferCapture()

    init(
        deviceID: String, channel channelID: String, trigger: String?, conversion: any BufferConversion,
        emit: @escaping @Sendable (KindSensorEvent) -> Void, lost: @escaping @Sendable (String) -> Void
    ) {
        device = deviceID
        self.conversion = conversion
        self.emit = emit
        let opened: (IIOBuffer, IIOChannel, scale: Double, offset: Double)
        do {
            opened = try Self.open(deviceID: deviceID, channelID: channelID, trigger: trigger)
        } catch {
            emit(.fault(SensorFault(kind: .openFailed, device: deviceID, detail: error.description)))
            lost(error.description)
            return
        }
        capture.start(name: conversion.readerName, buffer: opened.0, lost: lost) { [self] in
            run(buffer: opened.0, channel: opened.1, scale: opened.scale, offset: opened.offset)
        }
    }

    func stop() { capture.stop() }

    private static func open(
        deviceID: String, channelID: String, trigger: String?
    ) throws(IIOError) -> (IIOBuffer, IIOChannel, scale: Double, offset: Double) {
        let context = try IIOContext.local()
        guard let device = context.device(deviceID) else {
            throw IIOError("iio_context_find_device(\(deviceID))", code: ENODEV)
        }
        // libiio splits a modifier it does not know into id and name: match the sysfs spelling.
        guard let channel = device.channels.first(where: { !$0.isOutput && $0.sysfsName == channelID }),
            channel.isScanElement
        else {
            throw IIOError("iio_device_find_channel(\(deviceID) \(channelID))", code: ENOENT)
        }
        func number(_ name: String) -> Double? {
            guard channel.hasAttribute(name), let text = try? channel.readAttribute(name) else { return nil }
            return Double(text.trimmingWhitespace()).flatMap { $0.isFinite ? $0 : nil }
        }
        let scale = number("scale").flatMap { $0 > 0 ? $0 : nil } ?? 1
        let (buffer, _, _) = try IIOAcquisition.openBuffer(
            device: device, channels: [channel], context: context, trigger: trigger)
        return (buffer, channel, scale, number("offset") ?? 0)
    }

    /// Refills until stopped; returns why the device is lost, if it is.
    private func run(buffer: IIOBuffer, channel: IIOChannel, scale: Double, offset: Double) -> String? {
        var faults = FaultTracker()
        return capture.refillUntilStopped(buffer) { error in
            if faults.fault(.readFailed) {
                emit(
                    .fault(SensorFault(kind: .readFailed, device: device, detail: "buffer: \(error.errnoDescription)")))
            }
        } filled: {
            if faults.success(.readFailed) { emit(.recovered(.readFailed, device: device)) }
            guard let last = buffer.lastSample(of: channel) else { return }
            switch Self.reading(Double(last), scale: scale, offset: offset, conversion: conversion) {
            case .success(let reading):
                if faults.success(.badValue) { emit(.recovered(.badValue, device: device)) }
                emit(.reading(reading, time: MonotonicClock.now()))
            case .failure(let problem):
                if faults.fault(.badValue) {
                    emit(
                        .fault(
                            SensorFault(kind: .badValue, device: device, detail: "in_\(channel.sysfsName) \(problem)")))
                }
            }
        }
    }

    /// A buffered value as a reading, or what is wrong with it: `(value + offset) × scale`, then the
    /// driver's rule. Pure.
    static func reading(
        _ value: Double, scale: Double, offset: Double, conversion: any BufferConversion
    ) -> Result<SensorReading, ValueProblem> {
        let converted = (value + offset) * scale
        guard converted.isFinite else { return .failure(ValueProblem("\(value) gives \(converted)")) }
        return conversion.reading(converted, raw: value)
    }
}

/// The thread that refills a buffer, and its stop: ``stop()`` cancels a refill that blocks and joins
/// the thread. Shared by the readers of buffers of their own (``BufferedChannelReader``,
/// ``GyroscopeBufferReader``).
final class BufferCapture: Sendable {
    /// The buffer, so that ``stop()`` can cancel a blocked refill; a pthread lock (see IIOAcquisition).
    private let control = NIOLockedValueBox((stopping: false, buffer: IIOBuffer?.none))
    /// Set once the buffer is open (its channels move to the thread with it).
    private let thread = NIOLockedValueBox<WorkerThread?>(nil)

    var stopping: Bool { control.withLockedValue { $0.stopping } }

    /// Runs `refillUntilStopped` on a thread named `name` (it owns what it captures: the buffer and its
    /// channels move to the thread); what it returns (why the device is lost) goes to `lost`.
    func start(
        name: String, buffer: IIOBuffer, lost: @escaping @Sendable (String) -> Void,
        owning refillUntilStopped: sending @escaping () -> String?
    ) {
        control.withLockedValue { $0.buffer = buffer }
        let worker = WorkerThread.start(name: name) { [self, refillUntilStopped] in
            if let reason = refillUntilStopped() { lost(reason) }
            control.withLockedValue { $0.buffer = nil }
        }
        thread.withLockedValue { $0 = worker }
    }

    /// Refills `buffer` until stopped: `filled` after each refill, `failed` after an error other than
    /// a timeout (a sensor that reports on change only is silent) or the device's end, which is
    /// returned (why the device is lost); nil once stopped.
    func refillUntilStopped(
        _ buffer: IIOBuffer, failed: (IIOError) -> Void, filled: () -> Void
    ) -> String? {
        while !stopping {
            do {
                _ = try buffer.refill()
            } catch {
                if stopping { break }
                if error.meansDeviceGone { return error.description }
                if error.code == ETIMEDOUT { continue }
                failed(error)
                usleep(200_000)  // an error that repeats at once must not spin
                continue
            }
            filled()
        }
        return nil
    }

    func stop() {
        control.withLockedValue { state in
            state.stopping = true
            state.buffer?.cancel()
        }
        thread.withLockedValue { $0 }?.join()
        thread.withLockedValue { $0 = nil }
    }
}

extension IIOBuffer {
    /// The channel's value in the last scan of this fill, if the fill holds one.
    func lastSample(of channel: IIOChannel) -> Int64? {
        var last: Int64?
        forEachSample(of: channel) { last = channel.decode($0) }
        return last
    }
}
