import Foundation
import OrientationCore
import OrientationProtocol
import Testing
@testable import OrientationDaemon

/// The rotation lock kept across restarts: the file's form, its atomic write, and the hub asking for
/// it to be saved and restoring what it pins.
@Suite("The kept rotation lock")
struct KeptLockTests {
    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("orientd-kept-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
        return path.path
    }

    @Test("the state directory is $STATE_DIRECTORY's first entry, /var/lib/orientd without it")
    func path() {
        #expect(
            KeptLockFile.path(environment: ["STATE_DIRECTORY": "/var/lib/orientd:/other"]) == "/var/lib/orientd/lock")
        #expect(KeptLockFile.path(environment: ["STATE_DIRECTORY": "/tmp/x"]) == "/tmp/x/lock")
        #expect(KeptLockFile.path(environment: [:]) == "/var/lib/orientd/lock")
    }

    @Test("saved and loaded back; no temporary file is left")
    func roundTrip() throws {
        let folder = try Self.directory()
        let path = folder + "/lock"
        #expect(KeptLockFile.load(path: path) == .missing)
        try KeptLockFile.save(KeptLock(locked: true, pin: .landscapeLeft), path: path)
        #expect(KeptLockFile.load(path: path) == .kept(KeptLock(locked: true, pin: .landscapeLeft)))
        try KeptLockFile.save(KeptLock(locked: false, pin: .portrait), path: path)
        #expect(KeptLockFile.load(path: path) == .kept(KeptLock(locked: false, pin: .portrait)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["lock"])
    }

    @Test(
        "a file that makes no sense is unusable, and says the file and the line",
        arguments: [
            ("locked = maybe\npinned = \"portrait\"\n", ":1:"), ("locked = true\n", "missing"),
            ("locked = true\npinned = \"sideways\"\n", ":2: pinned"), ("locked = true\npinned = \"unknown\"\n", ":2:"),
            ("locked = true\npinned = \"portrait\"\ncolour = 3\n", ":3: unexpected"), ("garbage\n", ":1: expected"),
        ])
    func corrupt(text: String, said: String) throws {
        let path = try Self.directory() + "/lock"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        guard case .unusable(let problem) = KeptLockFile.load(path: path) else {
            Issue.record("\(text.debugDescription) was taken")
            return
        }
        #expect(problem.hasPrefix(path))
        #expect(problem.contains(said), "\(problem)")
    }

    @Test("a directory that cannot be written is an error naming the file")
    func unwritable() {
        #expect(throws: KeptLockError.self) {
            try KeptLockFile.save(KeptLock(locked: true, pin: .portrait), path: "/nonexistent/orientd/lock")
        }
        do {
            try KeptLockFile.save(KeptLock(locked: true, pin: .portrait), path: "/nonexistent/orientd/lock")
        } catch {
            #expect(error.description.hasPrefix("/nonexistent/orientd/lock.new: create failed"))
        }
    }

    @Test("the hub asks for a lock change to be kept, with what it pins, only when a file is configured")
    func hubKeepsTheLock() throws {
        var hub = HubStateMachineTests.machine { $0.keptLockPath = "/tmp/kept" }
        let root = try HubStateMachineTests.connect(&hub, privileged: true)
        _ = hub.detected(SensorDecision(orientation: .landscapeLeft), at: 1)
        let locked = try HubStateMachineTests.ok(&hub, .lock(true), from: root).actions
        #expect(locked.contains(.keepLock(KeptLock(locked: true, pin: .landscapeLeft))))
        let unlocked = try HubStateMachineTests.ok(&hub, .lock(false), from: root).actions
        #expect(unlocked.contains(.keepLock(KeptLock(locked: false, pin: .landscapeLeft))))
        var plain = HubStateMachineTests.machine()
        let other = try HubStateMachineTests.connect(&plain, privileged: true)
        let actions = try HubStateMachineTests.ok(&plain, .lock(true), from: other).actions
        #expect(!actions.contains { if case .keepLock = $0 { true } else { false } })
    }

    @Test("a kept pin is restored: the interface shows it whatever the device does")
    func hubRestoresThePin() {
        var hub = HubStateMachineTests.machine {
            $0.lockedAtStart = true
            $0.lockPinAtStart = .landscapeLeft
        }
        #expect(hub.state.locked)
        _ = hub.detected(SensorDecision(orientation: .portrait), at: 1)
        #expect(hub.state.interface == .landscapeRight)
    }
}
