"""One lifecycle (issue 37): every long-lived part of the daemon is a service of one ServiceGroup,
started in order and stopped in reverse on every way out.

On a convertible with every kind of sensor (display and base accelerometers, a hinge-angle sensor,
light, proximity, a compass, a lid switch) and a private system bus, each part is made to fail at
start in turn (`--fail-at-start PART`): every part started before it stops, in reverse, none after
it starts, and the process is back where it was before the first part started, as /proc shows it:
the same descriptors (no udev monitor, sysfs file, timerfd, socket or bus connection left) and no
thread of the parts'. `--hold` makes the daemon wait on standard input before its first part starts
and after its last stops, so the test reads /proc at those two moments. A SIGTERM after readiness
stops every part the same way."""
import os
import subprocess
import tempfile
import time
from collections import Counter

from sensorproxy import PrivateSystemBus
from testbed import TestbedCase

# The daemon's one list on this device, in start order (docs/architecture.md).
PARTS = ["hub", "silence-alarm", "display-sensor", "base-sensor", "hinge-angle-sensor", "gyroscope", "light-sensor",
         "proximity-sensor", "compass-sensor", "lid-switch", "tablet-mode-switch", "socket", "dbus", "sleep-watch", "readiness"]


def snapshot(pid):
    """What /proc says the process holds: its descriptors (number → what they point at, netlink
    sockets, udev monitors among them, named by protocol) and its threads' names."""
    netlink = {}
    with open(f"/proc/{pid}/net/netlink") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            netlink[fields[-1]] = f"netlink protocol {fields[1]}"  # the inode, last
    descriptors = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
        if target.startswith("socket:["):
            target = netlink.get(target[8:-1], target)
        descriptors[int(fd)] = target
    threads = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as comm:
                threads.append(comm.read().strip())
        except FileNotFoundError:
            continue
    return descriptors, sorted(threads)


