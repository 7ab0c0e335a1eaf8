import OrientationCore
import SensorCore
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// Samples one IIO device on a dedicated thread, by polling its `raw` attributes or through its
/// buffer, and reports samples and faults as ``SensorEvent``s.
///
/// The context is used only by the worker thread once the acquisition runs: it, the device, its
/// channels and the sysfs files are a ``Worker`` that moves to the thread. Read faults are reported
/// once per episode and the sample is dropped; only the device going away (ENODEV), or a remote one
/// failing for `lossTimeout` seconds, ends the acquisition.
final class IIOAcquisition: Sendable {
    /// Why the worker ended by itself.
    enum Ending: Sendable, Equatable {
        case deviceGone(String)
        case failed(String)
        /// `auto` chose the buffer but it delivered nothing: poll instead.
        case bufferSilent(String)
    }

    /// The description with what the acquisition actually set (mode, sampling frequency).
    let description: SensorDescription
    /// A longer interval while the device rests: polled, the sensor is read that much less often;
    /// buffered, the buffer hands over batches that long (its trigger keeps the sampling rate).
    private let pace: ReadPace?
    private let wakeup: Wakeup
    /// A pthread lock, not Synchronization.Mutex, whose futex ThreadSanitizer cannot see on Linux.
    private let control: NIOLockedValueBox<Control>
    private let thread: WorkerThread

    /// What ``stop()`` and the worker share.
    fileprivate struct Control {
        var stopping = false
        var buffer: IIOBuffer?
        /// The sensor's motion interrupt, when it has one and the device is polled with a pace: the
        /// poll loop sleeps on it at rest. Used by the worker thread only; released by ``stop()``.
        var motionInterrupt: IIOMotionInterrupt?
    }

    static let bufferSilenceTimeout: UInt32 = 2000  // ms
    static let lossTimeout = 3.0

