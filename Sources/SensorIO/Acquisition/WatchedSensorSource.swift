import Dispatch
import SensorCore
import Synchronization

/// Reads a found sensor while it is sampled (a poller thread, an evdev switch, an IIO buffer).
protocol SensorReader: AnyObject {
    /// Stops reading; nothing is emitted after it returns.
    func stop()
}

/// The skeleton of a sensor source found through udev (a light, proximity or compass sensor, the
/// hinge angle, the lid switch, a gyroscope of its own): it watches for its sensor from ``start()``
/// to ``shutdown()`` and reads it only between ``startSampling()`` and ``stopSampling()``. What
/// differs by sensor is its ``Kind``: how one is found, how its presence and absence are said, how
/// it is read.
///
/// All state lives on one serial queue, which also handles the udev watch's events (``UdevWatch``,
/// no polling of sysfs): a removed sensor is reported unavailable, an added one is described and,
/// while sampled, read at once. Readers that poll run on a thread of their own.
final class WatchedSensorSource<Found: Sendable, Event: Sendable>: Sendable {
    /// One kind of watched sensor, as a table of what the skeleton asks.
    struct Kind: Sendable {
        /// `ambient light sensor`, for the error when udev cannot be watched.
        let name: String
        let queueLabel: String
        /// The subsystems its drivers' devices live in.
        let subsystems: [String]
        /// The sensor to read, or why there is none (said once per absence, however often udev speaks).
        let locate: @Sendable (Udev) -> Result<Found, Absent>
        /// Whether two finds are the same sensor, described the same (nothing to say again).
        let same: @Sendable (Found, Found) -> Bool
        /// The device's syspath: its removal (or its parent's) loses it.
        let syspath: @Sendable (Found) -> String
        /// `iio:device1 (als)`, for the reasons said.
        let identity: @Sendable (Found) -> String
        let available: @Sendable (Found) -> Event
        let unavailable: @Sendable (_ reason: String) -> Event
        /// Starts reading `found` (on the queue): what it reads goes to `emit`, on any thread; `lost`
        /// (any thread, also before `read` returns) says the device went away under the reader.
        let read:
            @Sendable (
                _ found: Found, _ queue: DispatchQueue, _ emit: @escaping @Sendable (Event) -> Void,
                _ lost: @escaping @Sendable (String) -> Void
            ) -> (any SensorReader)?
        /// What to say when a sensor is there but cannot be used (``Absent/isUnusable``); nil: as
        /// `unavailable`.
        var unusable: (@Sendable (_ reason: String) -> Event)? = nil
    }

    /// Why no sensor is read: none is there, or one is that cannot be used (a warning, not news).
    struct Absent: Error {
        let reason: String
        var isUnusable = false
    }

    let outlet = EventOutlet<Event>()
    private let kind: Kind
    private let queue: DispatchQueue
    /// Confined to `queue`: only code running there takes the lock, so it never waits (the one lock
    /// rule's exception, docs/architecture.md): Synchronization's Mutex, which may hold what is not
    /// Sendable (udev, dispatch sources); ThreadSanitizer sees the queue's ordering of every access.
    private let state = Mutex(State())

    private struct State {
        /// Set by ``start()``.
        var watch: UdevWatch?
        var current: Found?
        var reader: (any SensorReader)?
        /// Counts readers, so that a late `lost` from an old one is ignored.
        var readerGeneration = 0
        /// A device whose reader could not read it (no permission, gone): not taken again until udev
        /// says it was added or changed (a rule that grants access runs on such an event).
        var unreadable: (syspath: String, reason: String)?
        var sampling = false
        var shutDown = false
        var announcedUnavailable: String?
    }

    /// Holds nothing until ``start()``.
    init(_ kind: Kind) {
        self.kind = kind
        queue = DispatchQueue(label: kind.queueLabel)
    }

    deinit { shutdown() }

    /// Watches for the sensor (a udev monitor) and reports what it finds; fails only when udev
    /// itself cannot be used, holding nothing then.
    func start() throws(SensorStartError) {
        let result = queue.sync { () -> Result<Void, UdevError> in
            state.withLock { state in
                guard state.watch == nil, !state.shutDown else { return .success(()) }
                do throws(UdevError) {
                    state.watch = try UdevWatch(subsystems: kind.subsystems, queue: queue) { [weak self] changes in
                        self?.udevChanged(changes)
                    }
                } catch {
                    return .failure(error)
                }
                locate(&state)
                return .success(())
            }
        }
        if case .failure(let error) = result {
            throw SensorStartError("cannot watch for the \(kind.name): \(error)")
        }
    }

