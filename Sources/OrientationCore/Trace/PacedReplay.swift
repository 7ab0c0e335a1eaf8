/// A recorded trace read as the daemon reads a polled sensor: the sensor holds its latest sample, and
/// the daemon reads it at the pace ``SamplingPace`` sets (the sampling rate while the device moves,
/// faster with a working gyroscope, the held or the lying rate at rest). A read takes whatever
/// sample the sensor holds at that moment, so a decision after a slow read sees what the daemon
/// sees, not every sample of the trace.
///
/// Why it exists: a pace decides *which* samples the detector gets, and the shortcuts that decide from
/// few samples after a slow read (detection-log.md §17) can only be judged on those samples. `orientd
/// replay --pace`, the corpus tests and `make bench` all read traces through this one type, so a
/// decision seen in one of them is reproduced by the others (the same seed gives the same reads).
///
/// A pure state machine: samples come in with their times (``offer(time:reading:)``), in order, and
/// each call returns the reads that fell due before that sample, with what each decided.
public struct PacedReplay: Sendable {
    /// Where the reads fall: the first `phase` seconds after the trace's first sample, each next one
    /// an interval of the pace in force later plus its `lateness` (a woken thread runs a little late).
    public struct Timing: Sendable, Hashable {
        /// Seconds from the trace's first sample to the first read.
        public let phase: Double
        /// Each read comes up to this many seconds late, drawn uniformly (0: on time).
        public private(set) var maximumLateness: Double
        /// Draws the lateness of each read (nil when `maximumLateness` is 0).
        private var seed: UInt64?

        /// Reads on time, the first `phase` seconds after the first sample.
        public init(phase: Double = 0) {
            self.phase = phase
            maximumLateness = 0
            seed = nil
        }

        /// Realisation `seed` of the reads for a sensor read at `fastRate`: the phase drawn in
        /// [0, 1 / `fastRate`), each read up to 2 ms late. The corpus tests use seeds 0–39; `orientd
        /// replay --seed N` draws the same reads.
        public static func random(seed: UInt64, fastRate: Double) -> Timing {
            var random = SimulationRandom(seed: seed &* 7919 &+ 1)
            var timing = Timing(phase: random.uniform(0, 1 / max(fastRate, 1e-3)))
            timing.maximumLateness = 0.002
            timing.seed = random.next()
            return timing
        }

        /// The generator of the reads' lateness, nil when they come on time.
        var lateness: SimulationRandom? { seed.map(SimulationRandom.init) }
    }

    /// One read of the sensor and what it decided.
    public struct Read: Sendable, Hashable {
        /// When the read was taken (the trace's clock).
        public var time: Double
        /// The orientation change it caused, if any.
        public var change: OrientationChange?
        /// The pace it put in force, when it changed the pace.
        public var pace: SamplingPace.Pace?
    }

    public private(set) var pipeline: OrientationPipeline
    public private(set) var pace: SamplingPace
    /// Since when the gyroscope has been on: as the daemon runs it, only while the pace is fast (the
    /// device moves), its readings used only ``SamplingPace/Settings/gyroscopeStartup`` after it
    /// was switched on; nil while off.
    private var gyroscopeOnSince: Double?
    /// Reads taken so far.
    public private(set) var reads = 0
    private let timing: Timing
    private var random: SimulationRandom?
    private var nextRead: Double?
    /// The sample the sensor holds: the latest offered (a gyroscope's rate with it, if any).
    private var held: (reading: Vector3, rotationRate: Vector3?)?

    public init(pipeline: OrientationPipeline, pace: SamplingPace.Settings, timing: Timing = Timing()) {
        self.pipeline = pipeline
        self.pace = SamplingPace(settings: pace)
        self.timing = timing
        random = timing.lateness
    }

    /// A sample reaches the sensor at `time` (in the sensor's frame, as the trace holds it). The reads
    /// due before it take the sample held until then; returns them.
    public mutating func offer(time: Double, reading: Vector3, rotationRate: Vector3? = nil) -> [Read] {
        var due: [Read] = []
        if held == nil {
            nextRead = time + timing.phase
        } else {
            readDue(before: time, into: &due)
        }
        held = (reading, rotationRate)
        return due
    }

    /// The trace ends at `time` (its last sample's): the reads due until then, that one included.
    public mutating func finish(at time: Double) -> [Read] {
        var due: [Read] = []
        readDue(before: time.nextUp, into: &due)
        return due
    }

    private mutating func readDue(before time: Double, into due: inout [Read]) {
        while let read = nextRead, read < time, let (reading, rotationRate) = held {
            reads += 1
            if pace.pace.isRest {
                // As the daemon's detection stage does: the reading read at rest stood until just
                // before this one, so this one gets one reading's weight in the low-pass.
                pipeline.hold(until: read - 1 / pace.settings.fastRate)
            }
            if pace.pace.isRest {
                gyroscopeOnSince = nil
            } else if gyroscopeOnSince == nil {
                gyroscopeOnSince = read
            }
            let gyroscopeReady = gyroscopeOnSince.map { read - $0 >= pace.settings.gyroscopeStartup } ?? false
            let change = pipeline.process(
                time: read, reading: reading, rotationRate: gyroscopeReady ? rotationRate : nil)
            let paceChange = pace.observe(
                pipeline.displayReading(reading), at: read, detectorSettled: pipeline.detector.isSettled)
            // As the daemon does: read faster while a working gyroscope runs.
            pace.gyroscopeWorking = rotationRate != nil && pipeline.detector.gyroscopeVerdict == .working
            due.append(Read(time: read, change: change, pace: paceChange))
            var late = 0.0
            if var generator = random {
                late = generator.uniform(0, timing.maximumLateness)
                random = generator
            }
            nextRead = read + pace.interval + late
        }
    }
}
