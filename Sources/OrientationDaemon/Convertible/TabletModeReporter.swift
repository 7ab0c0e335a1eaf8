import Dispatch
import Logging
import OrientationCore
import SensorCore
import Synchronization

/// Whether orientd offers libinput a tablet-mode switch (`[hinge] tablet-mode-switch`), decided
/// once, when the hinge first decides a mode: a device that never has a mode (no base sensor)
/// never gets a switch, so a tablet is never told it is a laptop.
enum TabletModeSwitchPlan: Equatable {
    case create
    /// Why not, for the log; nil when the setting is off (nothing worth saying).
    case skip(String?)

    static func decide(
        _ setting: TabletModeSwitchMode, uinputPath: String, uinputWritable: Bool, kernelSwitches: [String]
    ) -> TabletModeSwitchPlan {
        switch setting {
        case .off: return .skip(nil)
        case .on: return .create
        case .auto:
            if let kernel = kernelSwitches.first {
                return .skip("the kernel reports tablet mode itself (\(kernel))")
            }
            guard uinputWritable else {
                return .skip("\(uinputPath) is not writable (docs/convertibles.md says how to allow it)")
            }
            return .create
        }
    }
}

/// How the daemon reaches uinput (``TabletModeReporter``'s probe and device), given by the command
/// that wires SensorIO in.
public struct TabletModeSwitchAccess: Sendable {
    let probe: TabletModeReporter.Probe
    let create: TabletModeReporter.Create

    public init(
        probe: @escaping @Sendable (String) -> (uinputWritable: Bool, kernelSwitches: [String]),
        create: @escaping @Sendable (String) throws(InputDeviceError) -> any InputEventWriter
    ) {
        self.probe = probe
        self.create = create
    }
}

/// Keeps a uinput SW_TABLET_MODE switch set to the hinge's mode (docs/convertibles.md): created on
/// the first mode, set on every change, its failures logged once each.
///
/// Its work runs on a serial queue of its own, never on the hub's event loop: deciding walks the
/// input devices in sysfs, creating the device is a round of uinput ioctls, and setting it a write.
/// The hub hands each mode over (``modeChanged(_:)``) and goes on.
final class TabletModeReporter: Sendable {
    typealias Probe = @Sendable (String) -> (uinputWritable: Bool, kernelSwitches: [String])
    typealias Create = @Sendable (String) throws(InputDeviceError) -> any InputEventWriter

    private enum Switch {
        case undecided
        case reporting(any InputEventWriter)
        case off
    }

    private struct State {
        var device = Switch.undecided
        var reported: DeviceMode?
    }

    private let setting: TabletModeSwitchMode
    private let uinputPath: String
    private let probe: Probe
    private let create: Create
    private let logger = Logger(label: "orientd.hinge")
    private let queue = DispatchQueue(label: "orientd.tablet-mode")
    /// Confined to `queue`, as ``WatchedSensorSource``'s state is (the one lock rule's exception).
    private let state = Mutex(State())

    /// - Parameters:
    ///   - probe: whether the uinput device is writable and which tablet-mode switches the kernel has.
    ///   - create: makes the device (``UInputTabletModeSwitch`` in the daemon, a recorder in tests).
    init(setting: TabletModeSwitchMode, uinputPath: String, probe: @escaping Probe, create: @escaping Create) {
        self.setting = setting
        self.uinputPath = uinputPath
        self.probe = probe
        self.create = create
    }

    /// What the switch says now (after any mode handed over before).
    var reported: DeviceMode? { queue.sync { state.withLock { $0.reported } } }

    /// Removes the switch (its uinput device goes with the writer) and reports nothing more; returns
    /// once the work handed over before is done.
    func stop() {
        queue.sync { state.withLock { $0.device = .off } }
    }

    /// The hinge decided `mode`.
    func modeChanged(_ mode: DeviceMode) {
        queue.async { [self] in
            state.withLock { state in
                if case .undecided = state.device { state.device = decide() }
                guard case .reporting(let writer) = state.device, mode != state.reported else { return }
                do {
                    try writer.write(InputEvent.tabletMode(mode == .tablet))
                    state.reported = mode
                    logger.debug("tablet-mode switch set", metadata: ["mode": "\(mode.rawValue)"])
                } catch {
                    logger.error(
                        "the tablet-mode switch cannot be set; it is given up", metadata: ["error": "\(error)"])
                    state.device = .off
                }
            }
        }
    }

    private func decide() -> Switch {
        let (writable, kernelSwitches) = setting == .off ? (false, []) : probe(uinputPath)
        switch TabletModeSwitchPlan.decide(
            setting, uinputPath: uinputPath, uinputWritable: writable, kernelSwitches: kernelSwitches)
        {
        case .skip(let reason):
            if let reason { logger.notice("no tablet-mode switch: \(reason)") }
            return .off
        case .create:
            do {
                let writer = try create(uinputPath)
                logger.notice("tablet-mode switch created for libinput", metadata: ["uinput": "\(uinputPath)"])
                return .reporting(writer)
            } catch {
                let log = setting == .on ? Logger.Level.error : .warning
                logger.log(level: log, "the tablet-mode switch cannot be created", metadata: ["error": "\(error)"])
                return .off
            }
        }
    }
}
