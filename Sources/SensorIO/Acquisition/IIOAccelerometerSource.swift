import Dispatch
import OrientationCore
import SensorCore

/// Samples a chosen accelerometer until stopped; ``description`` says how (mode, rate, scale).
protocol AccelerometerAcquisition: AnyObject {
    var description: SensorDescription { get }
    /// Stops sampling and waits for the worker; `ended` is not called after it.
    func stop()
}

extension IIOAcquisition: AccelerometerAcquisition {}

/// A real accelerometer (`auto`, `iio:…`, `input:…`, `ip:HOST`) as an ``AccelerometerSource``.
///
/// All state lives on one serial queue. Local sensors are watched through a udev monitor whose
/// descriptor the queue watches (no polling of sysfs): when the sensor is removed the source reports
/// ``SensorEvent/unavailable(reason:)``; when one is added or comes back it is described, reported
/// and, while sampling, opened at once. A remote sensor is reconnected every `retryInterval` seconds
/// while unreachable. Samples are taken on a thread of their own by an ``IIOAcquisition`` (IIO,
/// local or remote) or an ``InputAccelerometerAcquisition`` (evdev).
public final class IIOAccelerometerSource: AccelerometerSource, @unchecked Sendable {
    public let outlet = SensorEventOutlet()
    /// The read interval in force, kept across acquisitions (polling only).
    public let readPace: ReadPace? = ReadPace()
    private let configuration: SensorConfiguration
    private let queue: DispatchQueue
    public static let retryInterval = 1.0

    // Confined to `queue`.
    private var udev: Udev?
    private var watch: UdevWatch?
    private var retryTimer: (any DispatchSourceTimer)?
    private var started = false
    private var sampling = false
    private var shutDown = false
    private var current: (candidate: AccelerometerCandidate, description: SensorDescription)?
    private var acquisition: (any AccelerometerAcquisition)?
    /// Counts acquisitions, so that a late "ended" from an old worker is ignored.
    private var generation = 0
    private var pollInsteadOfBuffer = false
    private var removedPaths: Set<String> = []
    /// True once the absence was reported, until a sensor is adopted again.
    private var announcedUnavailable = false
    private var openFaults = FaultTracker()

    /// Holds nothing until ``start()``.
    public init(configuration: SensorConfiguration) {
        self.configuration = configuration
        queue = DispatchQueue(label: configuration.role == .base ? "orientd.sensor.base" : "orientd.sensor")
    }

    deinit { shutdown() }

    /// Watches for the sensor (a udev monitor, for a local one) and reports what it finds; fails
    /// only when udev itself cannot be used, holding nothing then.
    public func start() throws(SensorStartError) {
        let result = queue.sync { () -> Result<Void, UdevError> in
            guard !started, !shutDown else { return .success(()) }
            if configuration.specification.isLocal {
                do throws(UdevError) {
                    let udev = try Udev()
                    watch = try UdevWatch(
                        udev: udev, subsystems: AccelerometerDiscovery.localSubsystems, queue: queue
                    ) { [weak self] monitor in
                        self?.handleUdevEvents(monitor)
                    }
                    self.udev = udev
                } catch {
                    return .failure(error)
                }
            }
            started = true
            locate()
            return .success(())
        }
        if case .failure(let error) = result {
            throw SensorStartError("cannot watch for accelerometers: \(error)")
        }
    }

    public func startSampling() {
        queue.async { [self] in
            guard started, !shutDown, !sampling else { return }
            sampling = true
            openIfPossible()
        }
    }

    public func stopSampling() {
        queue.async { [self] in
            guard sampling else { return }
            sampling = false
            closeAcquisition()
        }
    }

    public func shutdown() {
        let first = queue.sync { () -> Bool in
            guard !shutDown else { return false }
            shutDown = true
            sampling = false
            watch?.cancel()
            watch = nil
            udev = nil
            retryTimer?.cancel()
            retryTimer = nil
            closeAcquisition()
            return true
        }
        if first { outlet.finish() }
    }

    // MARK: - Finding the sensor (on `queue`)

    /// Discovers, selects and describes the sensor; reports a change of sensor or its absence.
    private func locate() {
        guard !shutDown else { return }
        if case .network(let host) = configuration.specification {
            locateRemote(host: host)
            return
        }
        guard let udev else { return }
        let candidates: [AccelerometerCandidate]
        do {
            candidates = try AccelerometerDiscovery.localCandidates(udev: udev).filter {
                !removedPaths.contains($0.sysfsPath ?? "")
            }
        } catch {
            reportUnavailable("udev enumeration failed: \(error)")
            return
        }
        let selection = AccelerometerSelection.choose(
            from: candidates, for: configuration.specification, role: configuration.role)
        guard let chosen = selection.chosen else {
            if current != nil {
                closeAcquisition()
                current = nil
            }
            reportUnavailable(selection.reason)
            return
        }
        if let current, current.candidate == chosen { return }
        closeAcquisition()
        var description = AccelerometerDiscovery.describe(chosen, udev: udev, configuration: configuration)
        description.selection = ([selection.reason] + selection.skipped.map { "skipped \($0)" }).joined(separator: "; ")
        adopt(chosen, description)
    }

