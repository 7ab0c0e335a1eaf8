import Foundation
import NIOCore
import OrientationCore
import OrientationProtocol
import Testing
@testable import OrientationDaemon

/// The `motion` topic in the hub's state machine: claims, rates, caps and the stream's decimation.
@Suite("Motion topic")
struct MotionTopicTests {
    typealias Hub = HubStateMachineTests

    static func sample(at time: Double) -> MotionSample {
        MotionSample(
            time: time, gravity: Vector3(0, -9.81, 0), userAcceleration: .zero, rotationRate: .zero,
            attitude: .identity)
    }

    /// The listeners each of `count` samples at `rate` Hz went to, counted per listener.
    static func stream(
        _ hub: inout HubStateMachine, rate: Double, count: Int, from start: Double = 10
    ) -> [ListenerID: Int] {
        var received: [ListenerID: Int] = [:]
        for index in 0..<count {
            let time = start + Double(index) / rate
            for (event, listeners) in Hub.publishes(hub.detected(SensorDecision(motion: sample(at: time)), at: time)) {
                #expect(event.topic == .motion)
                for listener in listeners { received[listener, default: 0] += 1 }
            }
        }
        return received
    }

    @Test("subscribing claims the accelerometer and starts the stream; the last to leave ends it")
    func claims() throws {
        var hub = Hub.machine()
        let app = try Hub.connect(&hub), other = try Hub.connect(&hub)
        let first = try Hub.ok(&hub, .subscribe([.motion]), from: app).actions
        #expect(first.contains(.startSampling(.display)) && first.contains(.streamMotion(hertz: 20)))
        let second = try Hub.ok(&hub, .subscribe([.motion], motionRate: 10), from: other).actions
        #expect(!second.contains { if case .streamMotion = $0 { true } else { false } }, "20 Hz still the most")
        #expect(try Hub.ok(&hub, .unsubscribe([.motion]), from: app).actions.contains(.streamMotion(hertz: 10)))
        let last = hub.disconnect(other)
        #expect(last.contains(.streamMotion(hertz: nil)) && last.contains(.scheduleStop(after: 2)))
        #expect(Hub.publishes(hub.detected(SensorDecision(motion: Self.sample(at: 1)), at: 1)).isEmpty)
    }

    @Test("each subscriber gets its own rate out of the sensor's, and the reply says which")
    func rates() throws {
        var hub = Hub.machine()
        _ = hub.sensorAvailable(name: "iio:device0", rate: 100, at: 0)
        let slow = try Hub.connect(&hub), sixty = try Hub.connect(&hub), plain = try Hub.connect(&hub)
        func granted(_ listener: ListenerID, _ rate: Double?) throws -> Double? {
            guard
                case .subscriptions(_, _, _, let granted) = try Hub.ok(
                    &hub, .subscribe([.motion], motionRate: rate), from: listener
                ).reply
            else { return nil }
            return granted
        }
        #expect(try granted(slow, 10) == 10)
        #expect(try granted(sixty, 60) == 60)
        #expect(try granted(plain, nil) == MotionRate.defaultRate)
        // Two seconds of a 100 Hz sensor.
        let received = Self.stream(&hub, rate: 100, count: 200)
        #expect((19...21).contains(received[slow] ?? 0), "\(received)")
        #expect((119...121).contains(received[sixty] ?? 0), "\(received)")
        #expect((39...41).contains(received[plain] ?? 0), "\(received)")
    }

    @Test("the fastest subscriber's rate is what the sensor is asked for, up to the fastest it offers")
    func sensorRate() throws {
        var hub = Hub.machine()
        _ = hub.sensorAvailable(name: "iio:device0", rate: 25, maximumRate: 100, at: 0)
        let root = try Hub.connect(&hub, privileged: true)
        let granted = try Hub.ok(&hub, .subscribe([.motion], motionRate: 80), from: root)
        #expect(granted.actions.contains(.streamMotion(hertz: 80)))
        #expect(hub.motionRate(of: root) == 80, "above the 25 Hz the sensor runs at, within the 100 it offers")
        _ = hub.sensorAvailable(name: "iio:device1", rate: 25, at: 1)
        #expect(hub.motionRate(of: root) == 25, "a sensor that offers nothing else: its own rate")
    }

    @Test("only root and the control group get more than 60 Hz; nobody more than the sensor's rate")
    func caps() throws {
        var hub = Hub.machine()
        _ = hub.sensorAvailable(name: "iio:device0", rate: 100, at: 0)
        let app = try Hub.connect(&hub), root = try Hub.connect(&hub, privileged: true)
        _ = try Hub.ok(&hub, .subscribe([.motion], motionRate: 100), from: app)
        _ = try Hub.ok(&hub, .subscribe([.motion], motionRate: 100), from: root)
        #expect(hub.motionRate(of: app) == 60)
        #expect(hub.motionRate(of: root) == 100)
        let received = Self.stream(&hub, rate: 100, count: 100)
        #expect((59...61).contains(received[app] ?? 0) && received[root] == 100, "\(received)")
        _ = hub.sensorAvailable(name: "iio:device1", rate: 25, at: 2)
        #expect(hub.motionRate(of: root) == 25)
    }

