import OrientationCore

/// Everything the daemon is configured with (defaults, then the configuration file, then flags).
public struct DaemonConfiguration: Sendable, Hashable {
    /// The Unix socket clients connect to.
    public var socketPath = "/run/orientd/orientd.sock"
    /// Mode of the socket file; reading orientation is not a secret.
    public var socketMode: UInt32 = 0o666
    /// Group owning the socket file (nil: the daemon's own).
    public var socketGroup: String?
    /// Members of this group may use privileged ops (`lock`, `system.*`) besides root.
    public var controlGroup: String?
    /// Connections beyond this are refused with `too-many-clients`.
    public var maximumClients = 1024
    /// Nodes a connection's session may hold (all levels and stacks together).
    public var maximumSessionNodes = 256
    /// A client that cannot take events for this long is disconnected.
    public var stallTimeout = 10.0
    /// The sensor keeps sampling this long after the last claim ends (a client reconnecting at once
    /// does not reopen it).
    public var claimLinger = 2.0
    /// The system resolver session: idiom, app-wide mask, rotation lock at start.
    public var idiom: DeviceIdiom = .pad
    public var supportedOrientations: InterfaceOrientationMask = .all
    public var lockedAtStart = false
    /// `[session] persist-lock`: the lock and what it pins are kept in the state directory
    /// (``KeptLockFile``) and restored at start.
    public var persistLock = true
    /// The device orientation the lock pins at start when it was kept (nil: the pin engaging it
    /// chooses).
    public var lockPinAtStart: DeviceOrientation?
    /// Where a lock change is saved (`orientd serve` sets it from `$STATE_DIRECTORY` when
    /// `persistLock` is on; nil: nowhere).
    public var keptLockPath: String?
    public var detector = DetectorConfiguration()
    /// `[sensor] rest-rate` and `motion-margin`: a polled sensor is read at the rest rate while the
    /// device rests (``SamplingPace``); a rest rate of 0 reads at the configured rate always.
    public var restRate = SamplingPace.Settings().restRate
    /// `[sensor] held-rate`: the rest rate of a device that sways at rest (held in a hand); 0 reads
    /// it at the rest rate too.
    public var heldRate = SamplingPace.Settings().heldRate
    /// `[sensor] gyroscope-rate`: the rate while the device moves and a working gyroscope runs, when
    /// faster than the sensor's (``SamplingPace/Settings/gyroscopeRate``); 0 leaves the sensor's.
    public var gyroscopeRate = SamplingPace.Settings().gyroscopeRate
    /// In g (``SamplingPace/Settings/motionMargin`` is in m/s²).
    public var motionMargin = SamplingPace.Settings().motionMargin / 9.81

    /// The pace's settings, or nil when adaptive pacing is off (a rest rate of 0). The fast rate is
    /// the sensor's own (the acquisition reads at it whenever the pace is not at rest), and a rest
    /// rate above it changes nothing.
    public func samplingPace() -> SamplingPace.Settings? {
        guard restRate > 0 else { return nil }
        var settings = SamplingPace.Settings(
            restRate: restRate, heldRate: heldRate, motionMargin: motionMargin * detector.gravity)
        settings.gyroscopeRate = gyroscopeRate
        return settings
    }
    /// Whether to serve net.hadess.SensorProxy on the system bus.
    public var dbusMode = DBusMode.auto
    /// Ask polkit about every D-Bus claim (`net.hadess.SensorProxy.claim-sensor`), as
    /// iio-sensor-proxy 3.4+ does.
    public var dbusPolkit = true
    /// `[dbus] follows-lock`: while the rotation lock is engaged, D-Bus clients see the orientation
    /// it pins in `AccelerometerOrientation`, as orientd's own clients see the interface held; off
    /// for a desktop that manages a lock of its own.
    public var dbusFollowsLock = true
    /// A convertible's hinge detector (docs/convertibles.md).
    public var hinge = HingeConfiguration()
    /// In laptop mode the system session (and every resolver session and D-Bus) keeps the natural
    /// orientation instead of following the display sensor, which tilts with the lid.
    public var laptopKeepsNormal = true
    /// Whether to report tablet mode to libinput through a uinput SW_TABLET_MODE switch.
    public var tabletModeSwitch = TabletModeSwitchMode.auto
    /// The uinput device the switch is created through.
    public var uinputPath = "/dev/uinput"

    public init() {}
}

/// `[hinge] tablet-mode-switch`.
public enum TabletModeSwitchMode: String, Sendable, Hashable, CaseIterable {
    /// When the uinput device is writable and the kernel reports no tablet-mode switch of its own.
    case auto
    /// Always; a switch that cannot be created is an error in the log and `orientctl get`.
    case on
    case off
}

/// `[dbus] mode`.
public enum DBusMode: String, Sendable, Hashable, CaseIterable {
    /// Serve when the system bus is reachable at start; otherwise log it once and serve the socket alone.
    case auto
    /// Serve, or exit 69 (EX_UNAVAILABLE) when the system bus is not reachable.
    case on
    /// Never.
    case off
}