    /// Opens `deviceID` in `context` and starts sampling. `ended` is called (on the worker thread)
    /// only when the acquisition ends by itself, not after ``stop()``.
    init(
        context: sending IIOContext, deviceID: String, description: SensorDescription,
        configuration: SensorConfiguration,
        mode: AcquisitionMode, pace: ReadPace? = nil, emit: @escaping @Sendable (SensorEvent) -> Void,
        ended: @escaping @Sendable (Ending) -> Void
    ) throws(IIOError) {
        guard let device = context.device(deviceID) else {
            throw IIOError("iio_context_find_device(\(deviceID))", code: ENODEV)
        }
        let channels = ["accel_x", "accel_y", "accel_z"].compactMap(device.inputChannel)
        guard channels.count == 3 else {
            throw IIOError("iio_device_find_channel(\(deviceID) accel_x/y/z)", code: ENOENT)
        }
        self.pace = pace
        let isRemote = context.uri.hasPrefix("ip:")
        func rawReader(_ channel: IIOChannel) -> RawReader {
            guard context.uri == "local:", let file = channel.attributeFileName("raw") else { return .libiio(channel) }
            return .sysfs(SysfsAttributeFile(path: "/sys/bus/iio/devices/\(deviceID)/\(file)"))
        }
        let rawReaders = channels.map(rawReader)
        // An IMU's gyroscope in the same device, read with the accelerometer: polled, or in the
        // buffer's scans when its channels are scan elements too.
        let gyroscopeChannels = ["anglvel_x", "anglvel_y", "anglvel_z"].compactMap(device.inputChannel)
        func text(_ channel: IIOChannel, _ attribute: String) -> String? {
            channel.hasAttribute(attribute) ? (try? channel.readAttribute(attribute)) ?? "" : nil
        }
        // A scale that cannot be read now is said as such (the next acquisition reads it again).
        var scales: [(attribute: String, text: String?)] = []
        var unreadableScale: String?
        for channel in gyroscopeChannels where channel.hasAttribute("scale") {
            let name = channel.attributeFileName("scale") ?? "in_\(channel.id)_scale"
            do {
                scales.append((name, try channel.readAttribute("scale")))
            } catch {
                unreadableScale =
                    unreadableScale ?? "\(deviceID): \(name): \(error.errnoDescription): the gyroscope is not read"
            }
        }
        let scaleProblem = unreadableScale ?? GyroscopeAttributes.scaleProblem(device: deviceID, scales: scales)
        let gyroscope =
            gyroscopeChannels.count == 3 && (mode == .poll || gyroscopeChannels.allSatisfy(\.isScanElement))
                && scaleProblem == nil
            ? Gyroscope(channels: gyroscopeChannels, rawReaders: gyroscopeChannels.map(rawReader)) : nil
        // A remote read on a dead connection must fail rather than block the worker for good.
        if isRemote { try context.setTimeout(milliseconds: Self.bufferSilenceTimeout) }
        var description = description
        description.acquisition = mode
        // The rate the pace already asks while the device moves (a gyroscope beside it wants 50 Hz),
        // from the start: the kernel's HID sensor drivers sleep two report intervals as they power a
        // sensor up, and the detector's start-up takes two readings, so a claim is answered sooner.
        let startingRate = max(configuration.rate, pace?.fastInterval.map { 1 / $0 } ?? 0)
        description.samplingFrequency =
            Self.setSamplingFrequency(
                device: device, channel: channels[0], target: startingRate,
                write: configuration.setsDeviceRate) ?? description.samplingFrequency
        // Poll at the configured rate, or the device's own rate when that is slower (reading
        // faster than it measures only repeats values).
        let deviceRate = description.samplingFrequency.flatMap { $0 > 0 ? $0 : nil } ?? configuration.rate
        let pollPeriod = 1 / min(configuration.rate, deviceRate)
        var motionInterrupt: IIOMotionInterrupt?
        if let pace, mode == .poll, !isRemote {
            do {
                motionInterrupt = try IIOMotionInterrupt.arm(
                    deviceID: deviceID, node: description.deviceNode ?? "/dev/\(deviceID)")
                description.restPacing =
                    motionInterrupt.map { "the motion interrupt (\($0.switches.enables.joined(separator: ", ")))" }
                    ?? "polling at the rest rate (no motion interrupt in sysfs)"
            } catch {
                description.restPacing = "polling at the rest rate (the motion interrupt cannot be armed: \(error))"
            }
            pace.restsOnMotionEvents = motionInterrupt != nil
        }
        // An HID hub reports only what changes once its sensitivity is set: at rest it then sends
        // nothing. Cleared for now (sampling starts fast); a refusal is said and the batches stay.
        var sensitivity = mode == .buffer ? ChangeSensitivity(device: device, channel: channels[0]) : nil
        if var tried = sensitivity {
            if let refused = tried.set(ChangeSensitivity.wanted(resting: false)) {
                description.restPacing =
                    "batches of the rest interval (the hub's change sensitivity cannot be set: \(refused))"
                sensitivity = nil
            } else {
                description.restPacing = ChangeSensitivity.pacing
                sensitivity = tried
                // The hub is this sensor's motion interrupt: at rest it says nothing until something
                // moves, so the detection stage rests on it as on a chip's (a check every few seconds).
                pace?.restsOnMotionEvents = true
            }
        }
        description.readsGyroscope = gyroscope != nil
        if gyroscopeChannels.count == 3 {
            description.gyroscope = GyroscopeAttributes.imuText(
                device: deviceID, buffered: mode == .buffer,
                notRead: gyroscope != nil ? nil : scaleProblem ?? "its channels are not in the buffer's scan elements")
            // One chip, one frame: a matrix of the gyroscope's own that differs, or cannot be read,
            // is said, and the accelerometer's is used for both.
            if let problem = GyroscopeAttributes.imuMatrixProblem(
                device: deviceID, attribute: "in_anglvel_mount_matrix",
                text: gyroscopeChannels.first.flatMap { text($0, "mount_matrix") },
                accelerometer: description.mountMatrix)
            {
                description.mountMatrixProblems.append(problem)
            }
        }
        self.description = description

        var buffer: IIOBuffer?
        var timestampChannel: IIOChannel?
        var monotonicTimestamps = false
        if mode == .buffer {
            (buffer, timestampChannel, monotonicTimestamps) = try Self.openBuffer(
                device: device, channels: channels, context: context, trigger: description.trigger)
        }
        let wakeup = Wakeup()
        self.wakeup = wakeup
        let control = NIOLockedValueBox(Control(buffer: buffer, motionInterrupt: motionInterrupt))
        self.control = control
        let buffered = buffer != nil
        buffer = nil  // the control state holds it: a new pace replaces it (see runBuffered)
        let worker = Worker(
            device: device, channels: channels, rawReaders: rawReaders, gyroscope: gyroscope, sensitivity: sensitivity,
            description: description,
            announced: NIOLockedValueBox(description), pollPeriod: pollPeriod, configuredRate: configuration.rate,
            writesRate: configuration.setsDeviceRate,
            pace: pace, fallbackAllowed: configuration.acquisition == .auto,
            firstValueWithin: configuration.firstValueWithin,
            isRemote: isRemote, emit: emit, wakeup: wakeup, control: control)
        thread = WorkerThread.start(name: "orientd-\(mode.rawValue)") { [timestampChannel, monotonicTimestamps] in
            let ending: Ending?
            if buffered {
                ending = worker.runBuffered(timestamp: timestampChannel, monotonicTimestamps: monotonicTimestamps)
            } else {
                ending = worker.runPolling()
            }
            control.withLockedValue { $0.buffer = nil }
            if let ending { ended(ending) }
        }
    }

