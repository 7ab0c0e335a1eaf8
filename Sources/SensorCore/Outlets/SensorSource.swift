/// Every sensor source of the daemon has this one shape: the accelerometers (``AccelerometerSource``),
/// light, proximity and compass (``KindSensorSource``), the hinge angle (``HingeAngleSource``), the
/// lid switch (``LidSwitchSource``) and a gyroscope of its own (``GyroscopeSource``).
///
/// A source holds nothing (no udev monitor, no thread, no descriptor) until ``start()``; it then
/// watches for its sensor until ``shutdown()``, but reads it only between ``startSampling()`` and
/// ``stopSampling()``, so a sensor nobody needs costs nothing. What it finds and reads goes to one
/// consumer through its ``outlet``.
public protocol SensorSource<Event>: AnyObject, Sendable {
    associatedtype Event: Sendable
    /// Every event of the source's life, for one consumer (``events`` or ``deliver(to:)``);
    /// finished by ``shutdown()``.
    var outlet: EventOutlet<Event> { get }
    /// Begins watching for the sensor; idempotent. A source that throws holds nothing.
    func start() throws(SensorStartError)
    /// Starts reading (idempotent).
    func startSampling()
    /// Stops reading (idempotent); the sensor stays known.
    func stopSampling()
    /// Stops reading as ``stopSampling()`` does and calls `stopped` (on any thread) once the device
    /// is closed (buffers too): the system may sleep then (logind's delay inhibitor waits for it).
    func stopSampling(then stopped: @escaping @Sendable () -> Void)
    /// Stops everything, releases the device and finishes the outlet.
    func shutdown()
}

extension SensorSource {
    /// For a source that closes nothing it keeps open (the mock sources, a replay): at once.
    public func stopSampling(then stopped: @escaping @Sendable () -> Void) {
        stopSampling()
        stopped()
    }

    /// Every event of the source's life as a stream; finishes after ``shutdown()``.
    public var events: AsyncStream<Event> { outlet.events }

    /// Every event of the source's life, passed to `receive` on the source's own threads, one at a
    /// time and in order; none after ``shutdown()`` returns.
    public func deliver(to receive: @escaping EventOutlet<Event>.Receiver) { outlet.deliver(to: receive) }
}
