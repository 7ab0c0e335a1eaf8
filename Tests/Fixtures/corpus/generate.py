#!/usr/bin/env python3
"""Generates the corpus's real-life pose traces (the scenarios marked "generate.py" in README.md).

    python3 generate.py                  # writes public/NAME.{csv,labels.json,meta.json}
    python3 generate.py --out DIR --seed 7   # another realisation of the same scenarios (held-out style)
    python3 generate.py --list           # the scenarios and what they hold
    python3 generate.py --gyro           # every scenario with a gyroscope: public-gyro/NAME.*
    python3 generate.py --check          # the gyroscope's self-check (writes nothing)

The physics is the corpus's: attitude keyframes joined by minimum-jerk turns; the sensor's position
follows the body (walking bounce, surge and sway) and the device's rotation about a pivot (the wrist,
or the hip for a pocket), and its acceleration is differentiated from that position; hand tremor
(8-12 Hz) and slow sway; white noise, a constant bias per axis, quantisation, clipping, timestamp
jitter and a sample-clock error. Deterministic for a seed: Python alone (its `random`, whose
Mersenne Twister stream Python keeps stable), so the files do not depend on a numpy version.

Pose: `angle` is the direction of "up" in the screen plane (0 portrait, 90 landscapeLeft, 180
portraitUpsideDown, -90 landscapeRight), `tilt` the screen's lean back from upright (0 upright, +90
face up, -90 face down). Readings point the way gravity pulls (README.md, "Axis convention").

Labels follow the corpus's rule: a hold is settled and expects the nearest orientation (face states
at |tilt| >= 75 deg); within 5 deg of a diagonal it is ambiguous: both neighbours are acceptable and
the expected one is the orientation it came from. Walking while the pose holds is settled too.
A motion is unsettled: it expects the next hold's orientation and accepts the previous one, the next
one and every orientation the path passes near. A flick goes out and comes back to the pose it left,
so it expects the orientation it started in. A shake or a fall accepts `unknown` too.

Carries: `hand` (tremor, sway, the sensor 7 cm above the wrist), `walk` (the hand while walking),
`pocket` (a front trouser pocket while walking), `table` (lying still, turned about the sensor) and
`stand` (in a stand or leaning on something: still, but picked up and turned about the wrist).

Gyroscope (--gyro): rows `t,x,y,z,gx,gy,gz`, the angular velocity in rad/s about the same axes as the
accelerometer's, right-handed (counter-clockwise positive seen from the axis's positive end): a vector
fixed in the device turns in the world as dv/dt = w x v. It is the skew part of R^T dR/dt, R the
attitude the accelerometer's columns come from (tremor, sway, the walking bob and the pocket's swing
included), in the host's time. It has a bias, noise, 16-bit quantisation, clipping at +-2000 deg/s and
a sample clock of its own; each row holds the gyroscope's latest sample at the row's time. Its random
numbers come from a stream of their own, so the accelerometer's columns are those written without it.
The scenarios marked `--gyro only` (the corpus's 13 older traces, re-created from their README rows
and public labels) are written only with --gyro; they use the carries `mount` (a car's vent mount),
`fall` and `cushion` besides, blend one carry into the next instead of switching at once, and turn
about the pivot on a table too.
"""
import argparse
import bisect
import json
import math
import os
import sys

import random

G = 9.81
UPRIGHT = ["portrait", "landscapeLeft", "portraitUpsideDown", "landscapeRight"]