    /// Stops the worker and waits for it; the buffer (if any) is closed on the worker's way out.
    func stop() {
        control.withLockedValue { state in
            state.stopping = true
            state.buffer?.cancel()
        }
        wakeup.signal()
        thread.join()
        pace?.attach(nil)
        pace?.restsOnMotionEvents = false
        control.withLockedValue { $0.motionInterrupt = nil }
    }

    fileprivate enum RawReader {
        case sysfs(SysfsAttributeFile)
        case libiio(IIOChannel)

        func read() throws(IIOError) -> IIOChannel.Number {
            switch self {
            case .sysfs(let file): try file.readNumber()
            case .libiio(let channel): try channel.readNumber("raw")
            }
        }
    }

    // MARK: - Setup

    /// Writes the available rate nearest `target` to `sampling_frequency` (device or channel
    /// attribute) unless `write` is false; returns the rate the device reports afterwards. Failures
    /// leave the rate as is.
    static func setSamplingFrequency(
        device: IIODevice, channel: IIOChannel, target: Double, write: Bool = true
    ) -> Double? {
        func read(_ name: String) -> String? {
            if device.hasAttribute(name) { return try? device.readAttribute(name) }
            if channel.hasAttribute(name) { return try? channel.readAttribute(name) }
            return nil
        }
        // The nearest rate the device lists; with no list (an HID hub takes any report interval), the
        // target itself: a device that refuses it keeps its rate, and the rate read back is the truth.
        let listed = read("sampling_frequency_available")
        if write, let wanted = listed.map({ SamplingFrequencyChoice.nearest(to: target, available: $0) }) ?? target {
            let text = SamplingFrequencyChoice.text(wanted)
            if device.hasAttribute("sampling_frequency") {
                try? device.writeAttribute("sampling_frequency", text)
            } else if channel.hasAttribute("sampling_frequency") {
                try? channel.writeAttribute("sampling_frequency", text)  // in_accel_sampling_frequency
            }
        }
        return read("sampling_frequency").flatMap { Double($0.trimmingWhitespace()) }
    }

    static func openBuffer(
        device: IIODevice, channels: [IIOChannel], context: IIOContext, trigger: String?
    ) throws(IIOError) -> (IIOBuffer, IIOChannel?, Bool) {
        for channel in device.channels { channel.disable() }
        channels.forEach { $0.enable() }
        let timestamp = device.inputChannel("timestamp").flatMap { $0.isScanElement ? $0 : nil }
        timestamp?.enable()
        if device.currentTrigger == nil, let trigger,
            let triggerDevice = context.devices.first(where: { $0.isTrigger && $0.name == trigger })
        {
            try device.setTrigger(triggerDevice)
        }
        // Ask for CLOCK_MONOTONIC timestamps, the clock sample times are on; if the device keeps
        // another clock, its timestamps are only used for spacing.
        var monotonic = false
        if device.hasAttribute("current_timestamp_clock") {
            try? device.writeAttribute("current_timestamp_clock", "monotonic")
            monotonic = (try? device.readAttribute("current_timestamp_clock"))?.trimmingWhitespace() == "monotonic"
        }
        try context.setTimeout(milliseconds: bufferSilenceTimeout)
        return (try device.createBuffer(samples: 1), timestamp, monotonic)
    }

    /// Samples per refill: one while the device moves, and at rest as many as the rest interval
    /// holds (at most a second's, well within the refill's timeout), so the CPU wakes at the rest
    /// rate and the kernel (and a hardware FIFO under `buffer/watermark`) keeps the samples between.
    static func batchSize(restInterval: Double?, samplePeriod: Double) -> Int {
        guard let restInterval, samplePeriod > 0 else { return 1 }
        return max(1, Int((min(restInterval, 1) / samplePeriod).rounded(.down)))
    }