    private func locateRemote(host: String) {
        do {
            let found = try AccelerometerDiscovery.networkCandidates(host: host, configuration: configuration)
            var selectionSpecification = configuration.specification
            if case .network = selectionSpecification { selectionSpecification = .auto }
            let selection = AccelerometerSelection.choose(
                from: found.map(\.0), for: selectionSpecification, role: configuration.role)
            guard let chosen = selection.chosen, var description = found.first(where: { $0.0 == chosen })?.1 else {
                reportUnavailable("iiod on \(host): \(selection.reason)")
                scheduleRetry()
                return
            }
            if let current, current.candidate == chosen, acquisition != nil { return }
            description.selection = ([selection.reason] + selection.skipped.map { "skipped \($0)" }).joined(
                separator: "; ")
            adopt(chosen, description)
        } catch {
            reportUnavailable("cannot reach iiod on \(host): \(error.errnoDescription)")
            scheduleRetry()
        }
    }

    private func adopt(_ candidate: AccelerometerCandidate, _ description: SensorDescription) {
        current = (candidate, description)
        announcedUnavailable = false
        pollInsteadOfBuffer = false
        outlet.emit(.available(description))
        openIfPossible()
    }

    /// Reports the absence once (with its first reason), so later udev events do not repeat it.
    private func reportUnavailable(_ reason: String) {
        guard !announcedUnavailable else { return }
        announcedUnavailable = true
        outlet.emit(.unavailable(reason: reason))
    }

    private func handleUdevEvents(_ monitor: UdevMonitor) {
        guard !shutDown else { return }
        var changed = false
        while let device = monitor.receive() {
            switch device.action {
            case "remove":
                removedPaths.insert(device.syspath)
                if let current, current.candidate.sysfsPath == device.syspath {
                    closeAcquisition()
                    self.current = nil
                    reportUnavailable("\(current.candidate.deviceID) (\(current.candidate.name)) was removed")
                }
                changed = true
            case "add":
                removedPaths.remove(device.syspath)
                changed = true
            case "change":
                // `udevadm trigger` after a hwdb update (`orientd calibrate --write`): a new
                // ACCEL_MOUNT_MATRIX makes a different candidate, which is adopted afresh.
                changed = true
            default:
                break
            }
        }
        if changed { locate() }
    }

    // MARK: - Sampling (on `queue`)

    private func openIfPossible() {
        guard sampling, !shutDown, acquisition == nil, let current else { return }
        let mode = pollInsteadOfBuffer ? .poll : (current.description.acquisition ?? .poll)
        generation += 1
        let thisGeneration = generation
        let emit: @Sendable (SensorEvent) -> Void = { [outlet] event in outlet.emit(event) }
        let ended: @Sendable (IIOAcquisition.Ending) -> Void = { [weak self] ending in
            guard let self else { return }
            queue.async { self.acquisitionEnded(ending, generation: thisGeneration) }
        }
        do {
            let opened: any AccelerometerAcquisition
            if current.candidate.interface == .input {
                opened = try InputAccelerometerAcquisition(
                    candidate: current.candidate, description: current.description,
                    configuration: configuration, pace: readPace, emit: emit, ended: ended)
            } else {
                let context: IIOContext
                if case .network(let host) = configuration.specification {
                    context = try IIOContext.network(host: host)
                } else {
                    context = try IIOContext.local()
                }
                opened = try IIOAcquisition(
                    context: context, deviceID: current.candidate.deviceID, description: current.description,
                    configuration: configuration, mode: mode, pace: readPace, emit: emit, ended: ended)
            }
            acquisition = opened
            if opened.description != current.description {
                self.current = (current.candidate, opened.description)
                outlet.emit(.available(opened.description))
            }
            if openFaults.success(.openFailed) {
                outlet.emit(.recovered(.openFailed, device: current.candidate.deviceID))
            }
        } catch {
            if openFaults.fault(.openFailed) {
                outlet.emit(
                    .fault(
                        SensorFault(kind: .openFailed, device: current.candidate.deviceID, detail: error.description)))
            }
            scheduleRetry()
        }
    }

    private func closeAcquisition() {
        acquisition?.stop()
        acquisition = nil
    }

    /// The worker ended by itself: the device vanished, a remote one failed, or a silent buffer.
    private func acquisitionEnded(_ ending: IIOAcquisition.Ending, generation ended: Int) {
        guard ended == generation else { return }
        closeAcquisition()
        guard !shutDown, let current else { return }
        switch ending {
        case .bufferSilent(let detail):
            pollInsteadOfBuffer = true
            var description = current.description
            description.acquisition = .poll
            self.current = (current.candidate, description)
            outlet.emit(
                .fault(
                    SensorFault(
                        kind: .openFailed, device: current.candidate.deviceID, detail: "\(detail); polling instead")))
            outlet.emit(.available(description))
            openIfPossible()
        case .deviceGone(let detail), .failed(let detail):
            self.current = nil
            reportUnavailable("\(current.candidate.deviceID) (\(current.candidate.name)) lost: \(detail)")
            scheduleRetry()
        }
    }

    /// Looks for the sensor again after `retryInterval` (remote hosts, failed opens, lost devices).
    private func scheduleRetry() {
        guard retryTimer == nil, !shutDown else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.retryInterval)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            retryTimer?.cancel()
            retryTimer = nil
            if current == nil { locate() } else { openIfPossible() }
        }
        retryTimer = timer
        timer.resume()
    }
}
