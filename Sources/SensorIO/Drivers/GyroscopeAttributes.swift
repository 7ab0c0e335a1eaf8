import OrientationCore
import SensorCore

/// What a gyroscope's own attributes say before it is read, judged one way wherever it is found: an
/// IMU's `in_anglvel` channels (``AccelerometerDiscovery`` for `list-sensors`, ``IIOAcquisition`` for
/// the daemon) and a gyroscope in a device of its own (``IIOGyroscopeDriver``).
///
/// Why: a scale of 0 or `nan` turns every rate into nothing or into nonsense, and a matrix that
/// cannot be parsed silently became the identity. Each now names its device and attribute, and a
/// gyroscope whose rates cannot be converted is not read at all: detection is then exactly the
/// accelerometer's, and the log and `list-sensors` say why.
enum GyroscopeAttributes {
    /// Why the gyroscope is not read, or nil: every scale given (per axis, `in_anglvel_x_scale`, or
    /// shared, `in_anglvel_scale`) is a positive number. An absent scale is the ABI's 1 (raw in
    /// rad/s).
    static func scaleProblem(device: String, scales: [(attribute: String, text: String?)]) -> String? {
        for (attribute, text) in scales {
            guard let text else { continue }
            let trimmed = text.trimmingWhitespace()
            if AttributeNumber.positiveScale(trimmed) == nil {
                return "\(device): \(attribute) \"\(trimmed)\" is not a positive number: the gyroscope is not read"
            }
        }
        return nil
    }

    /// An IMU's gyroscope in words, as `list-sensors` and the daemon's log give it (one text, so the
    /// log says it once): read with the accelerometer (`buffered` or polled), or why not.
    static func imuText(device: String, buffered: Bool, notRead: String?) -> String {
        guard let notRead else {
            return """
                in_anglvel of \(device), read with the accelerometer (\(buffered ? "in the buffer" : "polled")) \
                while the device moves
                """
        }
        return "in_anglvel of \(device), not read: \(notRead)"
    }

    /// The gyroscope's own matrix (`attribute`'s `text`) read as the IMU's: nil when absent or the
    /// accelerometer's; otherwise the warning (the accelerometer's is used: one chip, one frame).
    static func imuMatrixProblem(
        device: String, attribute: String, text: String?, accelerometer: MountMatrix
    )
        -> String?
    {
        guard let text else { return nil }
        let trimmed = String(text.trimmingWhitespace())
        do {
            let own = try MountMatrix(parsing: trimmed)
            guard own != accelerometer else { return nil }
            return """
                \(device): \(attribute) (\(own.text)) differs from the accelerometer's \
                (\(accelerometer.text)): the gyroscope is read with the accelerometer's
                """
        } catch {
            return "\(device): \(attribute) ignored: \(error)"
        }
    }
}
