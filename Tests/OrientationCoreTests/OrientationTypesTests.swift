import Testing
@testable import OrientationCore

@Suite("Orientation types")
struct OrientationTypesTests {
    @Test("wire names are exactly the camelCase names")
    func wireNames() {
        #expect(
            DeviceOrientation.allCases.map(\.rawValue) == [
                "unknown", "portrait", "portraitUpsideDown", "landscapeLeft", "landscapeRight", "faceUp", "faceDown",
            ])
        #expect(
            InterfaceOrientation.allCases.map(\.rawValue) == [
                "unknown", "portrait", "portraitUpsideDown", "landscapeLeft", "landscapeRight",
            ])
    }

    @Test("UIKit raw values (resolver.md §2.1, §2.2)")
    func rawValues() {
        #expect(DeviceOrientation.allCases.map(\.uikitRawValue) == [0, 1, 2, 3, 4, 5, 6])
        #expect(InterfaceOrientation.landscapeLeft.uikitRawValue == 4)
        #expect(InterfaceOrientation.landscapeRight.uikitRawValue == 3)
    }

    @Test("device → interface crosses over for landscape, flat and unknown never rotate")
    func deviceToInterface() {
        #expect(DeviceOrientation.portrait.interfaceOrientation == .portrait)
        #expect(DeviceOrientation.portraitUpsideDown.interfaceOrientation == .portraitUpsideDown)
        #expect(DeviceOrientation.landscapeLeft.interfaceOrientation == .landscapeRight)
        #expect(DeviceOrientation.landscapeRight.interfaceOrientation == .landscapeLeft)
        #expect(DeviceOrientation.faceUp.interfaceOrientation == nil)
        #expect(DeviceOrientation.faceDown.interfaceOrientation == nil)
        #expect(DeviceOrientation.unknown.interfaceOrientation == nil)
        for interface in InterfaceOrientation.allCases where interface != .unknown {
            #expect(interface.deviceOrientation?.interfaceOrientation == interface)
        }
        #expect(InterfaceOrientation.unknown.deviceOrientation == nil)
    }

    @Test("mask bit values and named combinations (resolver.md §2.4)")
    func maskValues() {
        #expect(InterfaceOrientationMask.portrait.rawValue == 2)
        #expect(InterfaceOrientationMask.portraitUpsideDown.rawValue == 4)
        #expect(InterfaceOrientationMask.landscapeRight.rawValue == 8)
        #expect(InterfaceOrientationMask.landscapeLeft.rawValue == 16)
        #expect(InterfaceOrientationMask.landscape.rawValue == 24)
        #expect(InterfaceOrientationMask.allButUpsideDown.rawValue == 26)
        #expect(InterfaceOrientationMask.all.rawValue == 30)
        #expect(InterfaceOrientationMask(name: "allButUpsideDown") == .allButUpsideDown)
        #expect(InterfaceOrientationMask(name: "sideways") == nil)
        #expect(InterfaceOrientationMask(.landscapeLeft).rawValue == 16)
        #expect(InterfaceOrientationMask(.unknown).isEmpty)
        #expect(!InterfaceOrientationMask.all.allows(.unknown))
        #expect(InterfaceOrientationMask.allButUpsideDown.orientations == [.portrait, .landscapeLeft, .landscapeRight])
    }

    @Test("a landscapeLeft mask accepts the device orientation landscapeRight")
    func maskBitsAreInterfaceOrientations() throws {
        let interface = try #require(DeviceOrientation.landscapeRight.interfaceOrientation)
        #expect(InterfaceOrientationMask.landscapeLeft.allows(interface))
        #expect(!InterfaceOrientationMask.landscapeRight.allows(interface))
    }

    @Test("rotation angles, transforms and deltas (resolver.md §2.5)")
    func rotation() {
        #expect(InterfaceOrientation.landscapeLeft.rotationDegrees == -90)
        #expect(InterfaceOrientation.landscapeRight.rotationDegrees == 90)
        #expect(InterfaceOrientation.portraitUpsideDown.rotationDegrees == 180)
        #expect(InterfaceOrientation.landscapeLeft.transform == [0, -1, 1, 0, 0, 0])
        #expect(InterfaceOrientation.unknown.transform == nil)
        #expect(InterfaceOrientation.landscapeRight.deltaDegrees(from: .landscapeLeft) == 180)
        #expect(InterfaceOrientation.landscapeLeft.deltaDegrees(from: .landscapeRight) == 180)
        #expect(InterfaceOrientation.landscapeLeft.deltaDegrees(from: .portraitUpsideDown) == 90)
        #expect(InterfaceOrientation.portraitUpsideDown.deltaDegrees(from: .landscapeRight) == 90)
        #expect(InterfaceOrientation.portrait.deltaDegrees(from: .landscapeRight) == -90)
        #expect(InterfaceOrientation.portrait.deltaDegrees(from: .unknown) == nil)
    }
}
