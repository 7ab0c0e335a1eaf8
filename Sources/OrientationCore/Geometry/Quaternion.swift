#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A rotation as a unit quaternion `w + xi + yj + zk` (Hamilton's convention, as CoreMotion's
/// `CMQuaternion` and Android's rotation vectors): it turns a vector of the body's frame into the
/// reference frame by `q · v · q*`.
public struct Quaternion: Sendable, Hashable {
    public var w: Double
    public var x: Double
    public var y: Double
    public var z: Double

    public init(w: Double, x: Double, y: Double, z: Double) {
        self.w = w
        self.x = x
        self.y = y
        self.z = z
    }

    public static let identity = Quaternion(w: 1, x: 0, y: 0, z: 0)

    /// The rotation by `angle` radians about `axis` (counter-clockwise seen from its positive end);
    /// the identity for a zero axis.
    public init(axis: Vector3, angle: Double) {
        let length = axis.magnitude
        guard length > 0 else {
            self = .identity
            return
        }
        let sine = sin(angle / 2) / length
        self.init(w: cos(angle / 2), x: axis.x * sine, y: axis.y * sine, z: axis.z * sine)
    }

    /// The rotation `rotationVector.magnitude` radians about `rotationVector` (a rate times a step).
    public init(rotationVector: Vector3) {
        self.init(axis: rotationVector, angle: rotationVector.magnitude)
    }

    public var conjugate: Quaternion { Quaternion(w: w, x: -x, y: -y, z: -z) }

    /// The same rotation with length 1 (products drift from it by rounding).
    public var normalized: Quaternion {
        let length = (w * w + x * x + y * y + z * z).squareRoot()
        guard length > 0 else { return .identity }
        return Quaternion(w: w / length, x: x / length, y: y / length, z: z / length)
    }

    /// `a · b`: first `b`, then `a`.
    public static func * (a: Quaternion, b: Quaternion) -> Quaternion {
        Quaternion(
            w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w)
    }

    /// `q · v · q*`: `v` turned by this rotation.
    public func rotate(_ v: Vector3) -> Vector3 {
        let product = self * Quaternion(w: 0, x: v.x, y: v.y, z: v.z) * conjugate
        return Vector3(product.x, product.y, product.z)
    }
}
