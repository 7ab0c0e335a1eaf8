import OrientationCore
import SensorCore

/// A gyroscope in a device of its own (``IIOGyroscopeDriver``: an HID sensor hub's `gyro_3d`, a
/// gyroscope chip of its own), found through udev and watched like every sensor
/// (``WatchedSensorSource``: plugged in or removed, it is said), and read while sampled, which the
/// daemon asks only while the device moves: every `interval` seconds (the accelerometer's rate),
/// its three `raw` attributes. The readings of its first ``SamplingPace/Settings/gyroscopeStartup``
/// seconds are discarded, as a gyroscope's datasheet asks after it is switched on.
public final class UdevGyroscopeSource: GyroscopeSource, Sendable {
    private let watched: WatchedSensorSource<GyroscopeDevice, GyroscopeEvent>
    public var outlet: EventOutlet<GyroscopeEvent> { watched.outlet }

    /// Holds nothing until ``start()``.
    public init(interval: Double) {
        watched = WatchedSensorSource(
            .init(
                name: "gyroscope", queueLabel: "orientd.gyroscope",
                subsystems: SensorDrivers.subsystems(for: .gyroscope),
                locate: { udev in
                    let gyroscope = SensorDrivers.matches(for: .gyroscope, udev: udev).lazy.compactMap {
                        if case .gyroscope(let device) = $0.match { device } else { nil }
                    }.first
                    return gyroscope.map { .success($0) }
                        ?? .failure(.init(reason: "no gyroscope in a device of its own"))
                },
                same: { $0 == $1 }, syspath: \.syspath, identity: { "\($0.deviceID) (\($0.name))" },
                available: { device in
                    let matrix = "mount matrix \(device.mountMatrix.text) (\(device.mountMatrixOrigin))"
                    return .available(
                        name: "\(device.deviceID) (\(device.name)), \(matrix)", mountMatrix: device.mountMatrix)
                },
                unavailable: { .unavailable(reason: $0) },
                read: { device, _, emit, _ in GyroscopePoller(device: device, interval: interval, emit: emit) }))
    }

    public func start() throws(SensorStartError) { try watched.start() }
    public func startSampling() { watched.startSampling() }
    public func stopSampling() { watched.stopSampling() }
    public func shutdown() { watched.shutdown() }
}

/// Reads a gyroscope's three `raw` attributes every `interval` seconds on a thread of its own,
/// from its start-up on; a read that fails is said once per episode.
final class GyroscopePoller: SensorReader, Sendable {
    private let stopper = Wakeup()
    private let thread: WorkerThread

    init(device: GyroscopeDevice, interval: Double, emit: @escaping @Sendable (GyroscopeEvent) -> Void) {
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
                due += interval
                if due < MonotonicClock.now() { due = MonotonicClock.now() + interval }  // late: no burst
            }
        }
    }

    /// Ends the thread (after a read in progress).
    func stop() {
        stopper.signal()
        thread.join()
    }
}
