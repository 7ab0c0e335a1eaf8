"""A person doing `orientd calibrate`'s poses with a device whose sensor is mounted by a matrix
(device = M · raw): readings in the sensor's frame at 25 Hz, with hand tremor, each pose held a few
degrees off, the turn between poses jerky enough not to look still, and the last pose kept while the
next prompt is read.

Used live by the umockdev tests (each reading written to the simulated sysfs) and, as a script, to
write the replay fixtures in Tests/Fixtures/calibration:

    python3 Tests/integration/person.py MATRIX OUT.csv [--held-twice] [--seed N]
"""
import math
import random

G = 9.81
RATE = 25.0
# Display-frame readings of each pose (gravity-pointing: upright portrait reads (0, -g, 0)).
POSES = {
    "portrait": (0.0, -G, 0.0), "portraitUpsideDown": (0.0, G, 0.0),
    "landscapeLeft": (-G, 0.0, 0.0), "landscapeRight": (G, 0.0, 0.0),
    "faceUp": (0.0, 0.0, -G), "faceDown": (0.0, 0.0, G),
}
WIZARD = ["portrait", "landscapeLeft", "faceUp"]


def parse_matrix(text):
    rows = [[float(v) for v in row.split(",")] for row in text.split(";")]
    assert len(rows) == 3 and all(len(r) == 3 for r in rows), text
    return rows


def raw(matrix, device):
    """raw = Mᵀ · device (M is orthogonal)."""
    return tuple(sum(matrix[r][c] * device[r] for r in range(3)) for c in range(3))


def tilted(v, degrees, rng):
    """`v` turned by `degrees` towards a random side."""
    other = (1.0, 0.0, 0.0) if abs(v[0]) < 5 else (0.0, 1.0, 0.0)
    side = (v[1] * other[2] - v[2] * other[1], v[2] * other[0] - v[0] * other[2], v[0] * other[1] - v[1] * other[0])
    norm = math.sqrt(sum(c * c for c in side))
    a = math.radians(degrees) * rng.choice((-1, 1))
    return tuple(c * math.cos(a) + s / norm * G * math.sin(a) for c, s in zip(v, side))


class Person:
    """Feeds `sink(reading)` once per 1/25 s of simulated time; `sink` decides whether that is
    written to sysfs in real time or appended to a trace."""

    def __init__(self, matrix, sink, seed=7, start="faceUp"):
        self.matrix = parse_matrix(matrix) if isinstance(matrix, str) else matrix
        self.sink = sink
        self.rng = random.Random(seed)
        self.held = POSES[start]

    def feed(self, device, tremor=0.08):
        reading = raw(self.matrix, device)
        self.sink(tuple(c + self.rng.uniform(-tremor, tremor) for c in reading))

    def hold(self, seconds):
        for _ in range(int(seconds * RATE)):
            self.feed(self.held)

    def turn(self, pose, seconds=0.6, hold=1.6, off=6.0):
        target = tilted(POSES[pose], off, self.rng)
        steps = int(seconds * RATE)
        for step in range(1, steps + 1):
            f = step / steps
            blend = tuple(a * (1 - f) + b * f for a, b in zip(self.held, target))
            norm = math.sqrt(sum(c * c for c in blend)) or 1
            self.feed(tuple(c * G / norm + self.rng.uniform(-2.5, 2.5) for c in blend))
        self.held = target
        self.hold(hold)

    def shake(self, seconds):
        """Never still: a device carried about."""
        for _ in range(int(seconds * RATE)):
            self.feed(self.held, tremor=3.0)


def write_fixture(matrix, path, held_twice=False, seed=7):
    """A trace of the whole wizard (or of portrait held twice, then nothing), slow enough to replay
    at twice real time: each hold lasts 3 s of trace."""
    rows = []
    person = Person(matrix, lambda r: rows.append(r), seed=seed)
    person.hold(2)
    poses = ["portrait", "faceUp", "portrait"] if held_twice else WIZARD
    for index, pose in enumerate(poses):
        if held_twice and index == 1:
            person.turn(pose, seconds=1.2, hold=0.3)  # turned half-way round, and back
            continue
        person.turn(pose, seconds=1.2, hold=3.2)
        person.hold(2.4)
    with open(path, "w") as handle:
        handle.write("t,x,y,z\n")
        for index, (x, y, z) in enumerate(rows):
            handle.write(f"{index / RATE:.5f},{x:.4f},{y:.4f},{z:.4f}\n")


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description="Writes a replay fixture of a person doing orientd calibrate's poses.")
    parser.add_argument("matrix", help='the mounting, "a, b, c; d, e, f; g, h, i" (device = M · raw)')
    parser.add_argument("output", help="the CSV trace to write (t,x,y,z, raw m/s²)")
    parser.add_argument("--held-twice", action="store_true", help="portrait, a half turn, portrait again, then nothing")
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()
    write_fixture(options.matrix, options.output, held_twice=options.held_twice, seed=options.seed)
