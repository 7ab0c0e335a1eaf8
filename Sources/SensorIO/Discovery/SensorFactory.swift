import SensorCore

/// Builds the source a ``SensorConfiguration`` asks for: the only place that knows every kind.
public enum SensorFactory {
    public enum SetupError: Error, CustomStringConvertible {
        case trace(TraceFileError)
        case udev(UdevError)

        public var description: String {
            switch self {
            case .trace(let error): error.description
            case .udev(let error): "cannot watch for accelerometers: \(error)"
            }
        }
    }

    public static func makeSource(_ configuration: SensorConfiguration) throws(SetupError) -> any AccelerometerSource {
        switch configuration.specification {
        case .replay(let path, let speed):
            do {
                return try TraceReplaySource(
                    path: path, speed: speed, mountMatrix: configuration.mountMatrix, role: configuration.role)
            } catch {
                throw .trace(error)
            }
        case .standardInput:
            return StandardInputSource(mountMatrix: configuration.mountMatrix)
        case .auto, .iioName, .iioDevice, .inputDevice, .network:
            do {
                return try IIOAccelerometerSource(configuration: configuration)
            } catch {
                throw .udev(error)
            }
        }
    }
}
