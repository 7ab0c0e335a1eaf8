import NIOConcurrencyHelpers
import OrientationCore
import SensorCore
#if canImport(Glibc)
import Glibc
#endif

/// A gyroscope in a device of its own (``IIOGyroscopeDriver``: an HID sensor hub's `gyro_3d`, a
/// gyroscope chip of its own), found through udev and watched like every sensor
/// (``WatchedSensorSource``: plugged in or removed, it is said), and read while sampled, which the
/// daemon asks only while the device moves: every `interval` seconds (the accelerometer's rate,
/// or the faster one its read pace asks for: ``ReadPace/fastInterval``),
/// its three `raw` attributes, or its buffer (an HID hub's `gyro_3d`). The readings of its first
/// ``SamplingPace/Settings/gyroscopeStartup`` seconds are discarded, as a gyroscope's datasheet asks
/// after it is switched on.
public final class UdevGyroscopeSource: GyroscopeSource, Sendable {
    private let watched: WatchedSensorSource<GyroscopeDevice, GyroscopeEvent>
    public var outlet: EventOutlet<GyroscopeEvent> { watched.outlet }

    /// Holds nothing until ``start()``.
    public init(interval: Double, pace: ReadPace? = nil) {
        watched = WatchedSensorSource(
            .init(
                name: "gyroscope", queueLabel: "orientd.gyroscope",
                subsystems: SensorDrivers.subsystems(for: .gyroscope),
                locate: { udev in
                    let found = SensorDrivers.matches(for: .gyroscope, udev: udev).compactMap {
                        if case .gyroscope(let device) = $0.match { device } else { nil }
                    }
                    // The first one whose rates can be converted; else why the first is not read.
                    if let usable = found.first(where: { $0.notRead == nil }) { return .success(usable) }
                    if let notRead = found.first?.notRead { return .failure(.init(reason: notRead, isUnusable: true)) }
                    return .failure(.init(reason: "no gyroscope in a device of its own"))
                },
                same: { $0 == $1 }, syspath: \.syspath, identity: { "\($0.deviceID) (\($0.name))" },
                available: { device in
                    let matrix = "mount matrix \(device.mountMatrix.text) (\(device.mountMatrixOrigin))"
                    return .available(
                        name: "\(device.deviceID) (\(device.name)), \(matrix)", mountMatrix: device.mountMatrix,
                        problems: device.problems)
                },
                unavailable: { .unavailable(reason: $0) },
                read: { device, _, emit, lost in
                    device.bufferTrigger == nil
                        ? GyroscopePoller(device: device, interval: interval, pace: pace, emit: emit)
                            as any SensorReader
                        : GyroscopeBufferReader(device: device, emit: emit, lost: lost)
                },
                unusable: { .unavailable(reason: $0, unusable: true) }))
    }

    public func start() throws(SensorStartError) { try watched.start() }
    public func startSampling() { watched.startSampling() }
    public func stopSampling() { watched.stopSampling() }
    public func stopSampling(then stopped: @escaping @Sendable () -> Void) { watched.stopSampling(then: stopped) }
    public func shutdown() { watched.shutdown() }
}

/// Reads a gyroscope's three `raw` attributes every `interval` seconds on a thread of its own, or at
/// the accelerometer's faster rate while `pace` asks for one, from its start-up on; a read that
/// fails is said once per episode.
final class GyroscopePoller: SensorReader, Sendable {
    private let stopper = Wakeup()
    private let thread: WorkerThread