    /// An IMU's gyroscope in the accelerometer's own device (`in_anglvel_{x,y,z}`), polled with it.
    fileprivate struct Gyroscope {
        let channels: [IIOChannel]
        let rawReaders: [RawReader]
    }

    /// The worker thread's part: the device, its channels and the sysfs files, which only the
    /// worker uses once the acquisition runs (they move to its thread with it).
    fileprivate struct Worker {
        let device: IIODevice
        let channels: [IIOChannel]
        /// How the poll loop reads each axis's `raw`: the kept-open sysfs file of a local device, or
        /// libiio (remote devices, or a local attribute whose file name libiio does not know).
        let rawReaders: [RawReader]
        /// The gyroscope read with the accelerometer, if the device has one (polled only).
        let gyroscope: IIOAcquisition.Gyroscope?
        /// An HID hub's change sensitivity, set at rest (buffered only).
        let sensitivity: ChangeSensitivity?
        let description: SensorDescription
        /// The description as last said: what the worker finds out later (a failed motion interrupt,
        /// a gyroscope that cannot be read) changes this one, so one announcement never undoes the
        /// other.
        let announced: NIOLockedValueBox<SensorDescription>
        let pollPeriod: Double
        /// The configured rate, and whether the device's `sampling_frequency` may be written: a
        /// faster rate asked for a while (``ReadPace/fastInterval``) is asked of the device too.
        let configuredRate: Double
        let writesRate: Bool
        let pace: ReadPace?
        let fallbackAllowed: Bool
        /// How long a buffer may stay silent after it opens before the attributes are read meanwhile.
        let firstValueWithin: Double
        let isRemote: Bool
        let emit: @Sendable (SensorEvent) -> Void
        let wakeup: Wakeup
        let control: NIOLockedValueBox<Control>
    }
}

extension IIOAcquisition.Worker {
    private static var bufferSilenceTimeout: UInt32 { IIOAcquisition.bufferSilenceTimeout }
    private static var lossTimeout: Double { IIOAcquisition.lossTimeout }
    private static func batchSize(restInterval: Double?, samplePeriod: Double) -> Int {
        IIOAcquisition.batchSize(restInterval: restInterval, samplePeriod: samplePeriod)
    }

    private var stopping: Bool { control.withLockedValue { $0.stopping } }

    /// The period to read at while the device moves, for `fastInterval` (nil: the configured rate;
    /// never slower than it): the device is asked for that rate, and read no faster than it says
    /// it measures.
    private func movingPeriod(fastInterval: Double?) -> Double {
        let target = max(configuredRate, fastInterval.map { 1 / $0 } ?? 0)
        let deviceRate =
            IIOAcquisition.setSamplingFrequency(device: device, channel: channels[0], target: target, write: writesRate)
            .flatMap { $0 > 0 ? $0 : nil } ?? target
        return 1 / min(target, deviceRate)
    }

    // MARK: - Conversion

    /// Scale and offset per axis, re-read while they are unusable.
    private struct Calibration {
        var scale: [Double] = [1, 1, 1]
        var offset: [Double] = [0, 0, 0]
        var valid = false
        var lastRead = -Double.infinity
    }

    /// Reads `scale` (missing: 1, as the ABI's default) and `offset` (missing: 0) of each axis.
    private func readCalibration(_ calibration: inout Calibration, faults: inout FaultTracker, now: Double) {
        calibration.lastRead = now
        let problem = Self.read(&calibration, of: channels)
        calibration.valid = problem == nil
        if let problem {
            if faults.fault(.badScale) {
                emit(.fault(SensorFault(kind: .badScale, device: device.id, detail: problem)))
            }
        } else if faults.success(.badScale) {
            emit(.recovered(.badScale, device: device.id))
        }
    }

    /// Reads the scales and offsets of `channels` into `calibration`; returns the first problem.
    private static func read(_ calibration: inout Calibration, of channels: [IIOChannel]) -> String? {
        var problem: String?
        for (index, channel) in channels.enumerated() {
            if channel.hasAttribute("scale") {
                do {
                    let text = try channel.readAttribute("scale").trimmingWhitespace()
                    if let value = AttributeNumber.positiveScale(text) {
                        calibration.scale[index] = value
                    } else {
                        problem = problem ?? "\(channel.id) scale \"\(text)\" is not a positive number"
                    }
                } catch {
                    problem = problem ?? "\(channel.id) scale: \(error.errnoDescription)"
                }
            }
            if channel.hasAttribute("offset"), let text = try? channel.readAttribute("offset").trimmingWhitespace() {
                if let value = Double(text), value.isFinite { calibration.offset[index] = value }
            }
        }
        return problem
    }

