import Foundation
import Testing
import OrientationCore
@testable import SensorCore

@Suite("Mock sources")
struct MockSourceTests {
    func temporaryTrace(_ lines: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orientd-trace-\(UUID().uuidString).csv"
        ).path
        try (["t,x,y,z"] + lines).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("a replay reports the sensor, keeps the trace's spacing divided by speed, and ends")
    func replay() async throws {
        let path = try temporaryTrace((0..<5).map { "\(Double($0) * 0.04),0,-9.81,0" })
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = try TraceReplaySource(path: path, speed: 4, mountMatrix: nil)
        try source.start()
        defer { source.shutdown() }
        source.startSampling()
        var times: [Double] = []
        var sawAvailable = false
        for await event in source.events {
            switch event {
            case .available(let description):
                sawAvailable = true
                #expect(description.identifier == "replay:\(path)")
                #expect(description.mountMatrixOrigin == .identity)
            case .sample(let sample):
                times.append(sample.time)
                #expect(sample.reading == Vector3(0, -9.81, 0))
            case .ended:
                source.shutdown()
            default:
                Issue.record("unexpected \(event)")
            }
        }
        #expect(sawAvailable)
        #expect(times.count == 5)
        for (a, b) in zip(times, times.dropFirst()) { #expect(abs((b - a) - 0.01) < 1e-9) }
    }

    @Test("a two-sensor trace replays each side's rows, both counted from the trace's first row")
    func twoSensorReplay() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "orientd-hinge-\(UUID().uuidString).csv"
        ).path
        try [
            "t,location,x,y,z", "0.0,display,0,-9.81,0", "0.1,base,0,0,9.81", "0.2,display,0,-9.7,0",
            "0.3,base,0,0,9.7",
        ]
        .joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        func replay(_ role: SensorRole) async throws -> (SensorDescription?, [SensorSample]) {
            let source = try TraceReplaySource(path: path, speed: 10, mountMatrix: nil, role: role)
            try source.start()
            source.startSampling()
            var description: SensorDescription?
            var samples: [SensorSample] = []
            for await event in source.events {
                if case .available(let given) = event { description = given }
                if case .sample(let sample) = event { samples.append(sample) }
                if case .ended = event { source.shutdown() }
            }
            return (description, samples)
        }
        let (display, displaySamples) = try await replay(.display)
        let (base, baseSamples) = try await replay(.base)
        #expect(display?.location == .display && base?.location == .base && base?.identifier == "replay:\(path)#base")
        #expect(displaySamples.map(\.reading) == [Vector3(0, -9.81, 0), Vector3(0, -9.7, 0)])
        #expect(baseSamples.map(\.reading) == [Vector3(0, 0, 9.81), Vector3(0, 0, 9.7)])
        // Each side keeps the spacing of its own rows.
        #expect(abs((baseSamples[1].time - baseSamples[0].time) - 0.02) < 1e-9)

        // A one-sensor trace has no base: the base source says so and replays nothing.
        let plain = try temporaryTrace(["0,0,-9.81,0"])
        defer { try? FileManager.default.removeItem(atPath: plain) }
        let none = try TraceReplaySource(path: plain, speed: 1, mountMatrix: nil, role: .base)
        try none.start()
        var iterator = none.events.makeAsyncIterator()
        guard case .unavailable(let reason) = await iterator.next() else {
            Issue.record("no unavailable event")
            return
        }
        #expect(reason.contains("no base rows"))
        none.shutdown()
        #expect(await iterator.next() == nil)
    }

    @Test("a replay does not run before sampling starts")
    func replayWaitsForStart() async throws {
        let path = try temporaryTrace(["0,0,-9.81,0", "0.01,0,-9.81,0"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = try TraceReplaySource(path: path, speed: 1, mountMatrix: nil)
        try source.start()
        var iterator = source.events.makeAsyncIterator()
        guard case .available = await iterator.next() else {
            Issue.record("no available event")
            return
        }
        source.shutdown()  // never started: the stream ends without a sample
        #expect(await iterator.next() == nil)
    }

    @Test("a bad trace is refused with its file and line")
    func badTrace() throws {
        let path = try temporaryTrace(["0,0,-9.81,0", "0.04,0,abc,0"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(
            throws: TraceFileError(
                path: path, line: 3, problem: "field y \"abc\" is not a finite number: \"0.04,0,abc,0\"")
        ) {
            try TraceReplaySource(path: path, speed: 1, mountMatrix: nil)
        }
        #expect(throws: TraceFileError.self) {
            try TraceReplaySource(path: "/nonexistent.csv", speed: 1, mountMatrix: nil)
        }
    }

    @Test("standard input: samples as lines arrive, a bad line is a fault and skipped, end of input ends")
    func standardInput() async throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let source = StandardInputSource(
            fileDescriptor: descriptors[0], mountMatrix: try MountMatrix(parsing: "0, 1, 0; 1, 0, 0; 0, 0, 1"))
        try source.start()
        defer {
            source.shutdown()
            close(descriptors[0])
        }
        source.startSampling()
        let text = "t,x,y,z\n0,1,2,3\n0.5,garbage\n0.7,4,5,6\n"
        _ = text.withCString { write(descriptors[1], $0, strlen($0)) }
        close(descriptors[1])
        var samples: [SensorSample] = []
        var faults: [SensorFault] = []
        for await event in source.events {
            switch event {
            case .available(let description): #expect(description.mountMatrixOrigin == .configured)
            case .sample(let sample): samples.append(sample)
            case .fault(let fault): faults.append(fault)
            case .recovered, .note: break
            case .ended: source.shutdown()
            case .unavailable: Issue.record("unexpected unavailable")
            }
        }
        #expect(samples.map(\.reading) == [Vector3(1, 2, 3), Vector3(4, 5, 6)])
        #expect(abs((samples[1].time - samples[0].time) - 0.7) < 1e-9)
        #expect(faults.count == 1)
        #expect(faults.first?.detail.contains("line 3") == true)
    }
}