def nearest(angle, tilt):
    if tilt >= 75:
        return "faceUp"
    if tilt <= -75:
        return "faceDown"
    return UPRIGHT[min(3, int(((float(angle) + 45) % 360) // 90))]


def from_diagonal(angle):
    """Degrees between the screen-plane direction and the nearest diagonal."""
    return abs((angle % 90) - 45)


def attitude(angle, tilt):
    """The device's x, y and z axes in the world frame: X right, Y away from the viewer, Z up."""
    a, t = math.radians(angle), math.radians(tilt)
    across = (1.0, 0.0, 0.0)
    up_in_screen = (0.0, math.sin(t), math.cos(t))
    normal = (0.0, -math.cos(t), math.sin(t))
    x = add(scale(math.cos(a), across), scale(math.sin(a), up_in_screen))
    y = add(scale(-math.sin(a), across), scale(math.cos(a), up_in_screen))
    return (x, y, normal)


def add(u, v):
    return tuple(a + b for a, b in zip(u, v))


def scale(k, u):
    return tuple(k * a for a in u)


def to_world(axes, v):
    """A device-frame vector in the world frame (axes: the device's axes in the world)."""
    return add(add(scale(v[0], axes[0]), scale(v[1], axes[1])), scale(v[2], axes[2]))


def to_device(axes, w):
    """A world-frame vector in the device frame."""
    return tuple(sum(a * b for a, b in zip(axis, w)) for axis in axes)


def minimum_jerk(s):
    return s**3 * (10 - 15 * s + 6 * s * s)


class Scenario:
    """A plan of holds and turns, each with the way the device is carried meanwhile."""

    def __init__(self, name, description, rate, steps, carry="hand", bits=12, noise=200.0, skip=0.0,
                 gyro_only=False, lever=(0.02, -0.07, 0.0), mount=None, vehicle=None, taps=()):
        """`steps`: (kind, angle, tilt, seconds[, carry][, options]); kind `hold`, `turn` (to the pose) or
        `flick` (out to the pose and straight back). `skip`: the trace starts this many seconds into the
        plan (a start-up in the middle of a motion).

        `gyro_only`: written only with --gyro, by `pose_blended`, which adds the kinds `shake` (shaken
        where it is) and `fall` (slips, falls freely for options["fall"] seconds tumbling to the pose,
        lands on a cushion), options["base"] (the pivot's place in the world, m, from that step on),
        `lever` (the sensor's offset from the pivot, device axes, m), `mount` (the mount matrix M:
        the data are in the sensor frame, device = M . raw), `vehicle` (a car: speed, m/s, and events
        ("brake", start, seconds, peak m/s^2) and ("bend", start, seconds, peak yaw rad/s)) and `taps`
        (plan times of knocks on the table)."""
        self.name, self.description, self.rate, self.bits, self.noise = name, description, rate, bits, noise
        self.skip = skip
        self.gyro_only, self.lever, self.mount, self.vehicle, self.taps = gyro_only, lever, mount, vehicle, taps
        self.segments = []
        t = 0.0
        angle, tilt = steps[0][1], steps[0][2]
        base = (0.0, 0.0, 0.0)
        for kind, to_angle, to_tilt, seconds, *rest in steps:
            mode = next((r for r in rest if isinstance(r, str)), carry)
            options = next((r for r in rest if isinstance(r, dict)), {})
            base = options.get("base", base)
            if not gyro_only and (kind not in ("hold", "turn", "flick") or options):
                raise ValueError(f"{name}: {kind} and step options need gyro_only (pose_blended)")
            if gyro_only and mode not in BLENDED_CARRIES:
                raise ValueError(f"{name}: pose_blended has no carry {mode}")
            moves = kind in ("turn", "flick", "fall")
            delta = ((to_angle - angle + 180) % 360) - 180 if moves else 0.0
            self.segments.append(dict(kind=kind, start=t, end=t + seconds, angle=angle, tilt=tilt,
                                      to_angle=angle + delta if moves else to_angle,
                                      to_tilt=to_tilt, mode=mode, base=base, fall=options.get("fall", 0.3)))
            t += seconds
            if kind in ("turn", "fall"):
                angle, tilt = angle + delta, to_tilt
            elif kind in ("hold", "shake"):
                angle, tilt = to_angle, to_tilt
        self.duration = t


class Body:
    """Continuous functions of time for one realisation: tremor, sway, walking."""

    def __init__(self, rng):
        self.tremor = [(rng.uniform(8, 12), rng.uniform(0, 2 * math.pi), rng.uniform(0.005, 0.012)) for _ in range(3)]
        self.sway = [(rng.uniform(0.1, 0.5), rng.uniform(0, 2 * math.pi), rng.uniform(0.4, 1.0)) for _ in range(3)]
        self.step = rng.uniform(1.7, 2.1)  # steps per second
        self.bounce = rng.uniform(0.2, 0.3) * G  # vertical, per step
        self.phase = rng.uniform(0, 2 * math.pi)

    def wobble(self, t):
        """(angle, tilt) offsets in degrees from tremor and sway."""
        tremor = sum(amp * math.sin(2 * math.pi * f * t + p) for f, p, amp in self.tremor)
        sway_a = sum(amp * math.sin(2 * math.pi * f * t + p) for f, p, amp in self.sway)
        sway_t = sum(amp * math.cos(2 * math.pi * f * t + 2 * p) for f, p, amp in self.sway)
        return tremor + sway_a, 0.7 * tremor + sway_t

    def walk_offset(self, t):
        """The body's displacement (m) while walking: bounce, surge at the step rate, sway at half."""
        w = 2 * math.pi * self.step
        z = -self.bounce / w**2 * math.sin(w * t + self.phase)
        y = -0.1 * G / w**2 * math.sin(w * t + self.phase + 1.0)
        x = -0.08 * G / (w / 2) ** 2 * math.sin(w / 2 * t + self.phase)
        return (x, y, z)


def pose_at(scenario, body, t):
    """(attitude, position) of the sensor at time t, and the segment."""
    seg = scenario.segments[-1]
    for s in scenario.segments:
        if s["start"] <= t < s["end"]:
            seg = s
            break
    if seg["kind"] in ("turn", "flick"):
        x = min(1.0, max(0.0, (t - seg["start"]) / (seg["end"] - seg["start"])))
        # A flick: a minimum-jerk turn out in the first half, the same back in the second, so it
        # stops for an instant at the far pose, as a hand reversing does.
        u = minimum_jerk(x) if seg["kind"] == "turn" else minimum_jerk(1 - abs(1 - 2 * x))
        angle = seg["angle"] + u * (seg["to_angle"] - seg["angle"])
        tilt = seg["tilt"] + u * (seg["to_tilt"] - seg["tilt"])
    else:
        angle, tilt = seg["to_angle"], seg["to_tilt"]
    wa, wt = body.wobble(t)
    mode = seg["mode"]
    walking = mode in ("walk", "pocket")
    if mode in ("table", "stand"):
        wa, wt = 0.0, 0.0
    if mode == "walk":
        # The hand bobs with each step (a few degrees of tilt).
        wt += 3.0 * math.sin(2 * math.pi * body.step * t + body.phase + 0.5)
    if mode == "pocket":
        # Screen against the front of the thigh: the thigh swings +-20 deg at the stride rate
        # (half the step rate), which tilts the phone; the pocket's slant is the pose's angle.
        swing = 20.0 * math.sin(math.pi * body.step * t + body.phase)
        wa, wt = 0.3 * wa, swing
    m = attitude(angle + wa, tilt + wt)
    position = body.walk_offset(t) if walking else (0.0, 0.0, 0.0)
    if mode == "pocket":
        s = math.radians(wt)
        position = add(position, (0.0, 0.35 * math.sin(s), -0.35 * math.cos(s)))  # 35 cm below the hip
    elif mode != "table":
        position = add(position, to_world(m, (0.02, -0.07, 0.0)))  # 7 cm above the wrist
    return m, position, seg


# The physics of the scenarios written only with --gyro (the corpus's older traces, re-created). It is
# kept apart from pose_at, which writes the published traces, so those stay byte for byte.
BLENDED_CARRIES = ("hand", "walk", "stand", "table", "mount", "fall", "cushion")
BLEND = 0.5  # s: a hold whose carry differs from the last one's blends into it over this long


class Surroundings:
    """Per-realisation draws for what only the blended physics has: shakes, knocks, a car and its mount."""

    def __init__(self, rng, scenario):
        self.shake_rate = rng.uniform(4.5, 6.0)  # Hz
        self.shake_reach = rng.uniform(0.03, 0.04)  # m: peak acceleration ~3.5-5.5 g
        self.shake_turn = (rng.uniform(10, 15), rng.uniform(6, 10), rng.uniform(0, 2 * math.pi),
                           rng.uniform(0, 2 * math.pi))  # deg of angle and tilt, their phases
        way = (1.0, rng.uniform(0.1, 0.4), rng.uniform(0.2, 0.5))
        self.shake_way = scale(1 / math.sqrt(sum(a * a for a in way)), way)
        self.vibration = [(rng.uniform(8, 25), rng.uniform(0, 2 * math.pi), rng.uniform(0.9, 1.6)) for _ in range(5)]
        self.road = rng.uniform(0, 2 * math.pi)
        self.resonance = [(rng.uniform(11, 16), rng.uniform(0, 2 * math.pi), rng.uniform(0.01, 0.03)) for _ in range(2)]
        self.knocks = [(t, rng.uniform(2.0, 5.0)) for t in scenario.taps]
        self.bumps, t = [], rng.uniform(1.0, 4.0)
        while t < scenario.duration:
            self.bumps.append((t, rng.uniform(5.0, 9.0)))
            t += rng.uniform(3.0, 7.0)


def drop(seg, t):
    """How far (m, down negative) a falling device has dropped t s into the `fall` segment: free fall
    for seg["fall"] s, then a cushion (a damped spring, 5 Hz, damping 0.35) takes it to rest."""
    fall, tau = seg["fall"], max(0.0, t - seg["start"])
    if tau <= fall:
        return -0.5 * G * tau * tau
    s, v = tau - fall, G * fall
    w = 2 * math.pi * 5.0
    zeta = 0.35
    wd = w * math.sqrt(1 - zeta * zeta)
    sag = G / w**2
    spring = -sag + math.exp(-zeta * w * s) * (sag * math.cos(wd * s) + (zeta * w * sag - v) / wd * math.sin(wd * s))
    return -0.5 * G * fall * fall + spring


def car(scenario, around, t):
    """The car's heading (rad, left positive) and acceleration (m/s^2; X right, Y ahead, Z up) at t."""
    heading, across, ahead = 0.0, 0.0, 0.0
    for kind, start, seconds, size in scenario.vehicle["events"]:
        s = min(1.0, (t - start) / seconds)
        if s <= 0:
            continue
        if kind == "brake":
            ahead += size * math.sin(math.pi * s) ** 2
        else:  # a bend: the yaw rate rises and falls as sin^2; the centripetal acceleration points inward
            heading += size * seconds * (s / 2 - math.sin(2 * math.pi * s) / (4 * math.pi))
            across -= scenario.vehicle["speed"] * size * math.sin(math.pi * s) ** 2
    road = 1 + 0.3 * math.sin(2 * math.pi * 0.07 * t + around.road)
    up = road * sum(a * math.sin(2 * math.pi * f * t + p) for f, p, a in around.vibration)
    ahead += 0.25 * road * sum(a * math.sin(2 * math.pi * f * t + 2 * p) for f, p, a in around.vibration)
    across += 0.2 * road * sum(a * math.sin(2 * math.pi * f * t + 3 * p) for f, p, a in around.vibration)
    for when, size in around.bumps:
        if 0 <= t - when < 0.5:
            up += size * math.exp(-(t - when) / 0.06) * math.sin(2 * math.pi * 9 * (t - when))
    return heading, (across, ahead, up)


def about_z(heading, v):
    c, s = math.cos(heading), math.sin(heading)
    return (c * v[0] - s * v[1], s * v[0] + c * v[1], v[2])


def carry_wobble(mode, body, around, t):
    """(angle, tilt) offsets in degrees that a carry adds: tremor and sway in the hand, the step's bob
    while walking, the mount's resonance and its rocking after a bump in a car; nothing at rest."""
    if mode in ("hand", "walk"):
        wa, wt = body.wobble(t)
        if mode == "walk":
            wt += 3.0 * math.sin(2 * math.pi * body.step * t + body.phase + 0.5)
        return wa, wt
    if mode == "mount":
        (fa, pa, aa), (ft, pt, at) = around.resonance
        wa = aa * math.sin(2 * math.pi * fa * t + pa)
        wt = at * math.sin(2 * math.pi * ft * t + pt)
        for when, size in around.bumps:
            if 0 <= t - when < 1.0:
                wt += 0.05 * size * math.exp(-(t - when) / 0.1) * math.sin(2 * math.pi * 6 * (t - when))
        return wa, wt
    return 0.0, 0.0


def segment_index(scenario, t):
    for i, s in enumerate(scenario.segments):
        if t < s["end"]:
            return i
    return len(scenario.segments) - 1


def blended_attitude(scenario, body, around, t):
    """The device's axes (in the car, if there is one) at t, the segment index and the carry blend."""
    i = segment_index(scenario, t)
    seg = scenario.segments[i]
    last = scenario.segments[i - 1] if i else seg
    length = seg["end"] - seg["start"]
    x = min(1.0, max(0.0, (t - seg["start"]) / length))
    kind = seg["kind"]
    falling = min(1.0, max(0.0, (t - seg["start"]) / seg["fall"]))
    if kind in ("turn", "flick", "fall"):
        u = {"turn": minimum_jerk(x), "flick": minimum_jerk(1 - abs(1 - 2 * x)), "fall": minimum_jerk(falling)}[kind]
        angle = seg["angle"] + u * (seg["to_angle"] - seg["angle"])
        tilt = seg["tilt"] + u * (seg["to_tilt"] - seg["tilt"])
    else:
        angle, tilt = seg["to_angle"], seg["to_tilt"]
    # One carry turns into the next over a motion, or over the first BLEND s of a hold, so nothing jumps.
    if seg["mode"] == last["mode"]:
        k = 1.0
    elif kind in ("hold", "shake"):
        k = minimum_jerk(min(1.0, max(0.0, (t - seg["start"]) / min(BLEND, length))))
    else:
        k = minimum_jerk(falling if kind == "fall" else x)
    wa, wt = carry_wobble(seg["mode"], body, around, t)
    if k < 1:
        a0, t0 = carry_wobble(last["mode"], body, around, t)
        wa, wt = a0 + k * (wa - a0), t0 + k * (wt - t0)
    if kind == "shake":
        reach, phase = shake_envelope(seg, t), 2 * math.pi * around.shake_rate * (t - seg["start"])
        turn_a, turn_t, pa, pt = around.shake_turn
        wa += reach * turn_a * math.sin(phase + pa)
        wt += reach * turn_t * math.sin(phase + pt)
    for when, size in around.knocks:
        if 0 <= t - when < 0.3:  # the device rocks a little on the table
            wt += 0.005 * size * math.exp(-(t - when) / 0.03) * math.sin(2 * math.pi * 25 * (t - when))
    return attitude(angle + wa, tilt + wt), i, k


def shake_envelope(seg, t):
    """0 to 1 and back within a shake: it builds up and dies away over 0.15 s."""
    tau, length = t - seg["start"], seg["end"] - seg["start"]
    return minimum_jerk(min(1.0, max(0.0, tau / 0.15))) * minimum_jerk(min(1.0, max(0.0, (length - tau) / 0.15)))


def carry_place(scenario, body, around, i, mode, m, t):
    """Where a carry puts the sensor (m): the pivot's place plus the lever arm turned with the device;
    while falling and on the cushion, where it slipped from plus the drop."""
    seg = scenario.segments[i]
    if mode in ("fall", "cushion"):
        f = max(j for j in range(i + 1) if scenario.segments[j]["kind"] == "fall")
        start = scenario.segments[f]["start"]
        m0, _, _ = blended_attitude(scenario, body, around, start)
        slipped = carry_place(scenario, body, around, f - 1, scenario.segments[f - 1]["mode"], m0, start)
        return add(slipped, (0.0, 0.0, drop(scenario.segments[f], t)))
    place = add(seg["base"], to_world(m, scenario.lever))
    if mode == "walk":
        place = add(place, body.walk_offset(t))
    return place


def pose_blended(scenario, body, around, t):
    """(attitude, position, an acceleration given directly) in the world at t, for the --gyro-only
    scenarios: carries blend into one another, and shakes, falls, knocks and a car add motion."""
    m, i, k = blended_attitude(scenario, body, around, t)
    seg = scenario.segments[i]
    place = carry_place(scenario, body, around, i, seg["mode"], m, t)
    if k < 1 and seg["kind"] != "fall":  # a fall leaves from where the hand held it: nothing to blend
        before = scenario.segments[i - 1]
        other = carry_place(scenario, body, around, i - 1, before["mode"], m, t)
        place = add(other, scale(k, add(place, scale(-1.0, other))))
    if seg["kind"] == "shake":
        reach = shake_envelope(seg, t) * around.shake_reach
        place = add(place, scale(reach * math.sin(2 * math.pi * around.shake_rate * (t - seg["start"])),
                                 around.shake_way))
    given = (0.0, 0.0, 0.0)
    for when, size in around.knocks:
        if 0 <= t - when < 0.2:  # a knock on the table rings it briefly
            ring = size * math.exp(-(t - when) / 0.012) * math.sin(2 * math.pi * 40 * (t - when))
            given = add(given, (0.0, 0.0, ring))
    if scenario.vehicle:
        heading, moving = car(scenario, around, t)
        m = tuple(about_z(heading, axis) for axis in m)
        place = about_z(heading, place)
        given = add(given, about_z(heading, moving))
    return m, place, given


def specific_force(scenario, body, around, t, h=1e-3):
    """What the accelerometer senses at plan time t (m/s^2, pointing the way gravity pulls, device axes)."""
    if not scenario.gyro_only:
        m, p, _ = pose_at(scenario, body, t)
        _, p_before, _ = pose_at(scenario, body, t - h)
        _, p_after, _ = pose_at(scenario, body, t + h)
        acceleration = tuple((after - 2 * now + before) / h**2 for after, now, before in zip(p_after, p, p_before))
    else:
        m, p, given = pose_blended(scenario, body, around, t)
        _, p_before, _ = pose_blended(scenario, body, around, t - h)
        _, p_after, _ = pose_blended(scenario, body, around, t + h)
        acceleration = tuple((after - 2 * now + before) / h**2 + a
                             for after, now, before, a in zip(p_after, p, p_before, given))
    return to_device(m, (-acceleration[0], -acceleration[1], -G - acceleration[2]))


def to_sensor(scenario, v):
    """A device-frame vector in the sensor's frame (device = M . raw, so raw = M^T . device)."""
    if not scenario.mount:
        return v
    return tuple(sum(scenario.mount[i][j] * v[i] for i in range(3)) for j in range(3))


def frame_at(scenario, body, around, t):
    """The device's axes in the world at plan time t (the accelerometer's attitude)."""
    if not scenario.gyro_only:
        return pose_at(scenario, body, t)[0]
    m, _, _ = blended_attitude(scenario, body, around, t)
    if scenario.vehicle:
        heading, _ = car(scenario, around, t)
        m = tuple(about_z(heading, axis) for axis in m)
    return m


def spin(axes, before, after, h):
    """The angular velocity in device axes from the device's axes (x, y, z in the world) and their
    values h apart: the skew part of R^T dR/dt, R's columns the axes."""
    ex, ey, ez = axes
    dx, dy, dz = (tuple((b - a) / h for a, b in zip(u, v)) for u, v in zip(before, after))
    dot = lambda u, v: sum(a * b for a, b in zip(u, v))
    return ((dot(ez, dy) - dot(ey, dz)) / 2, (dot(ex, dz) - dot(ez, dx)) / 2, (dot(ey, dx) - dot(ex, dy)) / 2)


def angular_velocity(scenario, body, around, t, h=1e-5):
    """The device's angular velocity (rad/s, device axes, right-handed) at plan time t. pose_at switches
    carries at once, so its pose can jump at a segment's start; a difference across the jump is
    replaced by the one-sided one that does not cross it (the jump is no rotation a gyroscope sees)."""
    t = min(max(t, 2 * h), scenario.duration - 2 * h)
    before, now, after = (frame_at(scenario, body, around, s) for s in (t - h, t, t + h))
    back, ahead = spin(now, before, now, h), spin(now, now, after, h)
    if max(abs(a - b) for a, b in zip(back, ahead)) > 0.5:
        return min(back, ahead, key=lambda w: sum(c * c for c in w))
    return tuple((a + b) / 2 for a, b in zip(back, ahead))


class Gyroscope:
    """A MEMS gyroscope read with the accelerometer: a constant bias per axis, white noise, 16-bit
    samples at +-2000 deg/s (clipped), and a sample clock of its own (phase, rate error)."""

    RANGE = math.radians(2000.0)
    LSB = 2 * RANGE / 2**16  # 0.0610 deg/s

    def __init__(self, rng, rate):
        self.rng, self.rate = rng, rate
        self.bias = [rng.choice((-1.0, 1.0)) * math.radians(rng.uniform(0.5, 3.0)) for _ in range(3)]
        self.density = rng.uniform(0.005, 0.01)  # (deg/s)/sqrt(Hz)
        self.sigma = math.radians(self.density) * math.sqrt(rate / 2)
        self.clock_error = rng.uniform(-0.02, 0.02)
        self.phase = rng.uniform(0.0, 1.0)
        self.index, self.sample = None, None

    def sample_time(self, k):
        """Host time (s from the trace's start) of sample k."""
        return (k + self.phase) / (self.rate * (1 + self.clock_error))

    def read(self, stamp, truth):
        """The latest sample at host time `stamp`; truth(T): the true rate (rad/s) at host time T."""
        k = math.floor(stamp * self.rate * (1 + self.clock_error) - self.phase)
        if self.index is None:
            self.index = k - 1
        while self.index < k:
            self.index += 1
            w = truth(self.sample_time(self.index))
            value = [v + b + self.sigma * self.rng.gauss(0.0, 1.0) for v, b in zip(w, self.bias)]
            self.sample = tuple(min(self.RANGE - self.LSB, max(-self.RANGE, round(v / self.LSB) * self.LSB))
                                for v in value)
        return self.sample

    def meta(self, frame):
        return dict(rate_hz=self.rate, units="rad/s", frame=frame, bits=16, range_dps=2000,
                    lsb_rad_s=round(self.LSB, 7), bias_rad_s=[round(b, 5) for b in self.bias],
                    noise_dps_per_rthz=round(self.density, 5), noise_rad_s=round(self.sigma, 6),
                    clock_error=round(self.clock_error, 4), phase=round(self.phase, 4), hold="zero-order")


def world(scenario, seed):
    """A realisation's random stream (next: the accelerometer's clock error, then its bias), its body
    and, for the --gyro-only scenarios, its surroundings (drawn from a stream of their own)."""
    rng = random.Random(seed)
    body = Body(rng)
    around = Surroundings(random.Random(seed * 1000003 + 29), scenario) if scenario.gyro_only else None
    return rng, body, around


def realise(scenario, seed, gyro=False):
    """One realisation: the rows, the labels and the metadata (with a gyroscope: 7 columns)."""
    rng, body, around = world(scenario, seed)
    rate = scenario.rate
    clock_error = rng.uniform(-0.02, 0.02)
    bias = [rng.uniform(-0.3, 0.3) for _ in range(3)]  # up to 30 mg
    lsb = 4 * G / 2**scenario.bits
    sigma = scenario.noise * 1e-6 * G * math.sqrt(rate / 2)
    # The gyroscope draws from a stream of its own: the accelerometer's columns are those written without it.
    spinning = Gyroscope(random.Random(seed * 1000003 + 17), rate) if gyro else None

    def truth(host):
        """The true angular velocity at host time `host`, per second of host time (labels' clock)."""
        w = angular_velocity(scenario, body, around, host / (1 + clock_error) + scenario.skip)
        return to_sensor(scenario, scale(1 / (1 + clock_error), w))

    rows = []
    n = int(scenario.duration * rate)
    for i in range(1, n):
        t = i / rate
        if t <= scenario.skip:
            continue
        specific = to_sensor(scenario, specific_force(scenario, body, around, t))
        reading = [value + b + sigma * rng.gauss(0.0, 1.0) for value, b in zip(specific, bias)]
        reading = tuple(min(2 * G - lsb, max(-2 * G, round(value / lsb) * lsb)) for value in reading)
        stamp = (t - scenario.skip) * (1 + clock_error) + rng.uniform(-0.001, 0.001)
        rows.append((stamp, *reading) + (spinning.read(stamp, truth) if gyro else ()))
    labels = label(scenario, clock_error)
    mount = scenario.mount or [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    frame = "sensor" if scenario.mount else "device"
    meta = dict(scenario=scenario.name, description=scenario.description, set="public", generator="generate.py",
                seed=seed, duration_s=round(rows[-1][0], 3), n_samples=len(rows), frame=frame, rate_hz=rate,
                bits=scenario.bits, range_g=2, noise_ug_per_rthz=scenario.noise,
                bias_ms2=[round(b, 4) for b in bias], clock_error=round(clock_error, 4), mount_matrix=mount,
                mount_matrix_hwdb="; ".join(", ".join(str(v) for v in row) for row in mount), lsb_ms2=round(lsb, 5),
                gravity_ms2=G, amplitude_jitter=1.0)
    if gyro:
        meta["gyro"] = spinning.meta(frame)
    return rows, labels, meta


def generate(scenario, seed, out, gyro=False):
    rows, labels, meta = realise(scenario, seed, gyro)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"{scenario.name}.csv"), "w") as f:
        if gyro:
            f.write("t,x,y,z,gx,gy,gz\n")
            for row in rows:
                f.write("%.5f,%.4f,%.4f,%.4f,%.5f,%.5f,%.5f\n" % row)
        else:
            f.write("t,x,y,z\n")
            for row in rows:
                f.write("%.5f,%.4f,%.4f,%.4f\n" % row)
    with open(os.path.join(out, f"{scenario.name}.labels.json"), "w") as f:
        json.dump(labels, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, f"{scenario.name}.meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return len(rows)


def label(scenario, clock_error):
    labels, previous = [], None
    scale = 1 + clock_error  # labels are in the samples' (host) clock
    for seg in scenario.segments:
        if seg["end"] <= scenario.skip:
            continue
        start = round(max(0.0, seg["start"] - scenario.skip) * scale, 3)
        end = round((seg["end"] - scenario.skip) * scale, 3)
        target = nearest(seg["to_angle"], seg["to_tilt"])
        if seg["kind"] != "hold":
            # A motion expects the orientation of the next hold (a flick, or a turn that pauses and
            # turns back, comes back to where it started).
            rest = next((later for later in scenario.segments if later["start"] >= seg["end"] and later["kind"] == "hold"),
                        None)
            target = nearest(rest["to_angle"], rest["to_tilt"]) if rest else target
        if seg["kind"] == "hold":
            if target in UPRIGHT and from_diagonal(seg["to_angle"]) <= 5 and previous is not None:
                expected = previous if previous in UPRIGHT else target
                acceptable = sorted({expected, nearest(seg["to_angle"] + 5, seg["to_tilt"]),
                                     nearest(seg["to_angle"] - 5, seg["to_tilt"])})
            else:
                expected, acceptable = target, [target]
            labels.append(dict(start=start, end=end, expected=expected, acceptable=acceptable, settled=True))
            previous = expected
        else:
            passed = {nearest(seg["angle"] + (seg["to_angle"] - seg["angle"]) * x + d,
                              seg["tilt"] + (seg["to_tilt"] - seg["tilt"]) * x)
                      for x in (i / 90 for i in range(91)) for d in (-5, 0, 5)}
            acceptable = passed | {target} | ({previous} if previous else set())
            if seg["kind"] in ("shake", "fall"):
                acceptable.add("unknown")  # shakes, free fall and the impact
            labels.append(dict(start=start, end=end, expected=target, acceptable=sorted(acceptable), settled=False))
    labels[0]["start"] = 0.0
    return labels


H, T, F = "hold", "turn", "flick"
SCENARIOS = [
    Scenario("side_lying", "Lying on a side in bed: portrait, then the phone turned 60-70 deg (20-30 deg short of "
             "landscape) and held; back; both sides and from upside down.", 50,
             [(H, 0, 30, 3), (T, 66, 35, 0.8), (H, 66, 35, 5), (T, 2, 30, 0.8), (H, 2, 30, 3),
              (T, -62, 20, 0.7), (H, -62, 20, 5), (T, -3, 25, 0.7), (H, -3, 25, 3),
              (T, 70, 10, 0.6), (H, 70, 10, 4), (T, 152, 25, 0.9), (H, 152, 25, 4),
              (T, 116, 25, 0.6), (H, 116, 25, 4)]),
    Scenario("bed_side_reading", "Reading in bed on a side, leaning back 45-60 deg, the phone 23-30 deg off "
             "landscape; back to portrait between.", 25,
             [(H, -5, 55, 3), (T, 64, 55, 1.0), (H, 64, 55, 6), (T, 0, 60, 1.0), (H, 0, 60, 3),
              (T, -60, 45, 1.0), (H, -60, 45, 6), (T, 5, 50, 1.0), (H, 5, 50, 3),
              (T, 67, 50, 1.1), (H, 67, 50, 5)]),
    Scenario("slow_short_turns", "Quarter turns of 2.5-3 s that stop 25 deg short of the next axis, and on.", 25,
             [(H, 0, 20, 3), (T, 65, 20, 2.8), (H, 65, 20, 4), (T, 155, 20, 2.6), (H, 155, 20, 4),
              (T, -115, 20, 3.0), (H, -115, 20, 4), (T, -25, 20, 2.7), (H, -25, 20, 4)]),
    Scenario("walk_hand_off_axis", "Walking with the phone in the hand 25-35 deg off an axis: turned while "
             "walking, never at rest; a guard: held at 47 deg while walking.", 50,
             [(H, 0, 30, 4, "walk"), (T, 58, 30, 0.8, "walk"), (H, 58, 30, 8, "walk"), (T, -2, 30, 0.8, "walk"),
              (H, -2, 30, 5, "walk"), (T, -62, 25, 0.8, "walk"), (H, -62, 25, 8, "walk"),
              (T, 0, 30, 0.8, "walk"), (H, 0, 30, 4, "walk"), (T, 47, 30, 0.6, "walk"), (H, 47, 30, 8, "walk"),
              (T, 2, 30, 0.6, "walk"), (H, 2, 30, 3, "walk")]),
    Scenario("walk_pocket_off_axis", "A phone slanted 25-35 deg in a front trouser pocket, screen against the "
             "thigh (+-20 deg swing): standing, walking, standing.", 50,
             [(H, 0, 20, 3), (T, 150, 0, 1.2), (H, 150, 0, 3), (H, 150, 0, 10, "pocket"), (H, 150, 0, 3),
              (T, 240, 0, 1.0), (H, 240, 0, 3), (H, 240, 0, 10, "pocket"), (H, 240, 0, 3),
              (T, 0, 20, 1.2), (H, 0, 20, 3)]),
    Scenario("start_screen_down", "Starting held overhead, screen down 20-35 deg, then turned upright.", 25,
             [(H, 5, -30, 3), (T, 0, 20, 0.8), (H, 0, 20, 3), (T, 90, -20, 1.0), (H, 90, -20, 3)]),
    Scenario("start_off_axis", "Starting 28 deg off landscape, held in the hand; then portrait and back.", 25,
             [(H, -62, 25, 3), (T, 0, 25, 0.8), (H, 0, 25, 3), (T, -62, 25, 0.8), (H, -62, 25, 3)]),
    Scenario("start_overhead", "Starting lying on the back, reading overhead (screen down 55 deg) in "
             "landscape; then sitting up.", 25,
             [(H, 88, -55, 3), (T, 88, 30, 1.2), (H, 88, 30, 3)]),
    Scenario("hesitations", "Guards: turns that pause briefly past the diagonal and go back, holds at 47-49 deg, "
             "a glance at 52 deg.", 50,
             [(H, 0, 20, 3), (T, 62, 20, 0.5), (T, 0, 20, 0.5), (H, 0, 20, 3), (T, 60, 20, 0.5),
              (T, 60, 20, 0.12), (T, 0, 20, 0.5), (H, 0, 20, 3), (T, 47, 20, 0.5), (H, 47, 20, 6),
              (T, 0, 20, 0.5), (H, 0, 20, 3), (T, -49, 25, 0.5), (H, -49, 25, 6), (T, -2, 20, 0.5),
              (H, -2, 20, 3), (T, 52, 20, 0.4), (T, 0, 20, 0.4), (H, 0, 20, 3)]),
    Scenario("flick_back_held", "Held in the hand: flicks of 0.15-0.5 s toward each neighbour and straight back, "
             "from portrait and from landscape; each ends at rest.", 50,
             [(H, 0, 25, 3), (F, 85, 25, 0.3), (H, 0, 25, 3), (F, -88, 25, 0.43), (H, 0, 25, 3),
              (F, 75, 30, 0.15), (H, 0, 25, 3), (F, -70, 20, 0.5), (H, 0, 25, 3), (T, 90, 25, 0.8), (H, 90, 25, 3),
              (F, 5, 25, 0.35), (H, 90, 25, 3), (F, 175, 25, 0.25), (H, 90, 25, 3)]),
    Scenario("flick_back_stand", "Standing still in a stand (read at the lying rate): picked up by the wrist, "
             "flicked 0.2-0.45 s toward each neighbour and straight back, left again.", 50,
             [(H, 0, 20, 4), (F, 80, 20, 0.3), (H, 0, 20, 4), (F, -85, 20, 0.45), (H, 0, 20, 4),
              (F, 70, 25, 0.2), (H, 0, 20, 4), (T, 90, 20, 1.0), (H, 90, 20, 4), (F, 0, 20, 0.4), (H, 90, 20, 4),
              (F, 180, 20, 0.3), (H, 90, 20, 4)], carry="stand"),
    Scenario("pause_and_back", "Guards: turned in 0.5 s to 57-62 deg (past the dwell line), paused 0.06-0.15 s, "
             "turned straight back: a glance that comes back.", 50,
             [(H, 0, 20, 2)] + [step for angle, pause in ((57, 0.06), (60, 0.12), (62, 0.15), (-60, 0.06),
                                                          (-62, 0.12), (-57, 0.15), (60, 0.15), (57, 0.12))
                                for step in ((T, angle, 20, 0.5), (T, angle, 20, pause), (T, 0, 20, 0.5),
                                             (H, 0, 20, 2))]),
    Scenario("start_turning", "Starts during a slow quarter turn from portrait toward landscape (30 deg of 90 done), "
             "then back.", 25,
             [(H, 0, 25, 2), (T, 90, 25, 3.0), (H, 90, 25, 3), (T, 0, 25, 2.5), (H, 0, 25, 3)], skip=3.2),
    Scenario("start_walking_pocket", "Starts while walking, the phone at the waist in a pocket in landscape (the "
             "thigh's swing tilts it +-20 deg); stops, takes it out to portrait.", 50,
             [(H, 95, 10, 8, "pocket"), (H, 95, 10, 3), (T, 0, 25, 1.0), (H, 0, 25, 3)]),
    Scenario("start_walking_hand", "Starts while walking, reading in portrait 25 deg off axis; stops, turns it to "
             "landscape.", 50,
             [(H, -25, 30, 6, "walk"), (H, -25, 30, 3), (T, 90, 30, 0.8), (H, 90, 30, 4)]),
    Scenario("start_mid_flick", "Starts mid-flick, just before the far pose of a 0.4 s flick from portrait toward "
             "landscape; then rest and a turn to landscape.", 50,
             [(H, 0, 25, 2), (F, 85, 25, 0.4), (H, 0, 25, 3), (T, -90, 25, 0.8), (H, -90, 25, 3)], skip=2.17),
]


# The corpus's 13 older traces (their generator is not in this repository), re-created from their
# README rows and public labels for their gyroscope twins: written only with --gyro, into public-gyro/.
FALL, S = "fall", "shake"
CAR = dict(speed=12.0, events=[("brake", 5.9, 1.8, -2.8), ("brake", 24.2, 2.4, -2.5), ("bend", 28.9, 2.8, -0.2),
                               ("bend", 32.8, 3.6, 0.2)])
SCENARIOS += [
    Scenario("car_dashboard", "Clipped into a vent mount in landscape; engine/road vibration, bumps, braking and "
             "turns.", 50,
             [(H, 1.5, 32, 2.14), (T, -90.5, 25.5, 1.013, "mount"), (H, -90.5, 25.5, 51.63, "mount")],
             gyro_only=True, vehicle=CAR),
    Scenario("clean_rotations", "Deliberate 0.3-1.0 s quarter turns through all four upright orientations, both "
             "directions.", 100,
             [(H, 0, 24, 3.18), (T, 90, 24, 0.5), (H, 90, 24, 4.14), (T, 180, 24, 0.455), (H, 180, 24, 3.28),
              (T, -90, 24, 0.74), (H, -90, 24, 3.6), (T, 0, 24, 0.4), (H, 0, 24, 3.9), (T, -90, 24, 0.5),
              (H, -90, 24, 4.43), (T, 180, 24, 0.52), (H, 180, 24, 3.47), (T, 90, 24, 0.68), (H, 90, 24, 3.12),
              (T, 0, 24, 0.39), (H, 0, 24, 3.94)], gyro_only=True),
    Scenario("face_up_down", "Pick up from the table, put down, turn over, pick up from face down, lay face down.", 50,
             [(H, 18, 88.4, 3.05, "table"), (T, 0, 22, 0.66), (H, 0, 22, 5.29), (T, 19, 86.2, 0.69, "table"),
              (H, 19, 86.2, 4.98, "table"), (T, 56, 88.3, 0.63, "table"), (H, 56, 88.3, 2.28, "table"),
              (T, 63, -87.9, 0.75, "table"), (H, 63, -87.9, 4.94, "table"), (T, 0, 28, 0.71), (H, 0, 28, 3.96),
              (T, 6, -85.4, 0.77, "table"), (H, 6, -85.4, 3.28, "table")], gyro_only=True, taps=(9.69, 18.33, 28.71)),
    Scenario("fast_flick", "0.2 s wrist flicks (large centripetal/tangential accelerations), a flick-and-return, a "
             "180 deg flick.", 200,
             [(H, 0, 20, 3.27), (T, 88, 20, 0.216), (H, 88, 20, 3.28), (T, 0, 20, 0.2), (H, 0, 20, 2.88),
              (T, -89, 20, 0.185), (H, -89, 20, 2.93), (T, 0, 20, 0.22), (H, 0, 20, 3.16), (F, 85, 20, 0.384),
              (H, 0, 20, 2.59), (T, 179.5, 20, 0.266), (H, 179.5, 20, 3.14), (T, 88, 20, 0.2), (H, 88, 20, 3.11)],
             gyro_only=True),
    Scenario("free_fall", "Slips out of the hand: 0.3 s tumbling free fall (~44 cm), lands on a cushion, picked up "
             "again.", 100,
             [(H, 0.5, 16, 4.06), (FALL, 31, -88.2, 0.864, "fall", {"fall": 0.3}), (H, 31, -88.2, 4.44, "cushion"),
              (T, 1, 22, 0.91, {"base": (0.0, 0.0, -0.25)}), (H, 1, 22, 3.58)], gyro_only=True),
    Scenario("hold_45", "Held 40-50 deg between portrait and landscape for several seconds: must not flap.", 25,
             [(H, -1.5, 16.5, 3.26), (T, 44, 17, 0.777), (H, 44, 17, 7.52), (T, 89, 17, 0.689), (H, 89, 17, 3.46),
              (T, 45.5, 17.5, 0.456), (H, 45.5, 17.5, 8.59), (T, -0.5, 17, 0.644), (H, -0.5, 17, 3.77),
              (T, -47, 17, 0.416), (H, -47, 17, 9.08), (T, -88.5, 17, 0.489), (H, -88.5, 17, 3.85)], gyro_only=True),
    Scenario("mounted_rotated", "Accelerometer mounted rotated on the board: CSV is in the sensor frame, meta has "
             "mount_matrix.", 25,
             [(H, 0.5, 25.5, 3.43), (T, 91.5, 24.5, 0.427), (H, 91.5, 24.5, 3.2), (T, 179.5, 24, 0.619),
              (H, 179.5, 24, 3.97), (T, -92, 25.5, 0.418), (H, -92, 25.5, 3.72), (T, 0.5, 25, 0.757),
              (H, 0.5, 25, 3.05), (T, 7.3, 87.2, 0.745, "table"), (H, 7.3, 87.2, 4.03, "table"),
              (T, 9.7, -88, 0.606, "table"), (H, 9.7, -88, 4.22, "table"), (T, -91.5, 24.5, 0.906),
              (H, -91.5, 24.5, 3.15)], gyro_only=True, mount=[[0, -1, 0], [-1, 0, 0], [0, 0, -1]]),
    Scenario("reading_in_bed", "Reclining with the phone in portrait tilted back 60-70 deg from vertical: still "
             "portrait.", 50,
             [(H, 0, 17, 3.63), (T, 0, 65, 2.656), (H, 0, 65, 15.93), (T, 0, 66.5, 1.4), (H, 0, 66.5, 11.98),
              (T, 0, 14, 2.0), (H, 0, 14, 3.98)], gyro_only=True),
    Scenario("shake", "1-2 s vigorous shakes (clipping at +-2 g) in portrait and in landscape: must not change.", 200,
             [(H, -2, 18.5, 3.23), (S, -2, 18.5, 1.135), (H, -2, 18.5, 3.2), (T, 90, 18.5, 0.6), (H, 90, 18.5, 3.02),
              (S, 90, 18.5, 1.765), (H, 90, 18.5, 3.71)], gyro_only=True),
    Scenario("slow_rotation", "Quarter turns that take ~3 s each, sampled at 10 Hz.", 10,
             [(H, 0.3, 15.5, 3.2), (T, -90, 15.5, 3.215), (H, -90, 15.5, 4.92), (T, 0, 15.5, 2.92),
              (H, 0, 15.5, 4.96), (T, 90, 15.5, 2.78), (H, 90, 15.5, 4.86), (T, 179.5, 15.5, 2.72),
              (H, 179.5, 15.5, 4.19), (T, 90.5, 15.5, 2.96), (H, 90.5, 15.5, 4.62)], gyro_only=True),
    Scenario("table_tilted", "Lying face up 5-12 deg off flat (case bump / sloped desk), tapped and turned: stays "
             "faceUp.", 25,
             [(H, 0, 21, 2.55), (T, 68.4, 80.2, 0.737, "table"), (H, 68.4, 80.2, 10.94, "table"),
              (T, 153, 81.9, 1.15, "table"), (H, 153, 81.9, 10.22, "table"), (T, -91, 34, 0.656), (H, -91, 34, 3.54)],
             bits=10, gyro_only=True,
             taps=(3.29, 6.5, 7.5, 9.4, 10.9, 11.9, 12.9, 17.2, 17.7, 18.8, 19.3, 20.1, 23.1, 23.6)),
    Scenario("tablet_20hz", "10-inch tablet, 20 Hz 10-bit sensor: slower turns, laid on the table, handed over upside "
             "down.", 20,
             [(H, -92, 37, 6.98), (T, -1, 38, 0.845), (H, -1, 38, 5.63), (T, 92, 38, 0.768), (H, 92, 38, 6.58),
              (T, 130, 88.3, 0.896, "table"), (H, 130, 88.3, 6.75, "table"), (T, -0.5, 38.5, 1.136),
              (H, -0.5, 38.5, 6.3), (T, 179, 36, 0.991), (H, 179, 36, 5.16)],
             bits=10, noise=300.0, gyro_only=True, lever=(0.04, -0.12, 0.0)),
    Scenario("walking_portrait", "Walking (1.8-2.2 steps/s, 1.5-3 m/s^2 vertical bumps) while looking at the phone in "
             "portrait.", 100,
             [(H, 2, 39.5, 2.9), (H, 2, 39.5, 28.0, "walk"), (H, 2, 39.5, 3.44)], gyro_only=True),
]


def turned(v, w, dt):
    """v after dt in the device's frame if it is fixed in the world and the device turns at w:
    dv/dt = -w x v, a turn by -|w| dt about w (Rodrigues)."""
    size = math.sqrt(sum(c * c for c in w))
    if size == 0:
        return v
    k, a = scale(1 / size, w), -size * dt
    across = (k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2], k[0] * v[1] - k[1] * v[0])
    along = sum(p * q for p, q in zip(k, v)) * (1 - math.cos(a))
    return add(add(scale(math.cos(a), v), scale(math.sin(a), across)), scale(along, k))


def between(u, v):
    """The angle between two vectors, degrees."""
    c = sum(p * q for p, q in zip(u, v)) / math.sqrt(sum(p * p for p in u) * sum(q * q for q in v))
    return math.degrees(math.acos(max(-1.0, min(1.0, c))))


def check(scenarios, seed):
    """The gyroscope's self-check. 1: the true angular velocity, integrated, turns gravity (in the
    device frame) as the attitude does. 2: in the written rows, gravity before a quiet turn, turned by
    the gyroscope's columns, lands where the accelerometer's columns put it after the turn."""
    print("1. Derivation: gravity in the device frame carried by the true angular velocity (2 ms midpoint steps,")
    print("   restarted at each segment's start) against the attitude's own gravity; and with w negated.")
    print(f"   {'scenario':22} {'turned':>8} {'worst':>8} {'negated':>8}")
    for index, s in scenarios:
        _, body, around = world(s, seed * 1000 + index)
        down = lambda t: to_device(frame_at(s, body, around, t), (0.0, 0.0, -1.0))
        dt, total, worst, wrong = 0.002, 0.0, 0.0, 0.0
        for seg in s.segments:
            t, end = max(seg["start"], s.skip), seg["end"]
            if t >= end:
                continue
            g = flipped = down(t)
            while t + dt <= end:
                w = angular_velocity(s, body, around, t + dt / 2)
                g, flipped, t = turned(g, w, dt), turned(flipped, scale(-1.0, w), dt), t + dt
                truth = down(t)
                total += math.degrees(math.sqrt(sum(c * c for c in w))) * dt
                worst, wrong = max(worst, between(g, truth)), max(wrong, between(flipped, truth))
        print(f"   {s.name:22} {total:7.0f}° {worst:7.3f}° {wrong:7.1f}°")
    print()
    print("2. Written rows: the accelerometer's mean direction 0.25-0.05 s before a quiet turn (hand, stand or table,")
    print("   holds either side), turned by the gyroscope's rows (each held until the next row), against its")
    print("   mean direction 0.05-0.25 s after. Raw; with the meta's biases taken off both sensors; with w negated;")
    print("   unbiased, with the true rate at the rows' times in place of the gyroscope's columns (what is left is")
    print("   the accelerometer's noise and the hand's sway: the rest of the unbiased error is the rows' zero-order")
    print("   hold of a gyroscope on a clock of its own, a sample repeated or skipped now and then).")
    print(f"   {'scenario':22} {'turns':>5} {'turn':>5} {'raw med/max':>13} {'unbiased':>13} {'negated':>8} "
          f"{'true rate':>13}")
    quiet = ("hand", "stand", "table")
    for index, s in scenarios:
        if s.vehicle:
            continue
        rows, _, meta = realise(s, seed * 1000 + index, gyro=True)
        rng, body, around = world(s, seed * 1000 + index)
        stretch = 1 + rng.uniform(-0.02, 0.02)  # the clock error, as realise draws it
        stamps = [r[0] for r in rows]
        sizes, raw, unbiased, negated, exact = [], [], [], [], []
        for j, seg in enumerate(s.segments[1:-1], 1):
            last, next_ = s.segments[j - 1], s.segments[j + 1]
            if (seg["kind"] != "turn" or last["kind"] != "hold" or next_["kind"] != "hold" or seg["start"] < s.skip
                    or {seg["mode"], last["mode"], next_["mode"]} - set(quiet)
                    or min(last["end"] - last["start"], next_["end"] - next_["start"]) < 0.3):
                continue
            start, end = (seg["start"] - s.skip) * stretch, (seg["end"] - s.skip) * stretch

            def mean(lo, hi, bias):
                chosen = [r for r in rows if lo <= r[0] < hi]
                v = tuple(sum(r[c] for r in chosen) / len(chosen) - b for c, b in zip((1, 2, 3), bias))
                return v, sum(r[0] for r in chosen) / len(chosen)

            for bias, gyro_bias, sign, out in ((0, 0, 1, raw), (1, 1, 1, unbiased), (0, 0, -1, negated),
                                               (1, 1, 0, exact)):
                b = meta["bias_ms2"] if bias else (0, 0, 0)
                gb = meta["gyro"]["bias_rad_s"] if gyro_bias else (0, 0, 0)
                g, ta = mean(start - 0.25, start - 0.05, b)
                after, tb = mean(end + 0.05, end + 0.25, b)
                k = max(0, bisect.bisect_right(stamps, ta) - 1)
                t = ta
                while t < tb:
                    upto = min(tb, stamps[k + 1]) if k + 1 < len(rows) else tb
                    w = tuple(sign * (rows[k][4 + c] - gb[c]) for c in range(3)) if sign else to_sensor(s, scale(
                        1 / stretch, angular_velocity(s, body, around, (t + upto) / 2 / stretch + s.skip)))
                    g, t, k = turned(g, w, upto - t), upto, k + 1
                out.append(between(g, after))
                if out is raw:
                    sizes.append(between(mean(start - 0.25, start - 0.05, b)[0], after))
        if not sizes:
            continue
        med = lambda v: sorted(v)[len(v) // 2]
        print(f"   {s.name:22} {len(sizes):5} {med(sizes):4.0f}° {med(raw):6.2f}/{max(raw):5.2f}° "
              f"{med(unbiased):5.2f}/{max(unbiased):5.2f}° {med(negated):7.1f}° "
              f"{med(exact):5.2f}/{max(exact):5.2f}°")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="directory to write into (default: public/ beside this script, with --gyro "
                        "public-gyro/)")
    parser.add_argument("--seed", type=int, default=1, help="realisation (default 1: the published traces)")
    parser.add_argument("--gyro", action="store_true", help="add a gyroscope (t,x,y,z,gx,gy,gz) and write every "
                        "scenario, the --gyro-only ones too")
    parser.add_argument("--check", action="store_true", help="the gyroscope's self-check: print it, write nothing")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("names", nargs="*", help="only these scenarios")
    args = parser.parse_args()
    if args.list:
        for s in SCENARIOS:
            print(f"{s.name:22} {s.rate:3} Hz  {'(--gyro only) ' if s.gyro_only else ''}{s.description}")
        return 0
    unknown = set(args.names) - {s.name for s in SCENARIOS}
    if unknown:
        print(f"generate.py: no scenario {', '.join(sorted(unknown))} (see --list)", file=sys.stderr)
        return 2
    chosen = [(index, s) for index, s in enumerate(SCENARIOS)
              if (s.name in args.names if args.names else args.gyro or args.check or not s.gyro_only)]
    refused = [s.name for _, s in chosen if s.gyro_only and not (args.gyro or args.check)]
    if refused:
        print(f"generate.py: {', '.join(refused)} only with --gyro (see --list)", file=sys.stderr)
        return 2
    if args.check:
        return check(chosen, args.seed)
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "public-gyro" if args.gyro else "public")
    for index, s in chosen:
        count = generate(s, seed=args.seed * 1000 + index, out=out, gyro=args.gyro)
        print(f"{out}/{s.name}.csv: {count} samples, {s.duration - s.skip:.1f} s at {s.rate} Hz")
    return 0

if __name__ == "__main__":
    sys.exit(main())