class Lifecycle(TestbedCase):
    def setUp(self):
        super().setUp()
        self.bed.add_accelerometer(0, raw=(0, -1000, 0), properties={"ACCEL_LOCATION": "display"})
        self.bed.add_accelerometer(1, name="lis3lv02d", raw=(0, -500, 860), attributes={"label": "accel-base"})
        self.bed.add_light(2, name="cros-ec-lid-angle", attributes={"in_angl_raw": "110"})
        self.bed.add_light(3, attributes={"in_illuminance_input": "120"})
        self.bed.add_proximity(4, raw=10, near_level=100)
        self.bed.add_buffered_channel(5, "rot_from_north_magnetic_tilt_comp", "magn_3d", scale="0.0001")
        self.bed.add_input_device(7, "platform/PNP0C0D:00", "Lid Switch", "sw=1", ["EVIOCGSW(0) 8 0000000000000000"])
        self.directory = tempfile.mkdtemp(prefix="orientd-lifecycle-")
        self.bus = PrivateSystemBus()
        self.addCleanup(self.bus.stop)

    def serve(self, *args):
        return self.start("serve", "--socket", os.path.join(self.directory, "orientd.sock"), "--config", "/dev/null",
                          "--dbus", "on", "--no-dbus-polkit", "--log-level", "debug", "--hold", *args,
                          env=self.bus.env(self.bed.env()), stdin=subprocess.PIPE)

    def go_on(self, daemon):
        daemon.process.stdin.write(b"\n")
        daemon.process.stdin.flush()

    def held(self, daemon, moment):
        daemon.wait_for(lambda d: d.stderr_contains(f"holding {moment}"), what=f"the hold {moment}")
        return snapshot(daemon.process.pid)

    def started_and_stopped(self, daemon):
        """The parts the log says started, and those it says stopped, in order."""
        started = [line.split("part=")[1].split()[0] for line in daemon.stderr_lines if " started part=" in line]
        stopped = [line.split("part=")[1].split()[0] for line in daemon.stderr_lines if " stopping part=" in line]
        return started, stopped

    def left_behind(self, before, after):
        """What the process holds after that it did not before: (descriptors, named threads)."""
        descriptors_before, threads_before = before
        descriptors_after, threads_after = after
        left = {fd: target for fd, target in descriptors_after.items() if descriptors_before.get(fd) != target}
        # libdispatch's event manager (an epoll and its eventfd) comes with the first dispatch
        # source, the ServiceGroup's signal handlers, and lives as long as the process: the lowest
        # two descriptors after those held before, and no part's.
        manager = sorted(fd for fd in left if fd < min(left, default=0) + 2)
        if [left[fd] for fd in manager] == ["anon_inode:[eventpoll]", "anon_inode:[eventfd]"]:
            for fd in manager:
                del left[fd]
        # Threads of the parts have names (orientd-silence, orientd-dbus, the acquisition's);
        # libdispatch's pool workers (named for its queues' priority) idle a while and are the
        # pool's, not a part's.
        named = lambda threads: sorted(t for t in threads if not t.endswith("qos.overcommit") and not t.endswith("-qos"))
        extra = sorted((Counter(named(threads_after)) - Counter(named(threads_before))).elements())
        return left, extra

    def assert_back_where_it_started(self, daemon, before, what):
        """Every part has stopped by the hold; the ServiceGroup's signal handlers (libdispatch
        sources: signalfds) are cancelled then too, but libdispatch closes their descriptors on its
        own thread a moment later, so /proc is read until it matches or 3 s have passed."""
        deadline = time.monotonic() + 3
        while True:
            left, extra = self.left_behind(before, snapshot(daemon.process.pid))
            if (not left and not extra) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual(left, {}, f"{what}: descriptors left open")
        self.assertEqual(extra, [], f"{what}: threads left running")

    def test_the_parts_on_a_convertible_with_every_sensor(self):
        daemon = self.serve("--fail-at-start", "none")
        self.held(daemon, "before the first part starts")  # the hold comes before anything is made
        self.go_on(daemon)
        daemon.wait_for(lambda d: d.process.poll() is not None, what="the refusal")
        self.assertEqual(daemon.process.returncode, 64)
        self.assertTrue(daemon.stderr_contains(f"the parts are {', '.join(PARTS)}"), daemon.stderr_lines[-3:])

    def test_each_part_failing_at_start_stops_everything_started_before_it(self):
        for index, failing in enumerate(PARTS):
            with self.subTest(failing=failing):
                daemon = self.serve("--fail-at-start", failing)
                before = self.held(daemon, "before the first part starts")
                self.go_on(daemon)
                self.held(daemon, "after the last part stopped")
                started, stopped = self.started_and_stopped(daemon)
                self.assertEqual(started, PARTS[:index], "started in order, up to the failing part")
                self.assertEqual(stopped, list(reversed(PARTS[:index])), "stopped in reverse")
                self.assertTrue(daemon.stderr_contains(f"{failing} failed to start (--fail-at-start)"))
                self.assert_back_where_it_started(daemon, before, f"{failing} failed")
                self.go_on(daemon)
                self.assertEqual(daemon.stop(timeout=10), 70)
                self.assertFalse(os.path.exists(os.path.join(self.directory, "orientd.sock")), "the socket file is gone")

    def test_sigterm_stops_every_part_in_reverse(self):
        daemon = self.serve()
        before = self.held(daemon, "before the first part starts")
        self.go_on(daemon)
        daemon.wait_for(lambda d: d.stderr_contains("started part=readiness"), what="readiness")
        self.assertTrue(daemon.stderr_contains("lid switch found"), "the lid switch is found")
        self.assertTrue(daemon.stderr_contains("hinge-angle sensor read with the base"))
        running = snapshot(daemon.process.pid)
        self.assertIn("orientd-silence", running[1], "the silence alarm's thread runs")
        self.assertIn("orientd-dbus", running[1], "the bus's thread runs")
        # Under umockdev a udev monitor is a socket (netlink on a real system): one per source.
        sockets = lambda descriptors: sum(target.startswith(("socket:", "netlink")) for target in descriptors.values())
        self.assertGreaterEqual(sockets(running[0]) - sockets(before[0]), 8, "udev monitors, the socket, the bus")
        daemon.process.send_signal(15)
        self.held(daemon, "after the last part stopped")
        started, stopped = self.started_and_stopped(daemon)
        self.assertEqual(started, PARTS)
        self.assertEqual(stopped, list(reversed(PARTS)))
        self.assert_back_where_it_started(daemon, before, "SIGTERM")
        self.go_on(daemon)
        self.assertEqual(daemon.stop(timeout=10), 0)
