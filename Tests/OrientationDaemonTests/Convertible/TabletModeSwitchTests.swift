import NIOConcurrencyHelpers
import OrientationCore
import SensorCore
import Testing
@testable import OrientationDaemon

/// Records what would have gone to uinput.
final class RecordingWriter: InputEventWriter, Sendable {
    let written = NIOLockedValueBox<[[InputEvent]]>([])
    let failing: Bool

    init(failing: Bool = false) {
        self.failing = failing
    }

    func write(_ events: [InputEvent]) throws(InputDeviceError) {
        if failing { throw InputDeviceError(path: "/dev/uinput", step: "write", errno: 19, reason: "No such device") }
        written.withLockedValue { $0.append(events) }
    }
}

@Suite("Tablet-mode switch")
struct TabletModeSwitchTests {
    @Test("auto creates the switch only when uinput is writable and the kernel has none; on always; off never")
    func plan() {
        #expect(
            TabletModeSwitchPlan.decide(.auto, uinputPath: "/dev/uinput", uinputWritable: true, kernelSwitches: [])
                == .create)
        #expect(
            TabletModeSwitchPlan.decide(.auto, uinputPath: "/dev/uinput", uinputWritable: false, kernelSwitches: [])
                == .skip("/dev/uinput is not writable (docs/convertibles.md says how to allow it)"))
        #expect(
            TabletModeSwitchPlan.decide(
                .auto, uinputPath: "/dev/uinput", uinputWritable: true, kernelSwitches: ["Intel HID switches"])
                == .skip("the kernel reports tablet mode itself (Intel HID switches)"))
        #expect(
            TabletModeSwitchPlan.decide(.on, uinputPath: "/dev/uinput", uinputWritable: false, kernelSwitches: ["x"])
                == .create)
        #expect(
            TabletModeSwitchPlan.decide(.off, uinputPath: "/dev/uinput", uinputWritable: true, kernelSwitches: [])
                == .skip(nil))
    }

    @Test("the switch is created at the first mode and gets exactly EV_SW SW_TABLET_MODE and SYN_REPORT on each change")
    func eventsWritten() {
        let writer = RecordingWriter()
        let created = NIOLockedValueBox<[String]>([])
        let reporter = TabletModeReporter(
            setting: .auto, uinputPath: "/dev/uinput", probe: { _ in (true, []) },
            create: { path in
                created.withLockedValue { $0.append(path) }
                return writer
            })
        #expect(created.withLockedValue { $0 }.isEmpty, "no mode, no device")
        for mode in [DeviceMode.laptop, .tablet, .tablet, .laptop] { reporter.modeChanged(mode) }
        #expect(reporter.reported == .laptop, "after the modes handed over (the reporter's own queue)")
        #expect(created.withLockedValue { $0 } == ["/dev/uinput"])
        let sw = InputEvent.switchEvent, tabletMode = InputEvent.tabletModeSwitch,
            syn = InputEvent(type: 0, code: 0, value: 0)
        #expect(
            writer.written.withLockedValue { $0 } == [
                [InputEvent(type: sw, code: tabletMode, value: 0), syn],
                [InputEvent(type: sw, code: tabletMode, value: 1), syn],
                [InputEvent(type: sw, code: tabletMode, value: 0), syn],
            ])
        #expect(InputEvent.tabletMode(true).map(\.description) == ["EV_SW SW_TABLET_MODE 1", "EV_SYN SYN_REPORT 0"])
    }

    @Test("no switch when skipped or when creation fails; a failing write gives the switch up")
    func failures() {
        let skipped = TabletModeReporter(
            setting: .auto, uinputPath: "/dev/uinput", probe: { _ in (false, []) },
            create: { _ in
                Issue.record("created although /dev/uinput is not writable")
                return RecordingWriter()
            })
        skipped.modeChanged(.tablet)
        #expect(skipped.reported == nil)
        let refused = TabletModeReporter(
            setting: .on, uinputPath: "/nope", probe: { _ in (false, []) },
            create: { path throws(InputDeviceError) in
                throw InputDeviceError(path: path, step: "open", errno: 2, reason: "No such file or directory")
            })
        refused.modeChanged(.tablet)
        #expect(refused.reported == nil)
        let broken = TabletModeReporter(
            setting: .on, uinputPath: "/dev/uinput", probe: { _ in (true, []) },
            create: { _ in RecordingWriter(failing: true) })
        broken.modeChanged(.tablet)
        broken.modeChanged(.laptop)
        #expect(broken.reported == nil)
    }
}
