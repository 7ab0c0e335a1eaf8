import OrientationCore

/// The checks every raw accelerometer reading passes on its way to a sample, whatever interface it
/// came through (IIO polled or buffered, evdev): frozen readings, no gravity, then (raw + offset) ×
/// scale. Faults are reported once per episode through `emit`, and each is declared only on evidence
/// a working sensor cannot produce (docs/sensors.md, "Faults only on evidence"), so that on a working
/// sensor every reading passes unchanged: the fault-policy soak (`FaultPolicySoakTests`) holds that.
/// Pure apart from `emit`.
public struct RawAccelerometerReadings: Sendable {
    public let device: String
    private var frozen: FrozenReadingDetector
    /// Since when every reading has been exactly (0, 0, 0), while that lasts.
    private var zeroSince: Double?

    /// How long readings may stay exactly zero before the sensor counts as reading no gravity: a
    /// falling device reads zero (a 6- or 8-bit part exactly), but a one-second fall is 4.9 m.
    public static let zeroTolerance = 1.0

    public init(device: String, frozen: FrozenReadingDetector.Configuration = .init()) {
        self.device = device
        self.frozen = FrozenReadingDetector(configuration: frozen)
    }

    /// Checks and converts one reading taken at `time`; `scale` nil means the scale is unusable and
    /// the reading is dropped (the frozen-reading evidence, which needs consistent units, waits too).
    ///
    /// `rotationRate`: the gyroscope's reading taken with it (rad/s, the same axes), if any; it rides
    /// along with the sample.
    public mutating func deliver(
        raw: Vector3, at time: Double, scale: [Double]?, offset: [Double], rotationRate: Vector3? = nil,
        faults: inout FaultTracker, emit: (SensorEvent) -> Void
    ) {
        guard let scale else { return }
        let reading = Vector3(
            (raw.x + offset[0]) * scale[0], (raw.y + offset[1]) * scale[1], (raw.z + offset[2]) * scale[2])
        for change in frozen.observe(raw: raw, reading: reading, at: time) {
            switch change {
            case .frozen(let kind, let detail):
                if faults.fault(kind) { emit(.fault(SensorFault(kind: kind, device: device, detail: detail))) }
            case .thawed(let kind):
                if faults.success(kind) { emit(.recovered(kind, device: device)) }
            }
        }
        if frozen.isAxisFrozen || frozen.isReadingFrozen { return }
        // NaN has no direction at all; exact zeros only when they last longer than any fall.
        if !reading.isFinite {
            noGravity("reads \(raw): no gravity to read an orientation from", faults: &faults, emit: emit)
            return
        }
        if raw == .zero {
            let since = zeroSince ?? time
            zeroSince = since
            if time - since >= Self.zeroTolerance {
                noGravity(
                    """
                    reads \(raw) for \(Self.zeroTolerance) s, longer than any fall: no gravity to read an \
                    orientation from
                    """,
                    faults: &faults, emit: emit)
                return
            }
        } else {
            zeroSince = nil
            if faults.success(.noGravity) { emit(.recovered(.noGravity, device: device)) }
        }
        emit(.sample(SensorSample(time: time, reading: reading, rotationRate: rotationRate)))
    }

    private func noGravity(_ detail: String, faults: inout FaultTracker, emit: (SensorEvent) -> Void) {
        if faults.fault(.noGravity) { emit(.fault(SensorFault(kind: .noGravity, device: device, detail: detail))) }
    }
}