    init(
        device: GyroscopeDevice, interval: Double, pace: ReadPace? = nil,
        emit: @escaping @Sendable (GyroscopeEvent) -> Void
    ) {
        thread = WorkerThread(name: "orientd-gyro") { [stopper] in
            let start = MonotonicClock.now()
            var failing = false
            var due = start + SamplingPace.Settings().gyroscopeStartup
            while stopper.wait(timeout: max(0, due - MonotonicClock.now())) != .woken {
                var raw: [Double] = []
                var problem: String?
                for path in device.paths {
                    let attribute = path.split(separator: "/").last.map(String.init) ?? path
                    switch SysfsText.read(path) {
                    case .success(let text):
                        if let value = Double(text.trimmingWhitespace()), value.isFinite {
                            raw.append(value)
                        } else {
                            problem = "\(attribute) \"\(text.trimmingWhitespace().prefix(40))\" is not a number"
                        }
                    case .failure(let error): problem = "\(attribute): \(error)"
                    }
                    if problem != nil { break }
                }
                if let problem {
                    if !failing { emit(.lost(reason: "\(device.deviceID): \(problem)")) }
                    failing = true
                } else {
                    failing = false
                    emit(.rate(time: MonotonicClock.now(), rate: device.rate(raw: raw)))
                }
                let period = min(interval, pace?.fastInterval ?? interval)
                due += period
                if due < MonotonicClock.now() { due = MonotonicClock.now() + period }  // late: no burst
            }
        }
    }

    /// Ends the thread (after a read in progress).
    func stop() {
        stopper.signal()
        thread.join()
    }
}

/// Reads a gyroscope's buffer (`in_anglvel_{x,y,z}` and the timestamp, paced by its trigger) on a
/// thread of its own while sampled: the buffer is enabled when reading starts and destroyed (capture
/// stopped, the sensor powered down) by ``stop()``. Samples of the first
/// ``SamplingPace/Settings/gyroscopeStartup`` seconds are dropped. A refill that times out is normal
/// (an HID hub reports on change); a device that vanishes (ENODEV) ends the reader through `lost`;
/// other errors are said once per episode.
final class GyroscopeBufferReader: SensorReader, Sendable {
    private let capture = BufferCapture()

    init(
        device: GyroscopeDevice, emit: @escaping @Sendable (GyroscopeEvent) -> Void,
        lost: @escaping @Sendable (String) -> Void
    ) {
        let opened: (IIOBuffer, [IIOChannel], ChangeSensitivity?)
        do throws(IIOError) {
            let context = try IIOContext.local()
            guard let iio = context.device(device.deviceID) else {
                throw IIOError("iio_context_find_device(\(device.deviceID))", code: ENODEV)
            }
            let channels = ["x", "y", "z"].compactMap { axis in
                iio.channels.first { !$0.isOutput && $0.sysfsName == "anglvel_\(axis)" && $0.isScanElement }
            }
            guard channels.count == 3 else {
                throw IIOError("iio_device_find_channel(\(device.deviceID) anglvel_x, _y, _z)", code: ENOENT)
            }
            // Every report while it runs: a steady turn repeats one rate (ChangeSensitivity).
            var sensitivity = ChangeSensitivity(device: iio, channel: channels[0])
            _ = sensitivity?.set(0)
            let (buffer, _, _) = try IIOAcquisition.openBuffer(
                device: iio, channels: channels, context: context, trigger: device.bufferTrigger)
            opened = (buffer, channels, sensitivity)
        } catch {
            emit(.lost(reason: "\(device.deviceID): \(error.description)"))
            lost(error.description)
            return
        }
        capture.start(name: "orientd-gyro", buffer: opened.0, lost: lost) { [self] in
            defer { opened.2?.restore() }
            return run(device: device, buffer: opened.0, channels: opened.1, emit: emit)
        }
    }

    func stop() { capture.stop() }

    /// Refills until stopped; returns why the device is lost, if it is.
    private func run(
        device: GyroscopeDevice, buffer: IIOBuffer, channels: [IIOChannel],
        emit: @Sendable (GyroscopeEvent) -> Void
    ) -> String? {
        let usedFrom = MonotonicClock.now() + SamplingPace.Settings().gyroscopeStartup
        var failing = false
        return capture.refillUntilStopped(buffer) { error in
            if !failing { emit(.lost(reason: "\(device.deviceID): buffer: \(error.errnoDescription)")) }
            failing = true
        } filled: {
            failing = false
            let now = MonotonicClock.now()
            guard now >= usedFrom else { return }
            // The latest scan of each axis (a refill holds one scan, or a few after a late wake-up).
            let raw = channels.compactMap { buffer.lastSample(of: $0).map(Double.init) }
            if raw.count == 3 { emit(.rate(time: now, rate: device.rate(raw: raw))) }
        }
    }
}
