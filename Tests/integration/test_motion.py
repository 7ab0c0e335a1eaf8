"""The motion topic on the real socket, with the stdin sensor fed readings with and without a
gyroscope (t,x,y,z,gx,gy,gz): rates, caps, claims, and a turn followed through the fused path."""
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from daemon import Client, Daemon, G
from testbed import ReadCounter, TestbedCase, as_another_user, changes_user

RATE = 100  # Hz of the written readings


def quarter_turn(start, duration=0.5, rest_before=0.6, rest_after=0.6, gyroscope=True, bias=(0.01, -0.02, 0.03)):
    """Readings of an upright device turned a quarter counter-clockwise (as its viewer sees it:
    portrait to landscapeLeft) by a minimum-jerk turn, with the gyroscope's rates (rad/s, plus a
    bias) when `gyroscope`; from `start` seconds on the sensor's clock, at RATE."""
    lines = []
    total = rest_before + duration + rest_after
    for k in range(int(total * RATE)):
        t = k / RATE
        s = min(1.0, max(0.0, (t - rest_before) / duration))
        theta = (s ** 3 * (10 - 15 * s + 6 * s * s)) * math.pi / 2
        rate = 30 * s * s * (1 - s) ** 2 * (math.pi / 2) / duration
        reading = (-G * math.sin(theta), -G * math.cos(theta), 0.0)
        fields = [start + t, *reading] + ([bias[0], bias[1], rate + bias[2]] if gyroscope else [])
        lines.append(",".join(f"{value:.5f}" for value in fields))
    return lines


class MotionCase(unittest.TestCase):
    def setUp(self):
        self.daemon = Daemon("--claim-linger", "0.2", "--dbus", "off")
        self.addCleanup(self.stop)
        self.clock = 0.0

    def stop(self):
        if self.daemon.process.poll() is None:
            self.daemon.process.kill()
            self.daemon.process.wait()

    def write(self, lines):
        self.daemon.process.stdin.write(("\n".join(lines) + "\n").encode())
        self.daemon.process.stdin.flush()
        self.clock = float(lines[-1].split(",")[0]) + 1 / RATE

    def still(self, seconds, gyroscope=True):
        vector = "0,-9.81,0" + (",0.01,-0.02,0.03" if gyroscope else "")
        self.write([f"{self.clock + k / RATE:.5f},{vector}" for k in range(int(seconds * RATE))])

    def stream_still(self, seconds=None):
        """Writes resting readings with rates in real time on a thread of its own, as a 100 Hz sensor
        gives them (the simulated sensor's pace, not a synchronisation), for `seconds` or until the
        test ends; the sample time last written is in `self.written`. Readings written faster than
        real time would reach a `motion` subscriber in one burst, which a client that is not reading
        just then is too slow for (docs/protocol.md, "Slow clients")."""
        self.written = 0.0
        stop = threading.Event()

        def sensor():
            start, k = time.monotonic(), 0
            while not stop.is_set() and (seconds is None or k < seconds * RATE):
                t = self.clock + k / RATE
                self.daemon.process.stdin.write(f"{t:.5f},0,-9.81,0,0.01,-0.02,0.03\n".encode())
                self.daemon.process.stdin.flush()
                self.written = t
                k += 1
                time.sleep(max(0.0, start + k / RATE - time.monotonic()))

        writer = threading.Thread(target=sensor, daemon=True)
        writer.start()
        self.addCleanup(writer.join)
        self.addCleanup(stop.set)

    def streaming_with_a_short_stall_timeout(self):
        """The daemon started again with a stall timeout of 1 s, its sensor streaming in real time,
        and a raw socket connected to it (no client-side buffering)."""
        self.stop()
        self.daemon = Daemon("--claim-linger", "0.2", "--dbus", "off", "--stall-timeout", "1")
        self.stream_still()
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(self.daemon.socket_path)
        self.addCleanup(connection.close)
        return connection

    def motion_events(self, client, count):
        return [client.next_event(lambda e: e["topic"] == "motion") for _ in range(count)]


