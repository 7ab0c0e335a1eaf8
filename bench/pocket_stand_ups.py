"""orientd on simulated phones in a trouser pocket as their wearer sits down and stands up.

    python3 -m bench.pocket_stand_ups [--orientd BIN] [--detector NAME=VALUE]... [--seeds N] [-v]

There are no public recordings of phones in a pocket with a gyroscope here (UCI HAPT, which
bench.real_recordings reads, is the waist only), so this is the corpus generator's physics
(Tests/Fixtures/corpus/generate.py, with its gyroscope) applied to a pocket: standing, the phone
is upright along the thigh (top down or up, 0–20° off the axis, the screen against the thigh);
seated, it lies with the thigh, face up or face down (80–88°). Each seed sits down and stands up
twice (turns of 0.4–1.2 s, the sensor 25 cm from the hip: the thigh's turn pushes it), read at
50 Hz. Onset is scored as bench.real_recordings scores it: from the first moment a centred 0.5 s
mean of the readings is clearly in the new orientation (for 0.3 s on end) to orientd's first
change there. A centred mean leads a fast turn: a stand-up in 0.5 s is "clearly" upright a few
hundredths of a second after it begins, while the phone is still 80° back.
"""
import argparse
import os
import random
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Fixtures", "corpus"))
import generate  # noqa: E402
from bench import reference_detector  # noqa: E402
from bench.real_recordings import Readings, orientation, percentile, replayed_by  # noqa: E402

RATE = 50


def plan(seed):
    """The steps of one seed's session, and the times each turn ends."""
    rng = random.Random(seed)
    angle = rng.choice([180, 0, 160, 200, 20])
    face = rng.choice([85, -85, 80, -80, 88])
    seconds = rng.choice([0.5, 0.6, 0.8, 1.0])
    hold, turn = "hold", "turn"
    return angle, [(hold, angle, 0, 3), (turn, angle, face, seconds), (hold, angle, face, 3),
                   (turn, angle, 0, seconds), (hold, angle, 0, 3), (turn, angle, face, 0.8 * seconds),
                   (hold, angle, face, 3), (turn, angle, 0, 1.2 * seconds), (hold, angle, 0, 3)]


def write(path, rows, columns):
    with open(path, "w") as f:
        f.write("t,x,y,z,gx,gy,gz\n" if columns == 7 else "t,x,y,z\n")
        for row in rows:
            f.write(",".join("%.5f" % v for v in row[:columns]) + "\n")


def session(seed, detect, directory):
    """Onset latencies of one seed's turns by `detect` (a trace's path → its changes):
    {True: fused, False: alone} → [(latency, turn, target)]."""
    angle, steps = plan(seed)
    # The hip is above the phone: the sensor lies 25 cm from it along the phone's length.
    lever = (0.0, 0.25 if abs(angle) > 90 else -0.25, 0.0)
    scenario = generate.Scenario("pocket", "a phone in a trouser pocket", RATE, steps, gyro_only=True, lever=lever)
    rows, _, meta = generate.realise(scenario, seed, gyro=True)
    scale = 1 + meta["clock_error"]
    times = [row[0] for row in rows]
    readings = Readings([(-row[1], -row[2], -row[3]) for row in rows])

    def index(t):
        return min(range(len(times)), key=lambda i: abs(times[i] - t))

    turns, start = [], 0.0
    for kind, _, _, seconds in steps:
        if kind == "turn":
            turns.append((start * scale, (start + seconds) * scale))
        start += seconds
    result = {}
    for fused in (True, False):
        path = os.path.join(directory, f"pocket-{seed}-{'fused' if fused else 'alone'}.csv")
        write(path, rows, 7 if fused else 4)
        changes = detect(path)
        result[fused] = []
        for number, (begin, end) in enumerate(turns):
            target = orientation(readings.held(index(end + 1.5)))[0]
            first = readings.onset(index(begin - 0.5), index(end + 2.5), target)
            onset = None if first is None else times[first]
            reached = next((c["t"] for c in changes if c["t"] >= begin - 0.5 and c["orientation"] == target), None)
            if onset is None or reached is None:
                result[fused].append((None, number, target))
            else:
                result[fused].append((max(0.0, reached - onset), number, target))
    return result


def main(arguments):
    parser = argparse.ArgumentParser(prog="python3 -m bench.pocket_stand_ups", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orientd", default=os.environ.get("ORIENTD", os.path.join(ROOT, ".build/release/orientd")))
    parser.add_argument("--detector", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--seeds", type=int, default=12, help="sessions, seeds 1…N (default 12: 48 turns)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the slowest onsets")
    options = parser.parse_args(arguments)
    if not os.access(options.orientd, os.X_OK):
        sys.exit(f"pocket-stand-ups: no orientd at {options.orientd} (make release, or --orientd BIN)")
    detector = [a for pair in options.detector for a in ("--detector", pair)]
    for line in table(options.orientd, detector, options.seeds, options.verbose):
        print(line)
    return 0


def table(orientd, detector=(), seeds=12, verbose=False):
    """The comparison's table (markdown lines): orientd and the reference detector, each with the
    gyroscope and with the accelerometer alone, on `seeds` simulated sessions."""
    detectors = {"orientd": replayed_by(orientd, list(detector)), "reference": reference_detector.detect}
    found = {(who, fused): [] for who in detectors for fused in (True, False)}
    with tempfile.TemporaryDirectory(prefix="orientd-pocket-") as directory:
        for seed in range(1, seeds + 1):
            for who, detect in detectors.items():
                for fused, entries in session(seed, detect, directory).items():
                    found[(who, fused)] += [(latency, seed, number, target) for latency, number, target in entries]
    lines = ["| | turns | missed | onset median | p95 | max |", "|---|---:|---:|---:|---:|---:|"]
    for fused in (True, False):
        for who in detectors:
            label = f"{who}, {'with the gyroscope' if fused else 'accelerometer alone'}"
            values = sorted(entry for entry in found[(who, fused)] if entry[0] is not None)
            latencies = [entry[0] for entry in values]
            missed = len(found[(who, fused)]) - len(values)
            lines.append(f"| {label} | {len(found[(who, fused)])} | {missed} | {percentile(latencies, 0.5):.3f} s | "
                         f"{percentile(latencies, 0.95):.3f} s | {latencies[-1]:.3f} s |")
            if verbose:
                lines += [f"    slowest: {latency:.3f} s, seed {seed}, turn {number + 1} → {target}"
                          for latency, seed, number, target in values[-5:]]
    return lines


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
