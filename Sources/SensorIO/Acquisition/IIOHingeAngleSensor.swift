import Dispatch
import SensorCore
import Synchronization

/// The channel of a device that measures its own hinge angle, found through udev.
public struct HingeAngleChannel: Sendable, Hashable {
    public var deviceID: String
    public var name: String
    /// The attribute's path: `…/in_angl_raw` (cros-ec-lid-angle), `…/in_angl0_raw` (the hinge of
    /// an Intel HID hinge sensor, whose channels 1 and 2 are the screen's and the keyboard's).
    public var path: String
    public var scale: Double
    public var offset: Double
    /// The IIO ABI's unit for angles is the radian (after scale and offset); the ChromeOS EC's lid
    /// angle driver reports whole degrees, with 500 for "unreliable".
    public var reportsDegrees: Bool

    /// Degrees from a raw value; nil for what cannot be an angle (the EC's 500).
    public func degrees(raw: Double) -> Double? {
        let value = (raw + offset) * scale * (reportsDegrees ? 1 : 180 / .pi)
        guard value.isFinite, value >= -1, value <= 361 else { return nil }
        return value
    }

    /// The first hinge-angle channel the driver table finds (``HingeAngleDriver``).
    public static func find() -> HingeAngleChannel? {
        guard let udev = try? Udev() else { return nil }
        return SensorDrivers.matches(for: .hingeAngle, udev: udev).lazy.compactMap {
            if case .hingeAngle(let channel) = $0.match { channel } else { nil }
        }.first
    }
}

/// A hinge-angle channel polled at `rate` while sampling (one `pread` per reading, as the
/// accelerometer's polling does).
public final class IIOHingeAngleSensor: HingeAngleSensor, Sendable {
    public let name: String
    private let channel: HingeAngleChannel
    private let interval: Double
    private let queue = DispatchQueue(label: "orientd.hinge-angle")
    /// Confined to `queue`: only code running there takes the lock, so it is never contended
    /// (Synchronization's Mutex, which may hold the timer and the file; see ``UdevKindSource``).
    private let state: Mutex<State>

    private struct State {
        var receive: (@Sendable (HingeAngleReading) -> Void)?
        var timer: (any DispatchSourceTimer)?
        var file: SysfsAttributeFile
        var failing = false
    }

    public init(channel: HingeAngleChannel, rate: Double = 10) {
        self.channel = channel
        name = "\(channel.deviceID) (\(channel.name)) \(channel.path.split(separator: "/").last ?? "")"
        interval = 1 / rate
        state = Mutex(State(file: SysfsAttributeFile(path: channel.path)))
    }

    public func deliver(to receive: @escaping @Sendable (HingeAngleReading) -> Void) {
        queue.sync { state.withLock { $0.receive = receive } }
    }

    /// Nothing to open ahead: the attribute is opened at the first read.
    public func start() throws(SensorStartError) {}

    public func startSampling() {
        queue.async { [self] in
            state.withLock { state in
                guard state.timer == nil, state.receive != nil else { return }
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: .now(), repeating: interval)
                timer.setEventHandler { [weak self] in self?.read() }
                state.timer = timer
                timer.resume()
            }
        }
    }

    public func stopSampling() {
        queue.async { [self] in
            state.withLock { state in
                state.timer?.cancel()
                state.timer = nil
            }
        }
    }

    public func shutdown() {
        queue.sync {
            state.withLock { state in
                state.timer?.cancel()
                state.timer = nil
                state.receive = nil
                state.file.closeFile()
            }
        }
    }

    /// On `queue` (the timer's handler).
    private func read() {
        state.withLock { state in
            do {
                let number = try state.file.readNumber()
                state.failing = false
                guard case .value(let raw) = number else {
                    state.receive?(.angle(time: MonotonicClock.now(), degrees: nil))
                    return
                }
                state.receive?(.angle(time: MonotonicClock.now(), degrees: channel.degrees(raw: raw)))
            } catch {
                // Reported once per episode; the next good read ends it.
                if !state.failing { state.receive?(.lost(reason: "\(error)")) }
                state.failing = true
            }
        }
    }
}
