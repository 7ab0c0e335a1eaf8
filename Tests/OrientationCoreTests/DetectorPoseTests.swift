import Testing
@testable import OrientationCore

@Suite("Detector: poses and mount matrices")
struct DetectorPoseTests {
    @Test("each of the six poses gives its orientation", arguments: Pose.named.indices)
    func sixPoses(index: Int) {
        let (pose, orientation) = Pose.named[index]
        var simulator = PoseSimulator()
        simulator.hold(pose, for: 1)
        #expect(simulator.reported == [orientation])
    }

    @Test("upright poses tilted back up to 60° keep their orientation", arguments: [0.0, 30, 60])
    func tiltedBack(tilt: Double) {
        for (pose, orientation) in Pose.named where orientation.isUpright {
            var simulator = PoseSimulator()
            simulator.hold(Pose(angle: pose.angle, tilt: tilt), for: 1)
            #expect(simulator.reported == [orientation], "tilt \(tilt)° at \(pose.angle)°")
        }
    }

    @Test("every pose under all 48 signed axis permutations, with the matching mount matrix")
    func signedPermutations() {
        for matrix in MountMatrix.signedPermutations {
            for (pose, orientation) in Pose.named {
                var pipeline = OrientationPipeline(mountMatrix: matrix)
                var reported: [DeviceOrientation] = []
                let sensorReading = matrix.sensorReading(for: pose.reading())
                for step in 0..<25 {
                    if let change = pipeline.process(time: Double(step) / 25, reading: sensorReading) {
                        reported.append(change.to)
                    }
                }
                #expect(reported == [orientation], "pose \(orientation) with matrix \(matrix)")
            }
        }
    }

    @Test("a wrong mount matrix gives a different orientation (the permutation test can fail)")
    func wrongMatrixMatters() throws {
        let swapped = try MountMatrix(parsing: "0, 1, 0; 1, 0, 0; 0, 0, 1")
        var pipeline = OrientationPipeline(mountMatrix: .identity)
        var last: DeviceOrientation = .unknown
        for step in 0..<25 {
            // A sensor mounted with `swapped` reads this in portrait; the identity matrix misreads it.
            if let change = pipeline.process(
                time: Double(step) / 25, reading: swapped.sensorReading(for: Pose.portrait.reading()))
            {
                last = change.to
            }
        }
        // The swapped sensor reads (−g, 0, 0): left edge down.
        #expect(last == .landscapeLeft)
    }
}
