import Dispatch
import OrientationCore
import SensorCore
import Synchronization

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
public final class IIOAccelerometerSource: AccelerometerSource, Sendable {
    public let outlet = SensorEventOutlet()
    /// The read interval in force, kept across acquisitions (polling only).
    public let readPace: ReadPace? = ReadPace()
    private let configuration: SensorConfiguration
    private let queue: DispatchQueue
    public static let retryInterval = 1.0
    /// Confined to `queue`, as ``WatchedSensorSource``'s state is (the one lock rule's exception):
    /// Synchronization's Mutex, which may hold udev and the dispatch sources.
    private let state = Mutex(State())

    private struct State {
        /// Set by ``start()`` for a local sensor; its udev serves discovery.
        var watch: UdevWatch?
        var retryTimer: (any DispatchSourceTimer)?
        var started = false
        var sampling = false
        var shutDown = false
        var current: (candidate: AccelerometerCandidate, description: SensorDescription)?
        var acquisition: (any AccelerometerAcquisition)?
        /// Counts acquisitions, so that a late "ended" from an old worker is ignored.
        var generation = 0
        var pollInsteadOfBuffer = false
        var removedPaths: Set<String> = []
        /// True once the absence was reported, until a sensor is adopted again.
        var announcedUnavailable = false
        var openFaults = FaultTracker()
    }

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
            state.withLock { state in
                guard !state.started, !state.shutDown else { return .success(()) }
                if configuration.specification.isLocal {
                    do throws(UdevError) {
                        state.watch = try UdevWatch(subsystems: AccelerometerDiscovery.localSubsystems, queue: queue) {
                            [weak self] changes in self?.udevChanged(changes)
                        }
                    } catch {
                        return .failure(error)
                    }
                }
                state.started = true
                locate(&state)
                return .success(())
            }
        }
        if case .failure(let error) = result {
            throw SensorStartError("cannot watch for accelerometers: \(error)")
        }
    }

    public func startSampling() {
        queue.async { [self] in
            state.withLock { state in
                guard state.started, !state.shutDown, !state.sampling else { return }
                state.sampling = true
                openIfPossible(&state)
            }
        }
    }

    public func stopSampling() {
        stopSampling {}
    }

    /// The acquisition is stopped (its thread joined, its buffer closed) on the queue; `stopped`
    /// follows it there.
    public func stopSampling(then stopped: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            state.withLock { state in
                guard state.sampling else { return }
                state.sampling = false
                closeAcquisition(&state)
            }
            stopped()
        }
    }

    public func shutdown() {
        let first = queue.sync { () -> Bool in
            state.withLock { state in
                guard !state.shutDown else { return false }
                state.shutDown = true
                state.sampling = false
                state.watch?.cancel()
                state.watch = nil
                state.retryTimer?.cancel()
                state.retryTimer = nil
                closeAcquisition(&state)
                return true
            }
        }
        if first { outlet.finish() }
    }

    // MARK: - Finding the sensor (on `queue`, under the lock)

    /// Discovers, selects and describes the sensor; reports a change of sensor or its absence.
    private func locate(_ state: inout State) {
        guard !state.shutDown else { return }
        if case .network(let host) = configuration.specification {
            locateRemote(host: host, &state)
            return
        }
        guard let udev = state.watch?.udev else { return }
        let candidates: [AccelerometerCandidate]
        do {
            let removedPaths = state.removedPaths
            candidates = try AccelerometerDiscovery.localCandidates(udev: udev).filter {
                !removedPaths.contains($0.sysfsPath ?? "")
            }
        } catch {
            reportUnavailable("udev enumeration failed: \(error)", &state)
            return
        }
        let selection = AccelerometerSelection.choose(
            from: candidates, for: configuration.specification, role: configuration.role)
        guard let chosen = selection.chosen else {
            if state.current != nil {
                closeAcquisition(&state)
                state.current = nil
            }
            reportUnavailable(selection.reason, &state)
            return
        }
        if let current = state.current, current.candidate == chosen { return }
        closeAcquisition(&state)
        var description = AccelerometerDiscovery.describe(chosen, udev: udev, configuration: configuration)
        description.selection = ([selection.reason] + selection.skipped.map { "skipped \($0)" }).joined(separator: "; ")
        adopt(chosen, description, &state)
    }

    private func locateRemote(host: String, _ state: inout State) {
        do {
            let found = try AccelerometerDiscovery.networkCandidates(host: host, configuration: configuration)
            var selectionSpecification = configuration.specification
            if case .network = selectionSpecification { selectionSpecification = .auto }
            let selection = AccelerometerSelection.choose(
                from: found.map(\.0), for: selectionSpecification, role: configuration.role)
            guard let chosen = selection.chosen, var description = found.first(where: { $0.0 == chosen })?.1 else {
                reportUnavailable("iiod on \(host): \(selection.reason)", &state)
                scheduleRetry(&state)
                return
            }
            if let current = state.current, current.candidate == chosen, state.acquisition != nil { return }
            description.selection = ([selection.reason] + selection.skipped.map { "skipped \($0)" }).joined(
                separator: "; ")
            adopt(chosen, description, &state)
        } catch {
            reportUnavailable("cannot reach iiod on \(host): \(error.errnoDescription)", &state)
            scheduleRetry(&state)
        }
    }

    private func adopt(_ candidate: AccelerometerCandidate, _ description: SensorDescription, _ state: inout State) {
        state.current = (candidate, description)
        state.announcedUnavailable = false
        state.pollInsteadOfBuffer = false
        outlet.emit(.available(description))
        openIfPossible(&state)
    }

    /// Reports the absence once (with its first reason), so later udev events do not repeat it.
    private func reportUnavailable(_ reason: String, _ state: inout State) {
        guard !state.announcedUnavailable else { return }
        state.announcedUnavailable = true
        outlet.emit(.unavailable(reason: reason))
    }

    /// On `queue` (the udev watch's handler). A removed sensor is reported at once; any change
    /// (an addition, a `change` after `orientd calibrate --write` installs a hwdb entry, whose new
    /// ACCEL_MOUNT_MATRIX makes a different candidate) is looked at afresh.
    private func udevChanged(_ changes: UdevChanges) {
        state.withLock { state in
            guard !state.shutDown else { return }
            for (action, path) in changes.devices {
                if action == "remove" { state.removedPaths.insert(path) }
                if action == "add" { state.removedPaths.remove(path) }
            }
            if let current = state.current, let path = current.candidate.sysfsPath, changes.removed.contains(path) {
                closeAcquisition(&state)
                state.current = nil
                reportUnavailable("\(current.candidate.deviceID) (\(current.candidate.name)) was removed", &state)
            }
            locate(&state)
        }
    }

    // MARK: - Sampling (on `queue`, under the lock)

    private func openIfPossible(_ state: inout State) {
        guard state.sampling, !state.shutDown, state.acquisition == nil, let current = state.current else { return }
        let mode = state.pollInsteadOfBuffer ? .poll : (current.description.acquisition ?? .poll)
        state.generation += 1
        let thisGeneration = state.generation
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
            state.acquisition = opened
            if opened.description != current.description {
                state.current = (current.candidate, opened.description)
                outlet.emit(.available(opened.description))
            }
            if state.openFaults.success(.openFailed) {
                outlet.emit(.recovered(.openFailed, device: current.candidate.deviceID))
            }
        } catch {
            if state.openFaults.fault(.openFailed) {
                outlet.emit(
                    .fault(
                        SensorFault(kind: .openFailed, device: current.candidate.deviceID, detail: error.description)))
            }
            scheduleRetry(&state)
        }
    }

    private func closeAcquisition(_ state: inout State) {
        state.acquisition?.stop()
        state.acquisition = nil
    }

    /// The worker ended by itself: the device vanished, a remote one failed, or a silent buffer.
    /// On `queue`.
    private func acquisitionEnded(_ ending: IIOAcquisition.Ending, generation ended: Int) {
        state.withLock { state in
            guard ended == state.generation else { return }
            closeAcquisition(&state)
            guard !state.shutDown, let current = state.current else { return }
            switch ending {
            case .bufferSilent(let detail):
                state.pollInsteadOfBuffer = true
                var description = current.description
                description.acquisition = .poll
                state.current = (current.candidate, description)
                outlet.emit(
                    .fault(
                        SensorFault(
                            kind: .openFailed, device: current.candidate.deviceID,
                            detail: "\(detail); polling instead")))
                outlet.emit(.available(description))
                openIfPossible(&state)
            case .deviceGone(let detail), .failed(let detail):
                state.current = nil
                reportUnavailable(
                    "\(current.candidate.deviceID) (\(current.candidate.name)) lost: \(detail)", &state)
                scheduleRetry(&state)
            }
        }
    }

    /// Looks for the sensor again after `retryInterval` (remote hosts, failed opens, lost devices).
    private func scheduleRetry(_ state: inout State) {
        guard state.retryTimer == nil, !state.shutDown else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.retryInterval)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.state.withLock { state in
                state.retryTimer?.cancel()
                state.retryTimer = nil
                if state.current == nil { locate(&state) } else { openIfPossible(&state) }
            }
        }
        state.retryTimer = timer
        timer.resume()
    }
}
