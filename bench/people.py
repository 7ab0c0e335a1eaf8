"""The `people` section of `python3 -m bench`: orientd beside a plain fused detector
(bench/reference_detector.py) on recordings of real people (bench/real_recordings.py, UCI HAPT:
phones at the waist) and on simulated trouser pockets (bench/pocket_stand_ups.py; no public pocket
recording with a gyroscope reaches this machine), in the same run."""
import datetime
import os

from bench import pocket_stand_ups, real_recordings
from bench.common import ROOT, write_section


def people_section():
    orientd = os.environ.get("ORIENTD", os.path.join(ROOT, ".build/release/orientd"))
    waist = real_recordings.table(orientd)
    pocket = pocket_stand_ups.table(orientd)
    section = "\n".join([
        "<!-- people-benchmark:begin -->",
        f"Measured {datetime.date.today().isoformat()} by `python3 -m bench people` (both tables in the same run). "
        "The reference is `bench/reference_detector.py`: a complementary filter's gravity (τ 0.5 s, bias "
        "learned at rest) read by a face band (75°/65°), 45° + 12° hysteresis and a candidate held 150 ms.",
        "",
        "Real people, a phone at the waist (UCI HAPT, 61 sessions, 50 Hz; onset from the moment the held "
        "pose is clearly in the new orientation, `bench/real_recordings.py`):",
        "",
        *waist,
        "",
        "Simulated trouser pockets, 12 seeds of two sit-downs and stand-ups each (`bench/pocket_stand_ups.py`):",
        "",
        *pocket,
        "<!-- people-benchmark:end -->",
    ])
    write_section("people-benchmark", "Real people beside a plain fused detector", section)
