import CUInput
import NIOConcurrencyHelpers
import OrientationCore
import SensorCore
#if canImport(Glibc)
import Glibc
#endif

/// Accelerometers that the kernel offers as evdev input devices (`ID_INPUT_ACCELEROMETER=1`, set
/// by udev's input_id builtin): hp_accel/lis3lv02d laptops, older tablets, some phones. Their
/// absolute axes ABS_X, ABS_Y and ABS_Z carry the acceleration; the input ABI gives their
/// resolution in units per g.
enum InputAccelerometerDiscovery {
    /// The input ABI's standard gravity, for resolutions in units per g.
    static let standardGravity = 9.80665
    /// Without a resolution: 256 units per g, the unit of the drivers that report none (lis3lv02d
    /// scales to it) and the incumbent's assumption; a sensor that reads otherwise is rescaled from
    /// gravity at rest (``GravityScaleLearner``).
    static let unitsPerGWithoutResolution = 256.0

    /// Describes an input accelerometer: polled through EVIOCGABS, at the configured rate.
    static func describe(_ candidate: AccelerometerCandidate, configuration: SensorConfiguration) -> SensorDescription {
        var description = AccelerometerDiscovery.makeDescription(
            candidate: candidate, identifier: candidate.deviceID, configuration: configuration, trigger: nil,
            samplingFrequency: nil, availableFrequencies: nil, scale: nil, offset: nil)
        description.acquisition = .poll
        if let node = candidate.deviceNode, let axes = try? InputAxes.read(node: node) {
            description.scale = axes.scale.map { Optional($0) }
            description.readingMagnitude =
                Vector3(axes.value[0] * axes.scale[0], axes.value[1] * axes.scale[1], axes.value[2] * axes.scale[2])
                .magnitude
        }
        return description
    }
}

/// ABS_X, ABS_Y and ABS_Z of an open evdev device (EVIOCGABS), with m/s² per unit from each axis's
/// resolution.
struct InputAxes {
    var value: [Double]
    var scale: [Double]

    /// ABS_X, ABS_Y, ABS_Z (linux/input-event-codes.h).
    static let codes: [UInt32] = [0, 1, 2]

    static func read(descriptor: Int32) throws(IIOError) -> InputAxes {
        var axes = InputAxes(value: [0, 0, 0], scale: [0, 0, 0])
        for (index, code) in codes.enumerated() {
            var value: Int32 = 0, resolution: Int32 = 0
            let result = orientd_evdev_absolute_axis(descriptor, code, &value, &resolution)
            guard result == 0 else { throw IIOError("EVIOCGABS(\(["ABS_X", "ABS_Y", "ABS_Z"][index]))", code: result) }
            axes.value[index] = Double(value)
            let unitsPerG = resolution > 0 ? Double(resolution) : InputAccelerometerDiscovery.unitsPerGWithoutResolution
            axes.scale[index] = InputAccelerometerDiscovery.standardGravity / unitsPerG
        }
        return axes
    }

    static func read(node: String) throws(IIOError) -> InputAxes {
        let descriptor = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw IIOError("open(\(node))", code: errno) }
        defer { close(descriptor) }
        return try read(descriptor: descriptor)
    }
}

/// Samples an evdev accelerometer on a dedicated thread: its axes' state (EVIOCGABS) at the
/// configured rate, as the IIO poll loop reads `raw` attributes. Keeping the device open is what
/// makes polled input drivers measure; the events they queue are read and discarded, since the
/// state read is the truth even after the queue overflowed. A vanished device (ENODEV) ends the
/// acquisition.
final class InputAccelerometerAcquisition: AccelerometerAcquisition, Sendable {
    let description: SensorDescription
    private let descriptor: Int32
    private let device: String
    private let pollPeriod: Double
    private let pace: ReadPace?
    private let emit: @Sendable (SensorEvent) -> Void
    private let wakeup = Wakeup()
    /// A pthread lock, as IIOAcquisition's (ThreadSanitizer sees it).
    private let stopping = NIOLockedValueBox(false)
    private let thread = NIOLockedValueBox<WorkerThread?>(nil)

    init(
        candidate: AccelerometerCandidate, description: SensorDescription, configuration: SensorConfiguration,
        pace: ReadPace? = nil,
        emit: @escaping @Sendable (SensorEvent) -> Void, ended: @escaping @Sendable (IIOAcquisition.Ending) -> Void
    ) throws(IIOError) {
        guard let node = candidate.deviceNode else { throw IIOError("open(\(candidate.deviceID))", code: ENODEV) }
        let descriptor = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw IIOError("open(\(node))", code: errno) }
        let axes: InputAxes
        do {
            axes = try InputAxes.read(descriptor: descriptor)
        } catch {
            close(descriptor)
            throw error
        }
        self.descriptor = descriptor
        device = candidate.deviceID
        self.emit = emit
        pollPeriod = 1 / configuration.rate
        self.pace = pace
        var description = description
        description.acquisition = .poll
        description.scale = axes.scale.map { Optional($0) }
        description.samplingFrequency = configuration.rate
        self.description = description
        let worker = WorkerThread(name: "orientd-evdev") { [self] in
            if let ending = run(scale: axes.scale) { ended(ending) }
        }
        thread.withLockedValue { $0 = worker }
    }

    func stop() {
        stopping.withLockedValue { $0 = true }
        wakeup.signal()
        thread.withLockedValue { $0 }?.join()
        thread.withLockedValue { $0 = nil }
        pace?.attach(nil)
        close(descriptor)
    }

    private func run(scale: [Double]) -> IIOAcquisition.Ending? {
        var faults = FaultTracker()
        var readings = RawAccelerometerReadings(device: device)
        var watchEvents = true
        var schedule = PollSchedule(period: pollPeriod, pace: pace, start: MonotonicClock.now())
        pace?.attach { [wakeup] in wakeup.signal() }
        var discard = [UInt8](repeating: 0, count: 64 * orientd_input_event_size())
        while !stopping.withLockedValue({ $0 }) {
            let now = MonotonicClock.now()
            if schedule.due > now {
                switch wakeup.wait(timeout: schedule.due - now, other: watchEvents ? descriptor : nil) {
                case .woken:
                    schedule.paceShortened()
                    continue
                case .readable:
                    let count = discard.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if count < 0, errno == ENODEV { return .deviceGone("\(device): \(Errno.name(ENODEV))") }
                    // nothing to drain here
                    if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) { watchEvents = false }
                    continue
                case .timedOut: break
                }
            }
            schedule.reading(at: MonotonicClock.now())
            let axes: InputAxes
            do {
                axes = try InputAxes.read(descriptor: descriptor)
            } catch {
                if error.meansDeviceGone { return .deviceGone(error.description) }
                if faults.fault(.readFailed) {
                    emit(.fault(SensorFault(kind: .readFailed, device: device, detail: error.errnoDescription)))
                }
                continue
            }
            if faults.success(.readFailed) { emit(.recovered(.readFailed, device: device)) }
            readings.deliver(
                raw: Vector3(axes.value[0], axes.value[1], axes.value[2]), at: MonotonicClock.now(), scale: scale,
                offset: [0, 0, 0], faults: &faults, emit: emit)
        }
        return nil
    }
}