    /// The gyroscope runs only while the device moves or motion is streamed
    /// (``ReadPace/gyroscopeWanted``: it draws several times the accelerometer's current) and its
    /// rates are used only `gyroscopeStartup` after it was switched on, as its datasheet asks. Nil
    /// when it is off, starting, or unreadable (the detection stage then decides from the
    /// accelerometer alone). A read that fails, or a value that is not a finite number, begins an
    /// episode the description says (``gyroscopeReads(_:episode:)``); the next good read ends it.
    private func readGyroscope(
        _ calibration: inout Calibration, onSince: inout Double?, problem: inout String?, at now: Double
    ) -> Vector3? {
        guard let gyroscope else { return nil }
        guard pace?.gyroscopeWanted ?? true else {
            onSince = nil
            return nil
        }
        if onSince == nil { onSince = now }
        if !calibration.valid, now - calibration.lastRead >= 1 {
            calibration.lastRead = now
            let calibrationProblem = Self.read(&calibration, of: gyroscope.channels)
            calibration.valid = calibrationProblem == nil
            if let calibrationProblem { gyroscopeReads("\(device.id): \(calibrationProblem)", episode: &problem) }
        }
        guard calibration.valid else { return nil }
        var raw = [0.0, 0.0, 0.0]
        for index in 0..<3 {
            let channel = gyroscope.channels[index]
            let file = channel.attributeFileName("raw") ?? "in_\(channel.id)_raw"
            do {
                switch try gyroscope.rawReaders[index].read() {
                case .value(let value) where value.isFinite:
                    raw[index] = value
                case .value(let value):
                    gyroscopeReads("\(device.id): \(file) reads \(value)", episode: &problem)
                    return nil
                case .notANumber(let text):
                    gyroscopeReads("\(device.id): \(file) \"\(text)\" is not a number", episode: &problem)
                    return nil
                }
            } catch {
                gyroscopeReads("\(device.id): \(file): \(error.errnoDescription)", episode: &problem)
                return nil
            }
        }
        gyroscopeReads(nil, episode: &problem)
        guard let since = onSince, now - since >= SamplingPace.Settings().gyroscopeStartup else { return nil }
        return Vector3(
            (raw[0] + calibration.offset[0]) * calibration.scale[0],
            (raw[1] + calibration.offset[1]) * calibration.scale[1],
            (raw[2] + calibration.offset[2]) * calibration.scale[2])
    }

    /// Says when an IMU's gyroscope begins or ends failing to read (`problem`, nil: it reads): the
    /// description again, with ``SensorDescription/gyroscopeProblem``, once per episode, as a failed
    /// motion interrupt is said. The hub logs it and shows the gyroscope failed meanwhile.
    private func gyroscopeReads(_ problem: String?, episode: inout String?) {
        guard (problem == nil) != (episode == nil) else { return }
        episode = problem
        emit(
            .available(
                announced.withLockedValue {
                    $0.gyroscopeProblem = problem
                    return $0
                }))
    }

    /// Why the raw attributes could not be read: the fault's kind, its detail, the error if one.
    struct AttributeFailure: Error {
        let kind: SensorFault.Kind
        let detail: String
        let error: IIOError?
    }

    /// One reading of the three `raw` attributes, or why it failed (at the first axis that did).
    private func readAttributes() -> Result<Vector3, AttributeFailure> {
        var raw = [0.0, 0.0, 0.0]
        for index in 0..<3 {
            let channel = channels[index]
            do {
                switch try rawReaders[index].read() {
                case .value(let value): raw[index] = value
                case .notANumber(let text):
                    return .failure(
                        AttributeFailure(
                            kind: .badValue, detail: "\(channel.id) raw \"\(text.prefix(40))\" is not a number",
                            error: nil))
                }
            } catch {
                return .failure(
                    AttributeFailure(
                        kind: .readFailed, detail: "\(channel.id) raw: \(error.errnoDescription)", error: error))
            }
        }
        return .success(Vector3(raw[0], raw[1], raw[2]))
    }

    // MARK: - Polling