    func startSampling() {
        queue.async { [self] in
            state.withLock { state in
                guard state.watch != nil, !state.shutDown, !state.sampling else { return }
                state.sampling = true
                startReading(&state)
            }
        }
    }

    /// The reader is stopped on the queue; `stopped` follows it there.
    func stopSampling(then stopped: @escaping @Sendable () -> Void = {}) {
        queue.async { [self] in
            state.withLock { state in
                state.sampling = false
                stopReading(&state)
            }
            stopped()
        }
    }

    func shutdown() {
        let first = queue.sync { () -> Bool in
            state.withLock { state in
                guard !state.shutDown else { return false }
                state.shutDown = true
                state.sampling = false
                stopReading(&state)
                state.watch?.cancel()
                state.watch = nil
                return true
            }
        }
        if first { outlet.finish() }
    }

    // MARK: - Finding the sensor (on `queue`, under the lock)

    private func locate(_ state: inout State) {
        guard !state.shutDown, let udev = state.watch?.udev else { return }
        switch kind.locate(udev) {
        case .failure(let absent):
            if state.current != nil {
                stopReading(&state)
                state.current = nil
            }
            reportUnavailable(
                absent.reason, &state, as: absent.isUnusable ? kind.unusable ?? kind.unavailable : kind.unavailable)
        case .success(let chosen):
            if let unreadable = state.unreadable, unreadable.syspath == kind.syspath(chosen) {
                reportUnavailable(unreadable.reason, &state)
                return
            }
            if let current = state.current, kind.same(current, chosen) { return }
            stopReading(&state)
            state.current = chosen
            state.announcedUnavailable = nil
            outlet.emit(kind.available(chosen))
            startReading(&state)
        }
    }

    private func reportUnavailable(
        _ reason: String, _ state: inout State, as event: ((String) -> Event)? = nil
    ) {
        guard state.announcedUnavailable == nil else { return }
        state.announcedUnavailable = reason
        outlet.emit((event ?? kind.unavailable)(reason))
    }

    /// On `queue` (the udev watch's handler): the sensor (or a parent of it, a hub taken away)
    /// removed is reported at once; any change is looked at afresh.
    private func udevChanged(_ changes: UdevChanges) {
        state.withLock { state in
            guard !state.shutDown else { return }
            if let unreadable = state.unreadable,
                changes.devices.contains(where: { $0.syspath == unreadable.syspath && $0.action != "remove" })
            {
                state.unreadable = nil
            }
            if let current = state.current {
                let path = kind.syspath(current)
                if changes.removed.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) {
                    stopReading(&state)
                    state.current = nil
                    reportUnavailable("\(kind.identity(current)) was removed", &state)
                }
            }
            locate(&state)
        }
    }

    // MARK: - Reading (on `queue`, under the lock)

    private func startReading(_ state: inout State) {
        guard state.sampling, state.reader == nil, let current = state.current else { return }
        state.readerGeneration += 1
        let generation = state.readerGeneration
        // A reader may say it lost its device while `read` still runs (a buffer it cannot open),
        // inside this lock: the loss is handled afterwards, on the queue, never within it (taken
        // again from inside, the lock traps and takes the daemon down).
        state.reader = kind.read(
            current, queue, { [outlet] in outlet.emit($0) },
            { [weak self, queue] reason in
                queue.async { [weak self] in self?.readerLost(reason, generation: generation) }
            })
    }

    private func stopReading(_ state: inout State) {
        state.reader?.stop()
        state.reader = nil
    }

    /// The device vanished under the reader, or cannot be opened: unavailable until udev finds one
    /// again (this one after it was added or changed). On `queue`; a loss from a reader that is no
    /// longer the current one (stopped, replaced) is ignored.
    private func readerLost(_ reason: String, generation: Int) {
        state.withLock { state in
            guard !state.shutDown, generation == state.readerGeneration, state.reader != nil,
                let current = state.current
            else { return }
            stopReading(&state)
            state.current = nil
            let said = "\(kind.identity(current)) lost: \(reason)"
            state.unreadable = (kind.syspath(current), said)
            reportUnavailable(said, &state)
        }
    }
}
