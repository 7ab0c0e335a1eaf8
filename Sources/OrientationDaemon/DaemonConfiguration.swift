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
    public var detector = DetectorConfiguration()

    public init() {}
}
