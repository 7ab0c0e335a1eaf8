/// The face states' waits (detection.md, rule 7): a device laid down is taken after a longer rest
/// than an upright turn, in which the landing's jolt is excused, and settles longer. The face bands
/// themselves (`face-enter-tilt`, `face-exit-tilt`) are ``OrientationBands``'.
struct FaceRule: Sendable {
    let settings: DetectorConfiguration.Face
    let restWindow: Double

    init(configuration: DetectorConfiguration) {
        settings = configuration.face
        restWindow = configuration.rest.window
    }

    /// The settle wait for `candidate`: `face-dwell` for a face state, else `settle-time`.
    func settleWait(for candidate: DeviceOrientation, otherwise wait: Double) -> Double {
        candidate.isFlat ? settings.dwell : wait
    }

    /// A face state at rest needs `face-rest-window` of rest (a reclining reader's slow sway can look
    /// like a rest near 75° for the shorter window), asking for the same face state; with a measured
    /// turn, the device not turning (faster than `gyro-still-rate`): a person lying down, a phone at
    /// the waist, sways through 75° at 10–20 °/s, slowly enough for the accelerometer's readings to
    /// agree over the window, where a device laid on a surface stops turning as it lands.
    func confirmsRest(
        _ candidate: DeviceOrientation, window: RestWindow, period: Double, bands: OrientationBands,
        from current: DeviceOrientation, estimate: GravityEstimate
    ) -> Bool {
        if estimate.turn?.isTurning == true { return false }
        guard settings.restWindow > restWindow else { return true }
        guard let longer = window.rest(over: settings.restWindow, period: period, joltTime: settings.joltTime) else {
            return false
        }
        return bands.classify(longer.mean, from: current) == candidate
    }
}
