#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The first orientation, from `unknown` (detection.md, rule 5): the nearest one
/// (``OrientationBands/startupCandidate(_:)``), as soon as two readings prove the device still.
///
/// Two samples over `startup-rest-window` suffice if they agree within `startup-spread` and each
/// lies within `startup-magnitude-tolerance` of gravity (else the rest test decides). Agreement alone
/// proves nothing (a flick's far pose, a step's bounce hold still for an instant); agreement that
/// close to gravity's length leaves a moving device no room: a linear acceleration strong enough to
/// move the reading far changes its length or its direction from one sample to the next. The two
/// must be distinct readings: a polled sensor read twice between its samples returns one reading
/// twice. A measured turn says what two agreeing readings cannot: a device raised at 65°/s moves
/// 1.3° between two readings 20 ms apart, inside the spread, and the start-up would show the pose
/// it is leaving; nothing is taken while the gyroscope shows a turn.
struct StartupRule: Sendable {
    let settings: DetectorConfiguration.Startup
    private let cosSpread: Double

    init(configuration: DetectorConfiguration) {
        settings = configuration.startup
        cosSpread = cos(configuration.startup.spread * .pi / 180)
    }

    func candidate(
        rest: RestWindow.Rest?, window: RestWindow, period: Double, estimate: GravityEstimate, bands: OrientationBands
    ) -> DeviceOrientation? {
        if estimate.turn?.isTurning == true { return nil }
        let still =
            window.rest(
                over: settings.window, period: period, minimumSamples: 2, cosSpread: cosSpread,
                magnitudeTolerance: settings.magnitudeTolerance, strictSpan: true)?.mean
            ?? (rest?.excusedJolt == false ? rest?.mean : nil)
        return still.flatMap(bands.startupCandidate)
    }
}
