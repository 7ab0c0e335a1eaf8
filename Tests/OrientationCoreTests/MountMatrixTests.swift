import Testing
@testable import OrientationCore

@Suite("MountMatrix")
struct MountMatrixTests {
    @Test(
        "parses the udev and sysfs spellings",
        arguments: [
            "0, -1, 0; -1, 0, 0; 0, 0, -1",
            "0,-1,0;-1,0,0;0,0,-1",
            "0, -1, 0; -1, 0, 0; 0, 0, -1\n",
            "  0.0, -1.0, 0 ;-1, 0, 0;0, 0,-1e0 ",
        ])
    func parses(text: String) throws {
        let matrix = try MountMatrix(parsing: text)
        #expect(matrix.rows == [Vector3(0, -1, 0), Vector3(-1, 0, 0), Vector3(0, 0, -1)])
        #expect(matrix.text == "0, -1, 0; -1, 0, 0; 0, 0, -1")
    }

    @Test("applies as device = M · raw, rows are output axes")
    func applies() throws {
        let matrix = try MountMatrix(parsing: "0, 1, 0; -1, 0, 0; 0, 0, 2")
        #expect(matrix.apply(Vector3(1, 2, 3)) == Vector3(2, -1, 6))
        #expect(MountMatrix.identity.apply(Vector3(1, 2, 3)) == Vector3(1, 2, 3))
    }

    @Test("keeps non-integer entries (scaled matrices exist)")
    func fractional() throws {
        let matrix = try MountMatrix(parsing: "0.5, 0, 0; 0, 1, 0; 0, 0, 1")
        #expect(matrix.apply(Vector3(4, 1, 1)) == Vector3(2, 1, 1))
        #expect(matrix.text == "0.5, 0, 0; 0, 1, 0; 0, 0, 1")
    }

    @Test(
        "rejects malformed text and quotes it",
        arguments: [
            ("1, 0, 0; 0, 1, 0", MountMatrixError.Reason.rowCount(2)),
            ("1, 0, 0; 0, 1, 0; 0, 0, 1; 1, 1, 1", .rowCount(4)),
            ("", .rowCount(1)),
            ("1, 0; 0, 1, 0; 0, 0, 1", .columnCount(row: 1, found: 2)),
            ("1, 0, 0; 0, 1, 0, 0; 0, 0, 1", .columnCount(row: 2, found: 4)),
            ("1, 0, 0; 0, x, 0; 0, 0, 1", .notANumber(row: 2, entry: "x")),
            ("1, 0, 0; 0, 1, 0; 0, 0, nan", .notANumber(row: 3, entry: "nan")),
            ("1, 0, 0; 0, inf, 0; 0, 0, 1", .notANumber(row: 2, entry: "inf")),
            ("1, 0, 0; 0, , 0; 0, 0, 1", .notANumber(row: 2, entry: "")),
            ("0x1, 0, 0; 0, 1, 0; 0, 0, 1", .notANumber(row: 1, entry: "0x1")),
            ("1, 0, 0; 0, 0, 0; 0, 0, 1", .zeroRow(row: 2)),
            ("0, 0, 0; 0, 1, 0; 0, 0, 1", .zeroRow(row: 1)),
        ])
    func rejects(text: String, reason: MountMatrixError.Reason) {
        #expect(throws: MountMatrixError(text: text, reason: reason)) { try MountMatrix(parsing: text) }
        do {
            _ = try MountMatrix(parsing: text)
        } catch {
            #expect(error.description.contains("\"\(text)\""))
        }
    }

    @Test("rows given as numbers are checked too")
    func checkedRows() {
        #expect(throws: MountMatrixError.self) { try MountMatrix(rows: [[1, 0, 0], [0, 1, 0]]) }
        #expect(throws: MountMatrixError.self) { try MountMatrix(rows: [[1, 0, 0], [0, .nan, 0], [0, 0, 1]]) }
        #expect(throws: MountMatrixError.self) { try MountMatrix(rows: [[1, 0, 0], [0, 0, 0], [0, 0, 1]]) }
    }

    @Test("the 48 signed axis permutations are all distinct and orthonormal")
    func signedPermutations() {
        let all = MountMatrix.signedPermutations
        #expect(all.count == 48)
        #expect(Set(all).count == 48)
        for matrix in all {
            let columnsApplied = [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)].map(matrix.apply)
            for (i, a) in columnsApplied.enumerated() {
                for (j, b) in columnsApplied.enumerated() {
                    #expect(a.dot(b) == (i == j ? 1 : 0))
                }
            }
        }
    }
}

extension MountMatrix {
    /// Mᵀ · v: what a sensor mounted with this (orthonormal) matrix reads when the display frame
    /// sees `v`.
    func sensorReading(for v: Vector3) -> Vector3 {
        (v.x * rows[0]) + (v.y * rows[1]) + (v.z * rows[2])
    }
}
