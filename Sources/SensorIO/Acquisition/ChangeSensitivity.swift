import SensorCore

/// An HID sensor hub's change sensitivity (`in_accel_hysteresis`, the HID usage "change
/// sensitivity absolute"): the hub sends a report only when a value moved by it since the last
/// report sent. At rest orientd sets it, so that a still device sends nothing at all (no report on
/// the bus, no wake-up here; iio-sensor-proxy leaves the hub reporting every interval), and while
/// the device moves it clears it, so that the detector gets every report. A value the hub does not
/// report stands within the sensitivity of the last one: that one is held (``heldInterval``).
///
/// A hub's gyroscope (`gyro_3d`, `in_anglvel_hysteresis`) runs only while the device moves, and its
/// sensitivity is cleared while it runs: a steady turn repeats one rate, which a hub with a
/// sensitivity would report once and then never again until the turn ends.
///
/// Only for the kernel's HID sensor drivers, whose `hysteresis` is in the hub's own unit (g for an
/// accelerometer, as `convert_from_vtf_format` gives it); another driver's attribute may mean
/// something else, and is left alone.
struct ChangeSensitivity {
    /// g. 0.05 g moves gravity's direction by 2.9°, far inside the detector's 12° hysteresis, and is
    /// five counts of a hub's 0.01 g: a still device's noise stays under it.
    static let rest = 0.05
    /// Seconds: the last report is taken again this often while the hub says nothing and no rest
    /// interval is asked (pacing off), so that the detector's silence timeout (2 s) never reads a
    /// quiet hub as a silent sensor. At rest the hub serves as the sensor's motion interrupt and the
    /// pace's check interval (``MotionEvents/checkInterval``) applies, as its silence deadline does.
    static let heldInterval = 1.0

    private let channel: IIOChannel
    /// What the attribute held before orientd set it, written back when sampling stops.
    private let original: String
    /// The sensitivity in force as orientd last wrote it; nil before the first write.
    private(set) var inForce: Double?
    /// Set once a write is refused: no more are tried (the hub keeps its own sensitivity).
    private(set) var refused: IIOError?

    /// How the sensor rests, as `list-sensors` and the log say it.
    static let pacing = "the hub's change sensitivity (\(rest) g at rest: a still device sends nothing)"

    /// The HID drivers' IIO names, and the attribute of each.
    private static let attributes = ["accel_3d": "in_accel_hysteresis", "gyro_3d": "in_anglvel_hysteresis"]

    /// Whether a device named `name` (sysfs `name`) with these attributes is an HID accelerometer or
    /// gyroscope whose change sensitivity orientd sets.
    static func applies(name: String?, hasAttribute: ((String) -> Bool)?) -> Bool {
        guard let name, let attribute = attributes[String(name.trimmingWhitespace())] else { return false }
        return hasAttribute?(attribute) == true
    }

    /// The sensitivity of `device` (`channel` one of its channels) when it is an HID accelerometer
    /// or gyroscope whose attribute reads, else nil.
    init?(device: IIODevice, channel: IIOChannel) {
        guard Self.applies(name: device.name, hasAttribute: { _ in channel.hasAttribute("hysteresis") }),
            let text = try? channel.readAttribute("hysteresis")
        else { return nil }
        self.channel = channel
        original = String(text.trimmingWhitespace())
    }

    /// The sensitivity for the device as the pace sees it: ``rest`` at rest, none while it moves.
    static func wanted(resting: Bool) -> Double { resting ? rest : 0 }

    /// Whether a still hub now sends nothing, so that its silence means "unchanged".
    var holdsWhenQuiet: Bool { (inForce ?? 0) > 0 }

    /// Writes `value` unless it is in force already, or a write was refused before; returns the
    /// refusal the first time (the hub then reports as it will, and reports are taken as they come).
    mutating func set(_ value: Double) -> IIOError? {
        guard value != inForce, refused == nil else { return nil }
        do {
            try channel.writeAttribute("hysteresis", String(value))
            inForce = value
            return nil
        } catch {
            inForce = nil
            refused = error
            return error
        }
    }

    /// Puts back what the attribute held before (sampling stops: the next reader finds the hub as
    /// it was).
    func restore() {
        guard inForce != nil else { return }
        try? channel.writeAttribute("hysteresis", original)
    }
}
