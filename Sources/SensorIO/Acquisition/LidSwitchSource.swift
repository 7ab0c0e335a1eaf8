import SensorCore

/// A convertible's lid switch (evdev SW_LID, the "Lid Switch" input device), found through udev by
/// the driver table (``LidSwitchDriver``) and watched like every sensor (``WatchedSensorSource``),
/// read while sampled as an evdev switch (``EvdevSwitchReader``): its state when reading starts and
/// every change after.
public final class EvdevLidSwitchSource: LidSwitchSource, Sendable {
    private let watched: WatchedSensorSource<LidSwitchDevice, LidSwitchEvent>
    public var outlet: EventOutlet<LidSwitchEvent> { watched.outlet }

    /// Holds nothing until ``start()``.
    public init() {
        watched = WatchedSensorSource(
            .init(
                name: "lid switch", queueLabel: "orientd.lid", subsystems: SensorDrivers.subsystems(for: .lidSwitch),
                locate: { udev in
                    let lid = SensorDrivers.matches(for: .lidSwitch, udev: udev).lazy.compactMap {
                        if case .lidSwitch(let device) = $0.match { device } else { nil }
                    }.first
                    return lid.map { .success($0) }
                        ?? .failure(.init(reason: "no input device reports a lid switch (SW_LID)"))
                },
                same: { $0 == $1 }, syspath: \.syspath, identity: { "\($0.name) (\($0.node))" },
                available: { .available(device: "\($0.name) (\($0.node))") },
                unavailable: { .unavailable(reason: $0) },
                read: { lid, queue, emit, lost in
                    EvdevSwitchReader(
                        node: lid.node, code: InputEvent.lidSwitch, device: lid.node, queue: queue,
                        emit: { polled in
                            switch polled {
                            case .reading(let closed, _): emit(.changed(closed: closed))
                            case .fault(let fault): emit(.unreadable(reason: fault.detail))
                            case .recovered: break  // the next state says it
                            }
                        }, lost: lost)
                }))
    }

    public func start() throws(SensorStartError) { try watched.start() }
    public func startSampling() { watched.startSampling() }
    public func stopSampling() { watched.stopSampling() }
    public func stopSampling(then stopped: @escaping @Sendable () -> Void) { watched.stopSampling(then: stopped) }
    public func shutdown() { watched.shutdown() }
}
