import Testing
import OrientationCore
@testable import SensorCore

@Suite("hwdb entries")
struct SensorHwdbEntryTests {
    static let dmi =
        """
        dmi:bvnAmericanMegatrendsInc.:bvr5.12:bd07/17/2019:br5.12:svnAcme:pnSlate \
        10:pvr1.0:rvnAcme:rnSL10:rvr1.0:cvnAcme:ct32:cvr1.0:
        """
    static let swapped = try! MountMatrix(parsing: "0, 1, 0; 1, 0, 0; 0, 0, 1")

    @Test("keyed like systemd's entries: parent modalias, then the machine's vendor and product")
    func modaliasKey() {
        let identity = SensorHwdbEntry.Identity(
            parentModalias: "acpi:BOSC0200:BOSC0200:", dmiModalias: Self.dmi, label: nil)
        let entry = SensorHwdbEntry(identity: identity, matrix: Self.swapped, comment: ["bmc150 (iio:device0)"])
        #expect(entry.matchKeys == ["sensor:modalias:acpi:BOSC0200:BOSC0200*:dmi:*svnAcme:pnSlate 10:*"])
        #expect(
            entry.text == """
                # bmc150 (iio:device0)
                sensor:modalias:acpi:BOSC0200:BOSC0200*:dmi:*svnAcme:pnSlate 10:*
                 ACCEL_MOUNT_MATRIX=0, 1, 0; 1, 0, 0; 0, 0, 1

                """)
        #expect(identity.lookupKeys == ["sensor:modalias:acpi:BOSC0200:BOSC0200::\(Self.dmi)"])
    }

    @Test("a labelled sensor gets the label form besides the modalias form")
    func labelKey() {
        let identity = SensorHwdbEntry.Identity(
            parentModalias: "i2c:bmc150_accel", dmiModalias: Self.dmi, label: "accel-display")
        let entry = SensorHwdbEntry(identity: identity, matrix: Self.swapped)
        #expect(
            entry.matchKeys == [
                "sensor:modalias:i2c:bmc150_accel*:dmi:*svnAcme:pnSlate 10:*",
                "sensor:accel-display:modalias:i2c:bmc150_accel*:dmi:*svnAcme:pnSlate 10:*",
            ])
        #expect(identity.lookupKeys == ["sensor:accel-display:modalias:i2c:bmc150_accel:\(Self.dmi)"])
    }

    @Test("a board without DMI is keyed by the parent alone; wildcard characters in values match themselves loosely")
    func noDMI() {
        let identity = SensorHwdbEntry.Identity(
            parentModalias: "of:NaccelerometerT(null)Cst,lis3dh", dmiModalias: nil, label: nil)
        #expect(identity.machine == nil)
        #expect(
            SensorHwdbEntry(identity: identity, matrix: Self.swapped).matchKeys == [
                "sensor:modalias:of:NaccelerometerT(null)Cst,lis3dh*"
            ])
        let starred = SensorHwdbEntry.Identity(parentModalias: "acpi:X:", dmiModalias: "dmi:svnA*B:pnC[1]:", label: nil)
        #expect(
            SensorHwdbEntry(identity: starred, matrix: Self.swapped).matchKeys == [
                "sensor:modalias:acpi:X*:dmi:*svnA?B:pnC?1?:*"
            ])
    }

    @Test("installing replaces the earlier entry for the same key and keeps everything else")
    func installing() {
        let identity = SensorHwdbEntry.Identity(
            parentModalias: "acpi:BOSC0200:BOSC0200:", dmiModalias: Self.dmi, label: nil)
        let first = SensorHwdbEntry(identity: identity, matrix: .identity, comment: ["first"])
        let created = first.installed(in: nil)
        #expect(created.hasPrefix(SensorHwdbEntry.fileHeader))
        #expect(created.hasSuffix(first.text))
        let someoneElses =
            """
            # the admin's own\nsensor:modalias:acpi:KIOX000A*:dmi:*svnOther:*\n ACCEL_MOUNT_MATRIX=-1, 0, 0; 0, \
            1, 0; 0, 0, 1\n
            """
        let withOther = created + "\n" + someoneElses
        let second = SensorHwdbEntry(identity: identity, matrix: Self.swapped, comment: ["second"])
        let replaced = second.installed(in: withOther)
        #expect(!replaced.contains("# first"))
        #expect(replaced.contains(someoneElses))
        #expect(replaced.contains(SensorHwdbEntry.fileHeader.trimmingSuffix()))
        #expect(replaced.hasSuffix(second.text))
        #expect(replaced.components("ACCEL_MOUNT_MATRIX").count - 1 == 2, "two entries: the admin's and ours")
        // Installing the same entry again changes nothing.
        #expect(second.installed(in: replaced) == replaced)
    }
}

extension String {
    func trimmingSuffix() -> String {
        var copy = self
        while copy.last?.isWhitespace == true { copy.removeLast() }
        return copy
    }

    func components(_ separator: String) -> [Substring] {
        var parts: [Substring] = []
        var rest = self[...]
        while let range = rest.range(of: separator) {
            parts.append(rest[..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        parts.append(rest)
        return parts
    }
}