    @Test("a rate out of range is a bad request that names it")
    func badRate() throws {
        for rate in [0.5, 101, -3] {
            let line = #"{"id":1,"op":"subscribe","topics":["motion"],"rate":\#(rate)}"#
            let request = try Request.parse(ByteBuffer(string: line)).get()
            guard case .failure(let error) = request.decode() else {
                Issue.record("rate \(rate) accepted")
                continue
            }
            #expect(
                error.code == .badRequest && error.message.contains("rate: must be from 1 to 100 Hz"),
                "\(error.message)")
        }
        let fine = try Request.parse(ByteBuffer(string: #"{"id":1,"op":"subscribe","topics":["motion"],"rate":50}"#))
            .get().decode()
        #expect(try fine.get() == .subscribe([.motion], motionRate: 50))
    }

    @Test("a motion event carries the sample's fields, and the state, without growing seq")
    func eventFields() throws {
        var hub = Hub.machine()
        let app = try Hub.connect(&hub)
        _ = try Hub.ok(&hub, .subscribe([.motion]), from: app)
        let seq = hub.seq
        let published = Hub.publishes(hub.detected(SensorDecision(motion: Self.sample(at: 3)), at: 3))
        let event = try #require(published.first?.event)
        #expect(event.seq == seq && hub.seq == seq)
        let json = ServerMessage.event(event)
        #expect(json["gravity"] == .array([.number(0), .number(-9.81), .number(0)]))
        #expect(json["attitude"] == .array([.number(1), .number(0), .number(0), .number(0)]))
        #expect(json["rotationRate"] == .array([.number(0), .number(0), .number(0)]))
        #expect(json["state"] != nil)
        let withoutGyroscope = MotionSample(time: 4, gravity: Vector3(0, -9.81, 0), userAcceleration: .zero)
        let plain = ServerMessage.event(
            Event(seq: seq, time: 4, state: hub.state, payload: .motion(withoutGyroscope)))
        #expect(plain["rotationRate"] == .null && plain["attitude"] == .null)
    }

    @Test(
        """
        each subscriber's attitude counts from its own first event: one subscribed later starts at identity; a \
        new reference in the stream (a new sensor) starts every subscriber's afresh
        """
    )
    func attitudePerSubscriber() throws {
        var hub = Hub.machine()
        _ = hub.sensorAvailable(name: "iio:device0", rate: 20, at: 0)
        let first = try Hub.connect(&hub), later = try Hub.connect(&hub)
        _ = try Hub.ok(&hub, .subscribe([.motion], motionRate: 20), from: first)
        /// The attitude each listener got for a sample whose stream attitude is a turn of `angle` about z.
        func send(_ angle: Double, at time: Double, starts: Bool = false) -> [ListenerID: Quaternion] {
            var sample = Self.sample(at: time)
            sample.attitude = Quaternion(axis: Vector3(0, 0, 1), angle: angle)
            sample.startsAttitude = starts
            var got: [ListenerID: Quaternion] = [:]
            for (event, listeners) in Hub.publishes(hub.detected(SensorDecision(motion: sample), at: time)) {
                guard case .motion(let motion) = event.payload, let attitude = motion.attitude else { continue }
                for listener in listeners { got[listener] = attitude }
            }
            return got
        }
        func angle(_ q: Quaternion?) -> Double { q.map { 2 * atan2($0.z, $0.w) } ?? .nan }
        #expect(abs(angle(send(0, at: 10, starts: true)[first])) < 1e-9)
        #expect(abs(angle(send(1, at: 10.05)[first]) - 1) < 1e-9)
        _ = try Hub.ok(&hub, .subscribe([.motion], motionRate: 20), from: later)
        let both = send(1.5, at: 10.1)
        #expect(abs(angle(both[first]) - 1.5) < 1e-9)
        #expect(abs(angle(both[later])) < 1e-9, "its own reference: identity at its first event")
        let next = send(2, at: 10.15)
        #expect(abs(angle(next[later]) - 0.5) < 1e-9)
        let afresh = send(0.3, at: 10.2, starts: true)
        #expect(abs(angle(afresh[first])) < 1e-9 && abs(angle(afresh[later])) < 1e-9)
        // Subscribed again, counted again from its next event.
        _ = try Hub.ok(&hub, .unsubscribe([.motion]), from: later)
        _ = try Hub.ok(&hub, .subscribe([.motion], motionRate: 20), from: later)
        let again = send(1.3, at: 10.25)
        #expect(abs(angle(again[first]) - 1) < 1e-9)
        #expect(abs(angle(again[later])) < 1e-9, "a new subscription, a new reference")
    }
}
