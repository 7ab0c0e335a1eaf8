#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A three-component vector in m/s², in whatever frame its producer documents.
///
/// Every vector that crosses orientd's boundary (trace files, logs, protocol fields) is in the
/// gravity-pointing display frame of detection.md §1: x towards the right edge of the screen, y
/// towards the top edge, z out of the screen; upright portrait reads (0, −9.81, 0).
public struct Vector3: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var z: Double

    public init(_ x: Double, _ y: Double, _ z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    public static let zero = Vector3(0, 0, 0)

    @inlinable public var magnitudeSquared: Double { x * x + y * y + z * z }
    @inlinable public var magnitude: Double { magnitudeSquared.squareRoot() }
    @inlinable public var isFinite: Bool { x.isFinite && y.isFinite && z.isFinite }

    @inlinable public func dot(_ other: Vector3) -> Double { x * other.x + y * other.y + z * other.z }
    /// The cross product, right-handed: `x.cross(y)` is `z`.
    @inlinable public func cross(_ other: Vector3) -> Vector3 {
        Vector3(y * other.z - z * other.y, z * other.x - x * other.z, x * other.y - y * other.x)
    }

    @inlinable public static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x + b.x, a.y + b.y, a.z + b.z) }
    @inlinable public static func - (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x - b.x, a.y - b.y, a.z - b.z) }
    @inlinable public static func * (s: Double, v: Vector3) -> Vector3 { Vector3(s * v.x, s * v.y, s * v.z) }
    @inlinable public static prefix func - (v: Vector3) -> Vector3 { Vector3(-v.x, -v.y, -v.z) }

    /// The angle between this vector and `other`, in degrees; both must have some length (the cosine
    /// is clamped only against rounding).
    public func angle(to other: Vector3) -> Double {
        let cosine = dot(other) / (magnitude * other.magnitude)
        return acos(min(max(cosine, -1), 1)) * 180 / .pi
    }
}

extension Vector3: CustomStringConvertible {
    public var description: String { "(\(x), \(y), \(z))" }
}
