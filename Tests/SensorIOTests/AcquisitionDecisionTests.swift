import OrientationCore
import SensorCore
import Testing

@testable import SensorIO

/// The sources' pure decisions: when a poll loop reads, how many samples a buffer hands over at
/// rest, which trigger a device's buffer uses, what a buffered value becomes.
@Suite("Acquisition decisions")
struct AcquisitionDecisionTests {
    func value(_ value: Double, scale: Double, _ conversion: any BufferConversion) -> SensorReading? {
        try? BufferedChannelReader.reading(value, scale: scale, offset: 0, conversion: conversion).get()
    }

    @Test("a poll loop on time reads every period; at rest every rest interval, never faster than the period")
    func pollScheduleCadence() {
        var schedule = PollSchedule(period: 0.04, pace: nil, start: 0)
        schedule.reading(at: 0)
        #expect(abs(schedule.due - 0.04) < 1e-12)
        schedule.reading(at: 0.04)
        #expect(abs(schedule.due - 0.08) < 1e-12)
        #expect(!schedule.resting)

        let pace = ReadPace()
        pace.set(0.5)
        var resting = PollSchedule(period: 0.04, pace: pace, start: 0)
        #expect(resting.resting)
        resting.reading(at: 0)
        #expect(abs(resting.due - 0.5) < 1e-12)
        pace.set(0.01)  // a rest rate faster than the sampling rate is the sampling rate
        #expect(resting.interval == 0.04)
    }

    @Test("a loop that fell seconds behind reads a few times at once, not the 250 it missed, then keeps its cadence")
    func pollScheduleNoBurst() {
        var schedule = PollSchedule(period: 0.04, pace: nil, start: 0)
        schedule.reading(at: 0)
        var now = 10.0  // the thread was held up for ten seconds
        var reads = 0
        while now < 10.04 {
            if now >= schedule.due {
                schedule.reading(at: now)
                reads += 1
            } else {
                now = schedule.due
            }
        }
        // The reading that was due, one that keeps the phase, and the one due now: three at most.
        #expect(reads <= 3, "\(reads) reads within one period after falling behind")
        schedule.reading(at: now)
        #expect(abs(schedule.due - (now + 0.04)) < 1e-9, "the cadence again")
    }

    @Test("a shorter pace brings the next reading forward at once")
    func pollSchedulePaceShortened() {
        let pace = ReadPace()
        pace.set(1)
        var schedule = PollSchedule(period: 0.04, pace: pace, start: 0)
        schedule.reading(at: 0)
        #expect(schedule.due == 1)
        pace.set(nil)
        schedule.paceShortened()
        #expect(abs(schedule.due - 0.04) < 1e-12)
        schedule.readNow(at: 0.01)
        #expect(schedule.due == 0.01)
    }

    @Test("a buffer hands over one sample while moving, the rest interval's worth at rest, at most a second's")
    func batchSizes() {
        #expect(IIOAcquisition.batchSize(restInterval: nil, samplePeriod: 0.04) == 1)
        #expect(IIOAcquisition.batchSize(restInterval: 0.5, samplePeriod: 0.04) == 12)
        #expect(IIOAcquisition.batchSize(restInterval: 5, samplePeriod: 0.04) == 25)
        #expect(IIOAcquisition.batchSize(restInterval: 0.01, samplePeriod: 0.04) == 1)
        #expect(IIOAcquisition.batchSize(restInterval: 0.5, samplePeriod: 0) == 1)
    }

    @Test("a device's own trigger: NAME-devN first, then NAME-trigger, else none")
    func triggers() {
        #expect(
            AccelerometerDiscovery.triggerName(for: "als", number: 1, among: ["als-dev1", "als-trigger"]) == "als-dev1")
        #expect(
            AccelerometerDiscovery.triggerName(for: "als", number: 1, among: ["als-trigger", "gyro-dev1"])
                == "als-trigger")
        #expect(AccelerometerDiscovery.triggerName(for: "als", number: 2, among: ["als-dev1"]) == nil)
        #expect(AccelerometerDiscovery.triggerName(for: "als", number: nil, among: ["als-dev1"]) == nil)
    }

    @Test("a buffered value: (value + offset) × scale; light never negative, a heading within [0, 360)")
    func bufferedValues() {
        #expect(value(1234, scale: 0.1, IIOBufferLightDriver.Conversion()) == .light(level: 123.4, unit: .lux))
        if case .failure(let problem) = BufferedChannelReader.reading(
            -5, scale: 1, offset: 0, conversion: IIOBufferLightDriver.Conversion())
        {
            #expect(problem.description.contains("never negative"))
        } else {
            Issue.record("a negative light level was accepted")
        }
        #expect(value(-90_000, scale: 0.001, HIDCompassDriver.Conversion()) == .heading(270))
        #expect(
            value(725_000, scale: 0.001, HIDCompassDriver.Conversion()).map {
                if case .heading(let d) = $0 { abs(d - 5) < 1e-9 } else { false }
            } == true)
        if case .success = BufferedChannelReader.reading(
            .nan, scale: 1, offset: 0, conversion: HIDCompassDriver.Conversion())
        {
            Issue.record("NaN became a heading")
        }
    }
}
