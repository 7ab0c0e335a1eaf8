import ArgumentParser
import SensorIO

/// `orientd release-buffers`: disables IIO buffers a process that ended left enabled.
struct ReleaseBuffersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "release-buffers",
        abstract: "Disable IIO buffers left enabled by a process that ended (killed or crashed).",
        discussion: """
            An IIO buffer stays enabled after the process that enabled it dies: the sensor keeps \
            capturing, and an HID sensor hub stays powered and reporting. A buffer is left over when \
            it is enabled (buffer/enable 1) and no process holds its device node open (the kernel \
            lets one process at a time open it): those are disabled, one line each. A buffer in use \
            by a live reader is left alone. The orientd unit runs this after the daemon stops, \
            whichever way it stopped (ExecStopPost=), so that a daemon that died leaves nothing \
            capturing.

            Exit status: 0 when every left-over buffer was disabled (or none was found), 1 when one \
            could not be, 69 when udev cannot be read.
            """
    )

    @Flag(name: .customLong("dry-run"), help: "Only say which buffers would be disabled.")
    var dryRun = false

    func run() throws {
        let findings: [OrphanedBuffers.Finding]
        do {
            findings = try OrphanedBuffers.release(dryRun: dryRun)
        } catch {
            printError("orientd release-buffers: cannot read udev: \(error)")
            throw ExitCode(69)
        }
        for finding in findings {
            print(
                dryRun && finding.outcome == .released
                    ? "\(finding.device): left over: would be disabled" : "\(finding)")
        }
        if findings.contains(where: { if case .failed = $0.outcome { true } else { false } }) {
            throw ExitCode(1)
        }
    }
}
