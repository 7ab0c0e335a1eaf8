/// An accelerometer's motion interrupt through the IIO event interface: the sysfs switches that
/// arm it and the event records the kernel queues when it fires.
///
/// Why: many accelerometers (bmc150, kxcjk-1013, mma8452, adxl372…) compare every measurement with
/// a threshold in hardware and raise an interrupt on motion. While the device rests, orientd need
/// not read the sensor at all to know it has not moved: it sleeps on the event descriptor and reads
/// again when the interrupt fires (docs/sensors.md, "Adaptive pacing").
public enum MotionEvents {
    /// The `events/` switches of one kind of motion event, all axes of it (writing 1 arms them).
    public struct Switches: Sendable, Hashable {
        /// Paths below the device's sysfs directory, e.g. `events/in_accel_x_roc_either_en`.
        public var enables: [String]

        public init(enables: [String]) { self.enables = enables }
    }

    /// The event types that mean "the reading moved", in the order they are preferred: magnitude
    /// (mma8452's transient detection), rate of change (bmc150's slope), threshold (kxcjk-1013's
    /// wake-up, adxl372's activity) and their adaptive forms. A falling direction is free fall or
    /// inactivity, never motion.
    static let motionTypes = ["mag", "roc", "thresh", "mag_adaptive", "thresh_adaptive"]
    static let motionDirections = ["rising", "either"]

    /// The switches to arm among a device's attribute names (paths relative to its sysfs
    /// directory), or nil when it offers no accelerometer motion event.
    ///
    /// An enable is `events/in_accel[_AXIS]_TYPE_DIRECTION_en` (one per axis, or one shared by the
    /// axes), or adxl372's `events/thresh_rising_en` shared by every channel.
    public static func switches(among attributes: [String]) -> Switches? {
        let names = Set(attributes)
        for type in motionTypes {
            for direction in motionDirections {
                let shared = "events/in_accel_\(type)_\(direction)_en"
                let perAxis = ["x", "y", "z"].map { "events/in_accel_\($0)_\(type)_\(direction)_en" }.filter(
                    names.contains)
                if names.contains(shared) { return Switches(enables: [shared] + perAxis) }
                if !perAxis.isEmpty { return Switches(enables: perAxis) }
                let combined = "events/in_accel_x&y&z_\(type)_\(direction)_en"
                if names.contains(combined) { return Switches(enables: [combined]) }
            }
        }
        return names.contains("events/thresh_rising_en") ? Switches(enables: ["events/thresh_rising_en"]) : nil
    }

    /// Every enable ``switches(among:)`` may choose, to look for in a device's sysfs directory.
    public static let candidateEnables: [String] =
        motionTypes.flatMap { type in
            motionDirections.flatMap { direction in
                ["events/in_accel_\(type)_\(direction)_en", "events/in_accel_x&y&z_\(type)_\(direction)_en"]
                    + ["x", "y", "z"].map { "events/in_accel_\($0)_\(type)_\(direction)_en" }
            }
        } + ["events/thresh_rising_en"]

    /// While the device rests on its motion interrupt, the sensor is still read this often (s): the
    /// interrupt's threshold is the driver's, which orientd cannot read in physical units, so a
    /// check read that finds the reading moved without an interrupt shows the threshold too coarse
    /// for rotation, and adaptive polling takes over.
    public static let checkInterval = 5.0

    /// The size of `struct iio_event_data`: `__u64 id; __s64 timestamp;`.
    public static let recordSize = 16

    /// One event's code (`iio_event_data.id`), decoded as linux/iio/events.h's
    /// `IIO_EVENT_CODE_EXTRACT_*` macros do.
    public struct Code: Sendable, Hashable {
        public let raw: UInt64

        public init(_ raw: UInt64) { self.raw = raw }

        /// `enum iio_event_type`: 0 thresh, 1 mag, 2 roc, 3 thresh_adaptive, 4 mag_adaptive, 5 change…
        public var type: UInt8 { UInt8(truncatingIfNeeded: raw >> 56) }
        /// `enum iio_event_direction`: 0 either, 1 rising, 2 falling, 3 none.
        public var direction: UInt8 { UInt8(truncatingIfNeeded: (raw >> 48) & 0x7f) }
        /// `enum iio_modifier`: 1 x, 2 y, 3 z, 7 x&y&z, 11 x|y|z…
        public var modifier: UInt8 { UInt8(truncatingIfNeeded: raw >> 40) }
        /// `enum iio_chan_type`: 3 is IIO_ACCEL.
        public var channelType: UInt8 { UInt8(truncatingIfNeeded: raw >> 32) }

        /// An accelerometer's reading moved: a threshold, magnitude or rate-of-change event, or an
        /// adaptive one, in any direction (bmc150 and kxcjk-1013 give the slope's sign as rising or
        /// falling; a magnitude falling is free fall, which moves the device too).
        public var isMotion: Bool { channelType == 3 && type <= 4 }
    }

    /// The event codes in a read of the event descriptor (whole records only, native byte order as
    /// the kernel writes them).
    public static func codes(in bytes: UnsafeRawBufferPointer) -> [Code] {
        stride(from: 0, through: bytes.count - recordSize, by: recordSize).map {
            Code(bytes.loadUnaligned(fromByteOffset: $0, as: UInt64.self))
        }
    }
}
