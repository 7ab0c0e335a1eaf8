import Dispatch
import SensorCore

/// The channel of a device that measures its own hinge angle, found through udev.
public struct HingeAngleChannel: Sendable, Hashable {
    public var deviceID: String
    public var name: String
    /// The device's syspath: its removal loses the sensor.
    public var syspath: String
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
}

/// A device's own hinge-angle sensor, found through udev by the driver table (``HingeAngleDriver``)
/// and watched like every sensor (``WatchedSensorSource``: plugged in or removed, it is said), read
/// while the base is sampled by the same poller as light (``AttributePoller``, one wake-up per
/// reading) every `interval` seconds. Every reading is passed on, the same angle too: the hinge
/// detector judges a measured angle's staleness by them.
public final class UdevHingeAngleSource: HingeAngleSource, Sendable {
    private let watched: WatchedSensorSource<HingeAngleChannel, HingeAngleReading>
    public var outlet: EventOutlet<HingeAngleReading> { watched.outlet }

    /// Holds nothing until ``start()``.
    public init(interval: Double = 0.1) {
        watched = WatchedSensorSource(
            .init(
                name: "hinge-angle sensor", queueLabel: "orientd.hinge-angle",
                subsystems: SensorDrivers.subsystems(for: .hingeAngle),
                locate: { udev in
                    let channel = SensorDrivers.matches(for: .hingeAngle, udev: udev).lazy.compactMap {
                        if case .hingeAngle(let channel) = $0.match { channel } else { nil }
                    }.first
                    return channel.map { .success($0) } ?? .failure(.init(reason: "no hinge-angle sensor found"))
                },
                same: { $0 == $1 }, syspath: \.syspath,
                identity: { "\($0.deviceID) (\($0.name))" },
                available: {
                    .available(name: "\($0.deviceID) (\($0.name)) \($0.path.split(separator: "/").last ?? "")")
                },
                unavailable: { .unavailable(reason: $0) },
                read: { channel, _, emit, _ in
                    AttributePoller(
                        path: channel.path, conversion: HingeAngleConversion(channel: channel), interval: interval,
                        device: channel.deviceID, repeats: true
                    ) { polled in
                        switch polled {
                        case .reading(let degrees, let time): emit(.angle(time: time, degrees: degrees))
                        case .fault(let fault): emit(.lost(reason: "\(fault.kind.rawValue): \(fault.detail)"))
                        case .recovered: break  // the next angle says it
                        }
                    }
                }))
    }

    public func start() throws(SensorStartError) { try watched.start() }
    public func startSampling() { watched.startSampling() }
    public func stopSampling() { watched.stopSampling() }
    public func stopSampling(then stopped: @escaping @Sendable () -> Void) { watched.stopSampling(then: stopped) }
    public func shutdown() { watched.shutdown() }
}

/// The hinge-angle attribute's text: degrees by the channel's scale, offset and unit, nil for what
/// cannot be an angle (the EC's 500, "unreliable"); text that is no number is a bad value.
struct HingeAngleConversion: AttributeConversion {
    let channel: HingeAngleChannel
    var readerName: String { "orientd-hinge" }

    func reading(from text: String) -> Result<Double?, ValueProblem> {
        let trimmed = String(text.trimmingWhitespace())
        guard let raw = Double(trimmed), raw.isFinite else {
            return .failure(ValueProblem("\"\(trimmed.prefix(40))\" is not a number"))
        }
        return .success(channel.degrees(raw: raw))
    }
}
