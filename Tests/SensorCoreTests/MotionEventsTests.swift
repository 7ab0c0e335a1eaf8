import Testing
@testable import SensorCore

@Suite("Motion events")
struct MotionEventsTests {
    @Test("the switches of real drivers' motion events are found, every axis of the preferred kind")
    func switches() {
        // mma8452: transient detection per axis, its value and period shared.
        #expect(
            MotionEvents.switches(among: [
                "events/in_accel_x_mag_rising_en", "events/in_accel_y_mag_rising_en", "events/in_accel_z_mag_rising_en",
                "events/in_accel_mag_rising_value", "events/in_accel_x&y&z_mag_falling_en",
            ])
                == .init(enables: [
                    "events/in_accel_x_mag_rising_en", "events/in_accel_y_mag_rising_en",
                    "events/in_accel_z_mag_rising_en",
                ]))
        // bmc150: slope (rate of change) either way.
        #expect(
            MotionEvents.switches(among: [
                "events/in_accel_x_roc_either_en", "events/in_accel_y_roc_either_en", "events/in_accel_z_roc_either_en",
            ])?.enables.count == 3)
        // kxcjk-1013: wake-up threshold either way.
        #expect(
            MotionEvents.switches(among: [
                "events/in_accel_x_thresh_either_en", "events/in_accel_x_thresh_either_value",
            ])
                == .init(enables: ["events/in_accel_x_thresh_either_en"]))
        // A shared enable, and adxl372's enable shared by every channel.
        #expect(
            MotionEvents.switches(among: ["events/in_accel_mag_rising_en"])
                == .init(enables: ["events/in_accel_mag_rising_en"]))
        #expect(
            MotionEvents.switches(among: ["events/thresh_rising_en", "events/thresh_falling_en"])
                == .init(enables: ["events/thresh_rising_en"]))
        // Magnitude is preferred to a threshold when both exist.
        #expect(
            MotionEvents.switches(among: ["events/in_accel_x_thresh_either_en", "events/in_accel_mag_rising_en"])?
                .enables == ["events/in_accel_mag_rising_en"])
    }

    @Test("only falling events, other channels' events and no events arm nothing")
    func notMotion() {
        #expect(MotionEvents.switches(among: ["events/in_accel_x&y&z_mag_falling_en"]) == nil)
        #expect(MotionEvents.switches(among: ["events/in_proximity0_thresh_rising_en", "in_accel_x_raw"]) == nil)
        #expect(MotionEvents.switches(among: []) == nil)
    }

    /// `IIO_MOD_EVENT_CODE(chan_type, 0, modifier, type, direction)` of the kernel's iio/events.h.
    private func code(channel: UInt64, modifier: UInt64, type: UInt64, direction: UInt64) -> UInt64 {
        type << 56 | direction << 48 | modifier << 40 | channel << 32
    }

    @Test("event records decode as the kernel's IIO_EVENT_CODE_EXTRACT macros do")
    func decoding() {
        let mmaRising = code(channel: 3, modifier: 1, type: 1, direction: 1)  // accel x, mag, rising
        // accel z, roc, falling (the slope's sign)
        let bmcFalling = code(channel: 3, modifier: 3, type: 2, direction: 2)
        let freeFall = code(channel: 3, modifier: 7, type: 1, direction: 2)  // accel x&y&z, mag, falling
        let proximity = code(channel: 9, modifier: 0, type: 0, direction: 1)  // proximity thresh rising
        let anyAxis = code(channel: 3, modifier: 11, type: 0, direction: 1)  // adxl372 activity
        #expect(mmaRising == 0x0101_0103_0000_0000)
        var records: [UInt64] = []
        // id, timestamp
        for id in [mmaRising, bmcFalling, freeFall, proximity, anyAxis] { records += [id, 123_456_789] }
        let codes = records.withUnsafeBytes { MotionEvents.codes(in: $0) }
        #expect(codes.map(\.raw) == [mmaRising, bmcFalling, freeFall, proximity, anyAxis])
        #expect(codes.map(\.isMotion) == [true, true, true, false, true])
        #expect(codes[0].channelType == 3 && codes[0].modifier == 1 && codes[0].type == 1 && codes[0].direction == 1)
        // A read that ends in part of a record yields the whole records only.
        let partial = records.withUnsafeBytes { MotionEvents.codes(in: UnsafeRawBufferPointer(rebasing: $0[0..<24])) }
        #expect(partial.map(\.raw) == [mmaRising])
        #expect([UInt64]().withUnsafeBytes { MotionEvents.codes(in: $0) }.isEmpty)
    }
}