class Motion(MotionCase):
    def test_a_turn_is_followed_through_the_fused_path_on_the_socket(self):
        client = self.daemon.client()
        reply = client.request("subscribe", topics=["motion", "device"], rate=50)
        self.assertTrue(reply["ok"], reply)
        self.assertEqual(reply["rate"], 50)
        lines = quarter_turn(0)
        self.write(lines)
        # The first motion event is the first sample written (t = 0; the stdin sensor keeps the
        # spacing of t); the last, at 50 of 100 Hz, is within a sample of the last one written.
        first = client.next_event(lambda e: e["topic"] == "motion")
        self.assertEqual(client.next_event(lambda e: e["topic"] == "device" and e["to"] == "landscapeLeft")["from"],
                         "portrait")
        end = first["time"] + float(lines[-1].split(",")[0]) - 1.5 / RATE
        last = first
        while last["time"] < end:
            last = client.next_event(lambda e: e["topic"] == "motion")
        self.assertEqual([round(v, 1) for v in last["gravity"]], [-9.8, 0.0, 0.0])
        self.assertLess(max(abs(v) for v in last["userAcceleration"]), 0.1)
        self.assertLess(max(abs(v) for v in last["rotationRate"]), 0.05)
        w, x, y, z = last["attitude"]
        self.assertAlmostEqual(w, math.cos(math.pi / 4), delta=0.02)
        self.assertAlmostEqual(z, math.sin(math.pi / 4), delta=0.02)
        self.assertEqual(client.request("get")["state"]["gyroscope"], {"status": "working"},
                         "lines with gx, gy, gz: the state shows the gyroscope")
        self.assertLess(abs(x) + abs(y), 0.03)
        self.assertEqual(last["seq"], client.request("get")["seq"], "a motion event does not grow seq")

    def test_each_subscriber_gets_its_rate(self):
        ten, twenty = self.daemon.client(), self.daemon.client()
        self.assertEqual(ten.request("subscribe", topics=["motion"], rate=10)["rate"], 10)
        self.assertEqual(twenty.request("subscribe", topics=["motion"])["rate"], 20, "the default")
        self.stream_still(3)
        received = {10: [], 20: []}

        def read(client, rate):  # each client reads as its events come, on a thread of its own
            received[rate] = self.motion_events(client, 2 * rate)

        readers = [threading.Thread(target=read, args=pair) for pair in ((ten, 10), (twenty, 20))]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(timeout=15)
        for rate, events in received.items():
            span = events[-1]["time"] - events[0]["time"]
            self.assertAlmostEqual(span, (len(events) - 1) / rate, delta=1.5 / rate, msg=f"{rate} Hz")

    def test_without_a_gyroscope_there_is_no_rate_and_no_attitude(self):
        client = self.daemon.client()
        client.request("subscribe", topics=["motion"], rate=20)
        self.still(0.5, gyroscope=False)
        event = client.next_event(lambda e: e["topic"] == "motion")
        self.assertIsNone(event["rotationRate"])
        self.assertIsNone(event["attitude"])
        self.assertEqual([round(v, 2) for v in event["gravity"]], [0.0, -9.81, 0.0])

    def test_a_rate_out_of_range_is_refused_and_changes_nothing(self):
        client = self.daemon.client()
        for rate in (0, 101, "fast"):
            reply = client.request("subscribe", topics=["motion"], rate=rate)
            self.assertFalse(reply["ok"])
            self.assertEqual(reply["error"]["code"], "bad-request")
        self.assertEqual(client.request("get")["state"]["sensor"], "idle", "a refused subscribe claims nothing")

    def test_the_stream_claims_the_sensor_while_subscribed(self):
        client = self.daemon.client()
        client.request("subscribe", topics=["sensor"])
        client.request("subscribe", topics=["motion"])
        self.assertEqual(client.next_event(lambda e: e["topic"] == "sensor")["to"], "active")
        client.request("unsubscribe", topics=["motion"])
        self.assertEqual(client.next_event(lambda e: e["topic"] == "sensor")["to"], "idle")
        self.daemon.wait_for_log("no motion subscriber left")

    def test_a_slow_reader_gets_the_newest_motion_and_stays(self):
        """A client that asks for 100 Hz but reads 10 events a second: what it reads is at most a few
        events behind the newest (before, the socket's buffer held seconds of them, and the client,
        reading all along, was disconnected as stalled), and it is not disconnected."""
        slow = self.streaming_with_a_short_stall_timeout()
        # Read byte by byte: no line waits in this client's own buffer, so any backlog is the daemon's.
        unbuffered = slow.makefile("rb", buffering=0)
        unbuffered.readline()  # hello
        slow.sendall(b'{"id": 1, "op": "subscribe", "topics": ["motion"], "rate": 100}\n')
        while json.loads(unbuffered.readline()).get("type") != "reply":
            pass
        behind = []
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            time.sleep(0.1)  # the slow reader's own pace
            line = unbuffered.readline()
            self.assertTrue(line, "the slow reader was disconnected")
            event = json.loads(line)
            if event.get("topic") == "motion":
                # Event times are the daemon's clock, anchored at the first reading: counted from
                # the first event read, which is fresh.
                behind.append(self.written - event["time"])
        behind = [lag - behind[0] for lag in behind]
        self.assertGreater(len(behind), 30)
        # About six events may wait unread (60 ms of the stream, 0.6 s at this reader's pace); the
        # lag stops growing there.
        self.assertLess(max(behind[len(behind) // 2:]), 1.0, f"seconds behind the newest sample: {behind}")

    def test_a_motion_subscriber_that_never_reads_is_disconnected(self):
        """Its newest sample held (the socket is far from full), nothing more reaches it: after the
        stall timeout it is disconnected, as a client whose socket is full."""
        silent = self.streaming_with_a_short_stall_timeout()
        silent.sendall(b'{"id": 1, "op": "subscribe", "topics": ["motion"], "rate": 100}\n')
        self.daemon.wait_for_log("client stalled: disconnecting", timeout=10)

@changes_user
class MotionCaps(MotionCase):
    def subscribe_as_nobody(self, rate):
        script = ("import socket,sys,json\ns=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1]);f=s.makefile('rw')\n"
                  "f.readline();f.write(sys.argv[2]+'\\n');f.flush();print(f.readline())")
        request = {"id": 1, "op": "subscribe", "topics": ["motion"], "rate": rate}
        result = subprocess.run(as_another_user(self) + [sys.executable, "-c", script, self.daemon.socket_path,
                                                         json.dumps(request)], capture_output=True, text=True, timeout=10)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def test_only_root_and_the_control_group_get_more_than_60_hz(self):
        self.assertEqual(self.subscribe_as_nobody(100)["rate"], 60)
        self.assertEqual(self.subscribe_as_nobody(30)["rate"], 30)
        self.assertEqual(self.daemon.client().request("subscribe", topics=["motion"], rate=100)["rate"], 100)


if __name__ == "__main__":
    unittest.main()


class MotionRate(TestbedCase):
    """A motion subscriber's rate above the configured one is asked of the device (its
    sampling_frequency) and read at, while it is subscribed; the device offers 12.5–100 Hz."""

    def test_the_fastest_subscriber_sets_the_devices_rate_while_subscribed(self):
        path = self.bed.add_accelerometer(0, raw=(0, -1000, 0), sampling=("25", "12.5 25 50 100"))
        reads = ReadCounter(os.path.join(self.bed.root, path.lstrip("/"), "in_accel_y_raw"))
        self.addCleanup(reads.close)
        directory = tempfile.mkdtemp(prefix="orientd-motion-")
        socket_path = os.path.join(directory, "orientd.sock")
        daemon = self.start("serve", "--socket", socket_path, "--config", "/dev/null", "--dbus", "off",
                            "--claim-linger", "0.2")
        daemon.wait_for(lambda d: d.stderr_contains("listening"), what="the socket")
        client = Client(socket_path)
        self.addCleanup(client.close)
        self.assertEqual(client.request("subscribe", topics=["motion"], rate=100)["rate"], 100,
                         "root: up to the 100 Hz the device offers, above the 25 Hz it runs at")
        daemon.wait_for(lambda d: self.bed.attribute(path, "sampling_frequency") == "100", what="100 Hz asked")
        count = reads.count(1.0)
        self.assertGreater(count, 60, f"{count} reads in a second: 100 Hz (25 Hz would read 25 times)")
        client.request("unsubscribe", topics=["motion"])
        client.request("subscribe", topics=["device"])
        daemon.wait_for(lambda d: self.bed.attribute(path, "sampling_frequency") == "25", what="back to 25 Hz")
