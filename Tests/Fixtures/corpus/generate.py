#!/usr/bin/env python3
"""Generates the corpus's real-life pose traces (the scenarios marked "generate.py" in README.md).

    python3 generate.py                  # writes public/NAME.{csv,labels.json,meta.json}
    python3 generate.py --out DIR --seed 7   # another realisation of the same scenarios (held-out style)
    python3 generate.py --list           # the scenarios and what they hold

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
so it expects the orientation it started in.

Carries: `hand` (tremor, sway, the sensor 7 cm above the wrist), `walk` (the hand while walking),
`pocket` (a front trouser pocket while walking), `table` (lying still, turned about the sensor) and
`stand` (in a stand or leaning on something: still, but picked up and turned about the wrist).
"""
import argparse
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

    def __init__(self, name, description, rate, steps, carry="hand", bits=12, noise=200.0, skip=0.0):
        """`steps`: (kind, angle, tilt, seconds[, carry]); kind `hold`, `turn` (to the pose) or `flick`
        (out to the pose and straight back). `skip`: the trace starts this many seconds into the plan
        (a start-up in the middle of a motion)."""
        self.name, self.description, self.rate, self.bits, self.noise = name, description, rate, bits, noise
        self.skip = skip
        self.segments = []
        t = 0.0
        angle, tilt = steps[0][1], steps[0][2]
        for kind, to_angle, to_tilt, seconds, *rest in steps:
            mode = rest[0] if rest else carry
            moves = kind in ("turn", "flick")
            delta = ((to_angle - angle + 180) % 360) - 180 if moves else 0.0
            self.segments.append(dict(kind=kind, start=t, end=t + seconds, angle=angle, tilt=tilt,
                                      to_angle=angle + delta if moves else to_angle,
                                      to_tilt=to_tilt, mode=mode))
            t += seconds
            if kind == "turn":
                angle, tilt = angle + delta, to_tilt
            elif kind == "hold":
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


def generate(scenario, seed, out):
    rng = random.Random(seed)
    body = Body(rng)
    rate = scenario.rate
    clock_error = rng.uniform(-0.02, 0.02)
    bias = [rng.uniform(-0.3, 0.3) for _ in range(3)]  # up to 30 mg
    lsb = 4 * G / 2**scenario.bits
    sigma = scenario.noise * 1e-6 * G * math.sqrt(rate / 2)
    h = 1e-3
    rows = []
    n = int(scenario.duration * rate)
    for i in range(1, n):
        t = i / rate
        if t <= scenario.skip:
            continue
        m, p, _ = pose_at(scenario, body, t)
        _, p_before, _ = pose_at(scenario, body, t - h)
        _, p_after, _ = pose_at(scenario, body, t + h)
        acceleration = tuple((after - 2 * now + before) / h**2 for after, now, before in zip(p_after, p, p_before))
        specific = to_device(m, (-acceleration[0], -acceleration[1], -G - acceleration[2]))
        reading = [value + b + sigma * rng.gauss(0.0, 1.0) for value, b in zip(specific, bias)]
        reading = tuple(min(2 * G - lsb, max(-2 * G, round(value / lsb) * lsb)) for value in reading)
        stamp = (t - scenario.skip) * (1 + clock_error) + rng.uniform(-0.001, 0.001)
        rows.append((stamp, *reading))
    labels = label(scenario, clock_error)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"{scenario.name}.csv"), "w") as f:
        f.write("t,x,y,z\n")
        for row in rows:
            f.write("%.5f,%.4f,%.4f,%.4f\n" % row)
    with open(os.path.join(out, f"{scenario.name}.labels.json"), "w") as f:
        json.dump(labels, f, indent=1)
        f.write("\n")
    identity = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    meta = dict(scenario=scenario.name, description=scenario.description, set="public", generator="generate.py",
                seed=seed, duration_s=round(rows[-1][0], 3), n_samples=len(rows), frame="device", rate_hz=rate,
                bits=scenario.bits, range_g=2, noise_ug_per_rthz=scenario.noise,
                bias_ms2=[round(b, 4) for b in bias], clock_error=round(clock_error, 4), mount_matrix=identity,
                mount_matrix_hwdb="1, 0, 0; 0, 1, 0; 0, 0, 1", lsb_ms2=round(lsb, 5), gravity_ms2=G,
                amplitude_jitter=1.0)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "public"),
                        help="directory to write into (default: public/ beside this script)")
    parser.add_argument("--seed", type=int, default=1, help="realisation (default 1: the published traces)")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("names", nargs="*", help="only these scenarios")
    args = parser.parse_args()
    if args.list:
        for s in SCENARIOS:
            print(f"{s.name:22} {s.rate:3} Hz  {s.description}")
        return 0
    unknown = set(args.names) - {s.name for s in SCENARIOS}
    if unknown:
        print(f"generate.py: no scenario {', '.join(sorted(unknown))} (see --list)", file=sys.stderr)
        return 2
    for index, s in enumerate(SCENARIOS):
        if args.names and s.name not in args.names:
            continue
        count = generate(s, seed=args.seed * 1000 + index, out=args.out)
        print(f"{args.out}/{s.name}.csv: {count} samples, {s.duration - s.skip:.1f} s at {s.rate} Hz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
