import OrientationCore
import SensorCore

/// The checks every raw accelerometer reading passes on its way to a sample, whatever interface it
/// came through (IIO polled or buffered, evdev): stuck readings, no gravity, then (raw + offset) ×
/// scale. Faults are reported once per episode through `emit`.
struct RawAccelerometerReadings {
    let device: String
    private var stuck = StuckDetector()

    init(device: String) {
        self.device = device
    }

    /// Checks and converts one reading taken at `time`; `scale` nil means the scale is unusable and
    /// the reading is dropped (after the stuck check, which needs no scale).
    mutating func deliver(raw: Vector3, at time: Double, scale: [Double]?, offset: [Double], faults: inout FaultTracker,
                          emit: (SensorEvent) -> Void) {
        for change in stuck.observe(raw, at: time) {
            switch change {
            case .becameStuck(let detail):
                if faults.fault(.stuck) { emit(.fault(SensorFault(kind: .stuck, device: device, detail: detail))) }
            case .recovered:
                if faults.success(.stuck) { emit(.recovered(.stuck, device: device)) }
            case .axisStuck(let detail):
                if faults.fault(.axisStuck) { emit(.fault(SensorFault(kind: .axisStuck, device: device, detail: detail))) }
            case .axisRecovered:
                if faults.success(.axisStuck) { emit(.recovered(.axisStuck, device: device)) }
            }
        }
        guard let scale, !stuck.isAxisStuck else { return }
        // All zeros or NaN: no direction to read an orientation from (a dead or unpowered part).
        if raw == .zero || !raw.isFinite {
            if faults.fault(.noGravity) {
                emit(.fault(SensorFault(kind: .noGravity, device: device, detail: "reads \(raw): no gravity to read an orientation from")))
            }
            return
        }
        if faults.success(.noGravity) { emit(.recovered(.noGravity, device: device)) }
        let reading = Vector3((raw.x + offset[0]) * scale[0], (raw.y + offset[1]) * scale[1], (raw.z + offset[2]) * scale[2])
        emit(.sample(SensorSample(time: time, reading: reading)))
    }
}
