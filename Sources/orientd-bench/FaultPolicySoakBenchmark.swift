import OrientationCore
import SensorSimulation

/// The long fault-policy soak of `make bench`: the scenarios of `make test`'s soak (ten simulated
/// minutes each there), played for many simulated hours here with other seeds. It reports how many
/// simulated hours of working sensors passed without a fault, and whether the policies left every
/// orientation change as it was.
enum FaultPolicySoakBenchmark {
    struct Row {
        var scenario: String
        var sessions = 0
        var seconds = 0.0
        var readings = 0
        var changes = 0
        var faults = 0
        var differing = 0
    }

    /// Plays about `hours` simulated hours, shared equally among the scenarios.
    static func run(hours: Double) -> (rows: [Row], wallSeconds: Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let scenarios = WorkingSensorSession.Scenario.soak
        var rows: [Row] = []
        for scenario in scenarios {
            var row = Row(scenario: scenario.description)
            let target = hours * 3600 / Double(scenarios.count)
            var seed: UInt64 = 100
            while row.seconds < target {
                let session = WorkingSensorSession(scenario, seed: seed)
                let outcome = FaultPolicySoak.run(
                    name: scenario.description, readings: session, scaleText: session.part.scaleText)
                row.sessions += 1
                row.seconds += session.duration
                row.readings += outcome.readings
                row.changes += outcome.changesWithout.count
                row.faults += outcome.faults.count
                if outcome.changesWith != outcome.changesWithout { row.differing += 1 }
                seed += 1
            }
            print(
                String(
                    format:
                        "  %@: %d sessions, %.1f simulated h, %d changes, %d faults, %d sessions whose changes differ",
                    row.scenario, row.sessions, row.seconds / 3600, row.changes, row.faults, row.differing))
            rows.append(row)
        }
        let elapsed = clock.now - start
        return (rows, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// The section's Markdown lines.
    static func markdown(rows: [Row], wallSeconds: Double) -> [String] {
        let hours = rows.map(\.seconds).reduce(0, +) / 3600
        let faults = rows.map(\.faults).reduce(0, +)
        let differing = rows.map(\.differing).reduce(0, +)
        var lines = [
            "### Fault policies on working sensors (the long soak)",
            "",
            "Simulated sessions of working sensors (`Sources/SensorSimulation`: poses joined by minimum-jerk turns, "
                + "walking and vehicle accelerations, calibration, noise, quantisation, HID change-only reporting), "
                + "played through "
                + "every fault policy and, beside it, through the detection pipeline alone (`FaultPolicySoak`). `make "
                + "test` plays "
                + "each scenario for ten simulated minutes (the still device for an hour); this plays them with other "
                + "seeds for "
                + String(format: "%.0f", hours) + " simulated hours, in " + String(format: "%.0f", wallSeconds) + " s.",
            "",
            """
            | scenario | sessions | simulated hours | readings | orientation changes | faults declared | sessions \
            whose changes differ |
            """,
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for row in rows {
            lines.append(
                String(
                    format: "| %@ | %d | %.1f | %d | %d | %d | %d |", row.scenario, row.sessions, row.seconds / 3600,
                    row.readings, row.changes, row.faults, row.differing))
        }
        lines.append("")
        lines.append(
            String(format: "Result: %.1f simulated hours without a fault", hours)
                + (faults == 0 ? "" : " — **\(faults) faults declared**")
                + (differing == 0
                    ? "; the policies changed no orientation change." : "; **\(differing) sessions' changes differ**."))
        return lines
    }
}
