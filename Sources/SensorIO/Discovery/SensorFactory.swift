import SensorCore

/// Builds the source a ``SensorConfiguration`` asks for: the only place that knows every kind. The
/// source holds nothing until its `start()`.
public enum SensorFactory {
    public enum SetupError: Error, CustomStringConvertible {
        case trace(TraceFileError)
        case start(SensorStartError)

        public var description: String {
            switch self {
            case .trace(let error): error.description
            case .start(let error): error.description
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
            return IIOAccelerometerSource(configuration: configuration)
        }
    }

    /// A source that already watches for its sensor: for the commands that read one directly (the
    /// daemon starts its sources as parts of its one list instead).
    public static func openSource(_ configuration: SensorConfiguration) throws(SetupError) -> any AccelerometerSource {
        let source = try makeSource(configuration)
        do {
            try source.start()
        } catch {
            throw .start(error)
        }
        return source
    }
}
