import SensorCore
import Testing

@testable import SensorIO

/// What goes to and comes from evdev and uinput: `struct input_event` and the switch bitmasks.
@Suite("Input events")
struct InputEventEncodingTests {
    @Test("events are encoded as this ABI's struct input_event, and decode back")
    func encoding() {
        let events = InputEvent.tabletMode(true)
        let bytes = UInputTabletModeSwitch.encode(events)
        #expect(
            bytes.count == 2 * MemoryLayout<Int>.size * 2 + 2 * 8,
            "a timeval (two longs), type, code and value per event")
        #expect(UInputTabletModeSwitch.decode(bytes) == events)
        // x86_64 and aarch64: 16 bytes of time (zero: the kernel stamps it), then type, code, value, little-endian.
        if MemoryLayout<Int>.size == 8 {
            #expect(Array(bytes[0..<24]) == [UInt8](repeating: 0, count: 16) + [5, 0, 1, 0, 1, 0, 0, 0])
        }
    }

    @Test("sysfs switch bitmasks: words of a long, the most significant first")
    func bitmask() {
        #expect(InputSwitches.hasBit(1, inBitmask: "2"))  // SW_TABLET_MODE alone
        #expect(InputSwitches.hasBit(0, inBitmask: "1") && !InputSwitches.hasBit(1, inBitmask: "1"))  // a lid switch
        #expect(InputSwitches.hasBit(1, inBitmask: "3"))
        #expect(!InputSwitches.hasBit(1, inBitmask: "0"))
        #expect(!InputSwitches.hasBit(70, inBitmask: "2"))
        #expect(!InputSwitches.hasBit(1, inBitmask: "zz"))
    }
}