    func runPolling() -> IIOAcquisition.Ending? {
        var faults = FaultTracker()
        var readings = RawAccelerometerReadings(device: device.id)
        var calibration = Calibration()
        var gyroscopeCalibration = Calibration()
        var gyroscopeOnSince: Double?
        var gyroscopeProblem: String?
        var schedule = PollSchedule(period: pollPeriod, pace: pace, start: MonotonicClock.now())
        pace?.attach { [wakeup] in wakeup.signal() }
        var failingSince: Double?
        var fastInterval: Double?
        while !stopping {
            if pace?.fastInterval != fastInterval {
                fastInterval = pace?.fastInterval
                schedule.setPeriod(movingPeriod(fastInterval: fastInterval))
            }
            let now = MonotonicClock.now()
            if schedule.due > now {
                // At rest the motion interrupt, when there is one, wakes the loop before the next
                // (check) reading; what it reported while the device moved is forgotten first.
                let interrupt = schedule.resting ? control.withLockedValue { $0.motionInterrupt } : nil
                if let interrupt, case .failed(let code) = interrupt.drain() {
                    disarmMotionInterrupt(IIOError("read(\(device.id) events)", code: code), schedule: &schedule)
                    continue
                }
                switch wakeup.wait(timeout: schedule.due - now, other: interrupt?.descriptor) {
                case .woken:
                    schedule.paceShortened()
                    continue
                case .readable:
                    switch interrupt?.drain() {
                    case .motion: schedule.readNow(at: MonotonicClock.now())
                    case .failed(let code):
                        disarmMotionInterrupt(IIOError("read(\(device.id) events)", code: code), schedule: &schedule)
                    case .nothing, nil: break
                    }
                    continue
                case .timedOut:
                    break
                }
            }
            schedule.reading(at: MonotonicClock.now())
            if !calibration.valid, MonotonicClock.now() - calibration.lastRead >= 1 {
                readCalibration(&calibration, faults: &faults, now: MonotonicClock.now())
            }
            let read = readAttributes()
            let time = MonotonicClock.now()
            let raw: Vector3
            switch read {
            case .success(let reading): raw = reading
            case .failure(let failure):
                if let error = failure.error, error.meansDeviceGone { return .deviceGone(error.description) }
                if faults.fault(failure.kind) {
                    emit(.fault(SensorFault(kind: failure.kind, device: device.id, detail: failure.detail)))
                }
                failingSince = failingSince ?? time
                if isRemote, let since = failingSince, time - since >= Self.lossTimeout {
                    return .failed(failure.detail)
                }
                continue
            }
            failingSince = nil
            if faults.success(.readFailed) { emit(.recovered(.readFailed, device: device.id)) }
            if faults.success(.badValue) { emit(.recovered(.badValue, device: device.id)) }
            let rotationRate = readGyroscope(
                &gyroscopeCalibration, onSince: &gyroscopeOnSince, problem: &gyroscopeProblem, at: time)
            readings.deliver(
                raw: raw, at: time, scale: calibration.valid ? calibration.scale : nil,
                offset: calibration.offset, rotationRate: rotationRate, faults: &faults, emit: emit)
        }
        return nil
    }

    /// The motion interrupt failed: at rest the sensor is polled at the rest rate from now on. The
    /// description says so (the hub logs it once), and a reading is taken at once so that the
    /// detection stage sees the change.
    private func disarmMotionInterrupt(_ error: IIOError, schedule: inout PollSchedule) {
        // Taken out and released outside the lock (its deinit writes sysfs).
        _ = control.withLockedValue { control in
            defer { control.motionInterrupt = nil }
            return control.motionInterrupt
        }
        pace?.restsOnMotionEvents = false
        emit(
            .available(
                announced.withLockedValue {
                    $0.restPacing = "polling at the rest rate (the motion interrupt failed: \(error))"
                    return $0
                }))
        schedule.readNow(at: MonotonicClock.now())
    }

    // MARK: - Buffered

