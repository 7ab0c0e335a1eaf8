/// Why a source could not begin watching for its sensor (udev unusable, no thread): the daemon's
/// part for that sensor fails to start, and everything started before it stops.
public struct SensorStartError: Error, CustomStringConvertible, Sendable {
    /// What could not be done, with the system's reason: `cannot watch for accelerometers: …`.
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
