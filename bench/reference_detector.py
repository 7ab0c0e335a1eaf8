"""A plain fused detector, the measuring stick orientd is judged beside on recordings of people.

    python3 -m bench.reference_detector TRACE.csv     # prints its changes as orientd replay does

It is what a careful app would write in an afternoon, and nothing more:

* **Gravity.** A complementary filter on the up vector (the negated reading, unit length): each
  sample's rotation rate, its learned bias removed, turns the estimate (as orientd's fusion does,
  detection-log.md §18), and the accelerometer's direction pulls it with a time constant of
  `CORRECTION_TIME` (0.5 s), only from readings within `ACCELERATION_TOLERANCE` of gravity's length.
  The bias is the mean rate (τ `BIAS_TIME`, 2 s) while the rate is under `STILL_RATE` and the reading
  within 0.5 m/s² of gravity. Without a gyroscope the same filter runs with no turn: a low-pass of
  τ 0.5 s.
* **Rules.** |tilt| of `FACE_ENTER` (75°) or more is a face state, held down to `FACE_EXIT` (65°);
  otherwise the upright orientation whose axis is nearest in the screen plane, the one shown held
  until the direction is `45° + HYSTERESIS / 2` (51°) from its axis. A candidate becomes the
  orientation once it has been asked for without a break for `HOLD` (150 ms), the first one too.

No settle rules, no look-ahead, no fault checks: where orientd's rules buy nothing over this on real
recordings, they are weight."""
import math
import sys

G = 9.80665
CORRECTION_TIME = 0.5
ACCELERATION_TOLERANCE = 2.0
BIAS_TIME = 2.0
STILL_RATE = 0.1
FACE_ENTER = 75.0
FACE_EXIT = 65.0
HYSTERESIS = 12.0
HOLD = 0.15
MAXIMUM_STEP = 0.25  # a longer gap between samples starts the filter afresh
AXES = {"portrait": 0.0, "landscapeLeft": 90.0, "portraitUpsideDown": 180.0, "landscapeRight": -90.0}


def _normalised(v):
    length = math.sqrt(sum(c * c for c in v))
    return [c / length for c in v] if length > 0 else list(v)


def _turned(v, rate, seconds):
    """v turned by −|rate|·seconds about rate (Rodrigues): where gravity goes in the device's frame
    while the device turns at `rate`."""
    speed = math.sqrt(sum(c * c for c in rate))
    if speed == 0:
        return list(v)
    k = [c / speed for c in rate]
    angle = -speed * seconds
    cos, sin = math.cos(angle), math.sin(angle)
    cross = [k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2], k[0] * v[1] - k[1] * v[0]]
    dot = sum(a * b for a, b in zip(k, v))
    return [v[i] * cos + cross[i] * sin + k[i] * dot * (1 - cos) for i in range(3)]


def _candidate(up, shown):
    """The orientation `up` asks for, with `shown` held by the face band's exit and the hysteresis."""
    tilt = math.degrees(math.asin(max(-1.0, min(1.0, up[2]))))
    if abs(tilt) >= FACE_ENTER:
        return "faceUp" if tilt > 0 else "faceDown"
    if shown in ("faceUp", "faceDown") and abs(tilt) >= FACE_EXIT and (tilt > 0) == (shown == "faceUp"):
        return shown
    if up[0] == 0 and up[1] == 0:
        return shown
    angle = math.degrees(math.atan2(up[0], up[1]))
    off = {name: abs((angle - axis + 180) % 360 - 180) for name, axis in AXES.items()}
    if shown in AXES and off[shown] <= 45 + HYSTERESIS / 2:
        return shown
    return min(off, key=off.get)


class ReferenceDetector:
    def __init__(self):
        self.up = None
        self.bias = [0.0, 0.0, 0.0]
        self.last = None
        self.shown = "unknown"
        self.pending, self.since = None, 0.0

    def process(self, t, reading, rate=None):
        """One sample (s, m/s² gravity-pointing, rad/s or None); returns the new orientation or None."""
        length = math.sqrt(sum(c * c for c in reading))
        if length == 0 or not all(math.isfinite(c) for c in reading):
            return None
        measured = [-c / length for c in reading]
        step = None if self.last is None else t - self.last
        self.last = t
        if self.up is None or step is None or not 0 < step <= MAXIMUM_STEP:
            self.up = measured
        else:
            if rate is not None:
                turn = [r - b for r, b in zip(rate, self.bias)]
                if math.sqrt(sum(c * c for c in turn)) < STILL_RATE and abs(length - G) < 0.5:
                    k = step / (BIAS_TIME + step)
                    self.bias = [b + k * (r - b) for b, r in zip(self.bias, rate)]
                    turn = [r - b for r, b in zip(rate, self.bias)]
                self.up = _turned(self.up, turn, step)
            if abs(length - G) < ACCELERATION_TOLERANCE:
                k = step / (CORRECTION_TIME + step)
                self.up = [u + k * (m - u) for u, m in zip(self.up, measured)]
            self.up = _normalised(self.up)
        candidate = _candidate(self.up, self.shown)
        if candidate == self.shown:
            self.pending = None
            return None
        if candidate != self.pending:
            self.pending, self.since = candidate, t
        if t - self.since >= HOLD:
            self.shown, self.pending = candidate, None
            return candidate
        return None


def detect(path):
    """The changes of a trace (`t,x,y,z` or `t,x,y,z,gx,gy,gz`), as [{"t": s, "orientation": name}]."""
    detector, changes = ReferenceDetector(), []
    with open(path) as trace:
        for line in trace:
            if line.startswith("t"):
                continue
            values = [float(v) for v in line.split(",")]
            rate = values[4:7] if len(values) >= 7 else None
            changed = detector.process(values[0], values[1:4], rate)
            if changed:
                changes.append({"t": values[0], "orientation": changed})
    return changes


if __name__ == "__main__":
    import json
    for change in detect(sys.argv[1]):
        print(json.dumps(change))