    /// Reads the buffer the control state holds (opened by `init` with one sample per refill).
    func runBuffered(timestamp: IIOChannel?, monotonicTimestamps: Bool) -> IIOAcquisition.Ending? {
        var faults = FaultTracker()
        var readings = RawAccelerometerReadings(device: device.id)
        var calibration = Calibration()
        var receivedAny = false
        var failingSince: Double?
        var current = control.withLockedValue { $0.buffer }
        var batch = 1
        // The gyroscope's channels are in the scans only while the device moves (a buffer made
        // anew when that changes, as for the batch size): at rest the chip may switch it off.
        var gyroscopeInScans = false
        var gyroscopeCalibration = Calibration()
        var gyroscopeOnSince: Double?
        var gyroscopeProblem: String?
        var samplePeriod = pollPeriod
        var fastInterval: Double?
        var sensitivity = sensitivity
        defer { sensitivity?.restore() }
        // The last reading, taken again while a hub that reports only changes says nothing.
        var held: Vector3?
        var timeout = Self.bufferSilenceTimeout
        // Until the buffer gives its first data, it is waited for one rest interval at most; then
        // the attributes are read at the sampling rate meanwhile (said once), so that a claim gets
        // a first value within a rest interval, after a resume too, when a trigger or a hub does
        // not start again. After `bufferSilenceTimeout`, `auto` polls instead for good.
        let opened = MonotonicClock.now()
        var readsAttributes = false
        while !stopping {
            if !calibration.valid, MonotonicClock.now() - calibration.lastRead >= 1 {
                readCalibration(&calibration, faults: &faults, now: MonotonicClock.now())
            }
            let gyroscopeWanted = gyroscope != nil && pace?.gyroscopeWanted ?? true
            var rateWanted = pace?.fastInterval
            // A hub that reports only changes sends nothing at rest: each report is news, taken as it
            // comes, and its buffer is never made anew for the pace (which powers the hub off and on).
            let wanted: Int
            if sensitivity != nil {
                wanted = 1
                if rateWanted != fastInterval {
                    fastInterval = rateWanted
                    samplePeriod = movingPeriod(fastInterval: rateWanted)
                }
                rateWanted = fastInterval
                _ = sensitivity?.set(ChangeSensitivity.wanted(resting: pace?.interval != nil))
            } else {
                wanted = Self.batchSize(restInterval: pace?.interval, samplePeriod: samplePeriod)
            }
            if wanted != batch || current == nil || gyroscopeWanted != gyroscopeInScans || rateWanted != fastInterval {
                // The pace changed: a buffer of the new size, whose watermark libiio sets to it. The
                // old one is destroyed first (the device's node has one opener at a time).
                control.withLockedValue { $0.buffer = nil }
                current = nil
                if rateWanted != fastInterval {
                    // The device's rate is written while no buffer runs (drivers refuse it then).
                    fastInterval = rateWanted
                    samplePeriod = movingPeriod(fastInterval: rateWanted)
                }
                for channel in gyroscope?.channels ?? [] {
                    if gyroscopeWanted { channel.enable() } else { channel.disable() }
                }
                gyroscopeInScans = gyroscopeWanted
                gyroscopeOnSince = gyroscopeWanted ? MonotonicClock.now() : nil
                if gyroscopeWanted, !gyroscopeCalibration.valid, let gyroscope {
                    let problem = Self.read(&gyroscopeCalibration, of: gyroscope.channels)
                    gyroscopeCalibration.valid = problem == nil
                    // Said as a polled IMU's: the rates are left out until a buffer made anew reads it.
                    gyroscopeReads(problem.map { "\(device.id): \($0)" }, episode: &gyroscopeProblem)
                }
                do {
                    let resized = try device.createBuffer(samples: wanted)
                    let stopped = control.withLockedValue { state -> Bool in
                        if !state.stopping { state.buffer = resized }
                        return state.stopping
                    }
                    if stopped { break }
                    current = resized
                    batch = wanted
                } catch {
                    if error.meansDeviceGone { return .deviceGone(error.description) }
                    if faults.fault(.readFailed) {
                        emit(
                            .fault(
                                SensorFault(
                                    kind: .readFailed, device: device.id,
                                    detail: "buffer of \(wanted): \(error.errnoDescription)")))
                    }
                    _ = wakeup.wait(timeout: 0.2)
                    continue
                }
            }
            guard let buffer = current else { continue }
            let quietHeld = sensitivity?.holdsWhenQuiet == true && receivedAny && held != nil
            let heldInterval = pace?.interval ?? ChangeSensitivity.heldInterval
            let wantedTimeout =
                quietHeld
                ? UInt32(heldInterval * 1000)
                : !receivedAny && MonotonicClock.now() - opened < Double(Self.bufferSilenceTimeout) / 1000
                    ? UInt32(max(1, ((readsAttributes ? samplePeriod : firstValueWithin) * 1000).rounded()))
                    : Self.bufferSilenceTimeout
            if wantedTimeout != timeout, (try? device.context.setTimeout(milliseconds: wantedTimeout)) != nil {
                timeout = wantedTimeout
            }
            do {
                _ = try buffer.refill()
            } catch {
                if stopping { break }
                let now = MonotonicClock.now()
                if error.meansDeviceGone { return .deviceGone(error.description) }
                if error.code == ETIMEDOUT, quietHeld, timeout == wantedTimeout, let held {
                    // Quiet at rest: nothing moved by the sensitivity since the last report.
                    readings.deliver(
                        raw: held, at: now, scale: calibration.valid ? calibration.scale : nil,
                        offset: calibration.offset, rotationRate: nil, faults: &faults, emit: emit)
                    continue
                }
                let silentFor = now - opened
                if error.code == ETIMEDOUT, !receivedAny, silentFor < Double(Self.bufferSilenceTimeout) / 1000 {
                    if !readsAttributes {
                        readsAttributes = true
                        emit(
                            .note(
                                """
                                \(device.id): its buffer gave nothing within \
                                \(SamplingFrequencyChoice.text((firstValueWithin * 100).rounded() / 100)) s of \
                                opening: its attributes are read until it does
                                """))
                    }
                    if case .success(let raw) = readAttributes() {
                        readings.deliver(
                            raw: raw, at: MonotonicClock.now(), scale: calibration.valid ? calibration.scale : nil,
                            offset: calibration.offset, rotationRate: nil, faults: &faults, emit: emit)
                    }
                    continue
                }
                if error.code == ETIMEDOUT, !receivedAny, fallbackAllowed {
                    return .bufferSilent(
                        "no data from the buffer within \(Self.bufferSilenceTimeout / 1000) s (no trigger running?)")
                }
                let detail =
                    error.code == ETIMEDOUT
                    ? "buffer: no data for \(Self.bufferSilenceTimeout / 1000) s" : "buffer: \(error.errnoDescription)"
                if faults.fault(.readFailed) {
                    emit(.fault(SensorFault(kind: .readFailed, device: device.id, detail: detail)))
                }
                failingSince = failingSince ?? now
                if isRemote, let since = failingSince, now - since >= Self.lossTimeout { return .failed(detail) }
                // an error that repeats at once must not spin
                if error.code != ETIMEDOUT { _ = wakeup.wait(timeout: 0.2) }
                continue
            }
            receivedAny = true
            failingSince = nil
            if faults.success(.readFailed) { emit(.recovered(.readFailed, device: device.id)) }
            let host = MonotonicClock.now()
            var axes: [[Double]] = [[], [], []]
            for (index, channel) in channels.enumerated() {
                buffer.forEachSample(of: channel) { axes[index].append(Double(channel.decode($0))) }
            }
            var rates: [[Double]] = [[], [], []]
            if gyroscopeInScans, gyroscopeCalibration.valid, let gyroscope {
                for (index, channel) in gyroscope.channels.enumerated() {
                    buffer.forEachSample(of: channel) {
                        rates[index].append(
                            (Double(channel.decode($0)) + gyroscopeCalibration.offset[index])
                                * gyroscopeCalibration.scale[index])
                    }
                }
            }
            var stamps: [Double] = []
            if let timestamp {
                buffer.forEachSample(of: timestamp) { stamps.append(Double(timestamp.decode($0)) / 1e9) }
            }
            let count = axes.map(\.count).min() ?? 0
            for sample in 0..<count {
                // Device timestamps on CLOCK_MONOTONIC are used as they are; on another clock they
                // only give the spacing, anchored at the host time of the refill.
                let time: Double
                if stamps.count == count {
                    time = monotonicTimestamps ? stamps[sample] : host - (stamps[count - 1] - stamps[sample])
                } else {
                    time = host - Double(count - 1 - sample) * samplePeriod  // a batch's samples, at the sampling rate
                }
                let started = gyroscopeOnSince.map { host - $0 >= SamplingPace.Settings().gyroscopeStartup } ?? false
                let rate =
                    started && rates.allSatisfy({ $0.count == count })
                    ? Vector3(rates[0][sample], rates[1][sample], rates[2][sample]) : nil
                let reading = Vector3(axes[0][sample], axes[1][sample], axes[2][sample])
                held = reading
                readings.deliver(
                    raw: reading, at: time,
                    scale: calibration.valid ? calibration.scale : nil, offset: calibration.offset, rotationRate: rate,
                    faults: &faults, emit: emit)
            }
        }
        return nil
    }
}
