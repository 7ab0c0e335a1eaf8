"""orientd as a systemd service: sd_notify to a test-owned NOTIFY_SOCKET, real socket activation with
systemd-socket-activate, SIGHUP reload, journald log format, and the unit files checked by systemd's
own tools."""
import json
import os
import select
import shlex
import socket
import subprocess
import tempfile
import time
import unittest

from daemon import Client
from testbed import ORIENTD, assert_in_words

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Notifications(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="orientd-systemd-")
        self.notify_path = os.path.join(self.directory, "notify")
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(self.notify_path)
        self.addCleanup(self.notify.close)
        self.socket_path = os.path.join(self.directory, "orientd.sock")

    def start(self, *args, extra_env=None):
        env = dict(os.environ, NOTIFY_SOCKET=self.notify_path, WATCHDOG_USEC="400000", **(extra_env or {}))
        process = subprocess.Popen([ORIENTD, "serve", "--sensor", "stdin", "--socket", self.socket_path, *args],
                                   env=env, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: process.poll() is None and (process.kill(), process.wait()))
        return process

    def start_with_config(self, text, *args):
        """The daemon on a configuration file of `text`, once it said READY=1; returns it and the file."""
        config = os.path.join(self.directory, "orientd.toml")
        with open(config, "w") as handle:
            handle.write(text)
        process = self.start("--config", config, *args)
        self.assertTrue(self.next_notification().startswith("READY=1"))
        return process, config

    def reload_as_the_unit_does(self, process):
        """Runs the unit's ExecReload= line as systemd would: split into words, $MAINPID in the
        environment. It must work without procps (Debian 13's minimal systems lack /bin/kill)."""
        with open(os.path.join(ROOT, "systemd", "orientd.service")) as unit:
            line = next(l for l in unit if l.startswith("ExecReload="))
        words = shlex.split(line.removeprefix("ExecReload=").strip())
        self.assertFalse(any("kill" == os.path.basename(w) for w in words[:1]), words)
        subprocess.run(words, env={"MAINPID": str(process.pid), "PATH": "/nonexistent"}, check=True)

    def next_notification(self, timeout=10):
        self.notify.settimeout(timeout)
        return self.notify.recv(4096).decode()

    def test_ready_only_once_listening_then_status_watchdog_and_stopping(self):
        process = self.start()
        first = self.next_notification()
        self.assertTrue(first.startswith("READY=1"), first)
        client = Client(self.socket_path)  # READY meant: connections are accepted now
        self.assertEqual(client.hello["type"], "hello")
        self.assertIn("STATUS=sensor idle (stdin); 0 clients; device unknown, interface portrait", first)
        statuses, pings = [], 0
        while pings < 2 or not any("1 client" in s for s in statuses):
            message = self.next_notification()
            pings += message == "WATCHDOG=1"
            if message.startswith("STATUS="):
                statuses.append(message)
        process.send_signal(15)
        messages = []
        while not any(m.startswith("STOPPING=1") for m in messages):
            messages.append(self.next_notification())
        self.assertEqual(process.wait(timeout=10), 0)

    def test_a_connect_storm_sends_systemd_a_status_a_second_and_the_last_is_true(self):
        process = self.start()
        self.assertTrue(self.next_notification().startswith("READY=1"))
        started = time.monotonic()
        for _ in range(300):
            Client(self.socket_path).close()  # each waits for its hello: the daemon saw it
        keeper = Client(self.socket_path)
        keeper.request("subscribe", topics=["device"])  # the sensor becomes active: a status not seen before
        storm_seconds = time.monotonic() - started
        statuses = []
        # The newest status arrives at most a second after the storm, and it is true.
        while not statuses or not statuses[-1].startswith("STATUS=sensor active (stdin); 1 client;"):
            message = self.next_notification(timeout=3)
            if message.startswith("STATUS="):
                statuses.append(message)
        # 600 changes of the client count and more: one status per started second, and the held one.
        self.assertLessEqual(len(statuses), int(storm_seconds) + 2, statuses)
        keeper.close()
        process.send_signal(15)
        self.assertEqual(process.wait(timeout=10), 0)

    def test_sighup_reloads_what_can_change_and_reports_the_rest(self):
        process, config = self.start_with_config('[session]\nsupported = ["all"]\n')
        client = Client(self.socket_path)
        client.request("subscribe", topics=["interface"])
        with open(config, "w") as handle:
            handle.write('[session]\nsupported = ["landscape"]\nidiom = "phone"\n')
        self.reload_as_the_unit_does(process)  # SIGHUP
        event = client.next_event(lambda e: e["topic"] == "interface")
        self.assertEqual(event["to"], "landscapeRight")  # the new mask is enforced at once
        messages = []
        while not any(m.startswith("READY=1") for m in messages):
            messages.append(self.next_notification())
        self.assertIn("RELOADING=1", messages)
        process.send_signal(15)
        log = process.stderr.read().decode()
        self.assertIn("configuration reloaded", log)
        self.assertIn("needs.restart=session idiom", log)

    def read_log_until(self, process, text, timeout=10):
        """orientd's log lines, read as they come until one contains `text`."""
        lines, partial, deadline = [], b"", time.monotonic() + timeout
        while not any(text in line for line in lines):
            remaining = deadline - time.monotonic()
            self.assertGreater(remaining, 0, f"orientd did not log {text!r}: {lines[-10:]}")
            if select.select([process.stderr], [], [], remaining)[0]:
                chunk = os.read(process.stderr.fileno(), 65536)
                self.assertTrue(chunk, f"orientd exited before logging {text!r}: {lines[-10:]}")
                *complete, partial = (partial + chunk).split(b"\n")
                lines += [line.decode() for line in complete]
        return lines

    def test_a_failed_reload_logs_the_file_line_and_reason_in_one_line(self):
        process, config = self.start_with_config('[socket]\nmode = "0660"\n')
        with open(config, "w") as handle:
            handle.write('[socket]\npaht = "/tmp/elsewhere"\n')
        self.reload_as_the_unit_does(process)
        lines = self.read_log_until(process, "configuration reload failed")
        failed = next(line for line in lines if "configuration reload failed" in line)
        self.assertIn(" error orientd: ", failed)  # a reader filtering by priority sees the reason
        self.assertIn(f'{config}:2: [socket]: unknown key "paht" (keys: group, mode, path)', failed)
        self.assertTrue(Client(self.socket_path).request("get")["ok"])  # still serving, as before
        process.send_signal(15)
        self.assertEqual(process.wait(timeout=10), 0)
        lines += process.stderr.read().decode().splitlines()
        self.assertFalse([line for line in lines if "paht" in line and line is not failed], lines)  # said once, in the log line
        assert_in_words(lines)

    def test_the_debug_log_says_the_effective_configuration_once_in_words(self):
        process, _ = self.start_with_config('[session]\nsupported = ["landscape"]\n', "--log-level", "debug", "--dbus", "off")
        process.send_signal(15)
        self.assertEqual(process.wait(timeout=10), 0)
        lines = process.stderr.read().decode().splitlines()
        effective = [line for line in lines if "effective configuration" in line]
        self.assertEqual(len(effective), 1, lines)
        for setting in ('session.supported=["landscape"]', f'socket.path="{self.socket_path}"', "sensor.sensor=\"stdin\"",
                        'dbus.mode="off"', 'log.level="debug"', "detector.settle-time="):
            self.assertIn(setting, effective[0])
        self.assertTrue(any("Starting service sl-service=configuration reload on SIGHUP" in line for line in lines), lines)
        self.assertFalse([line for line in lines if "DaemonOptions" in line or "OrientationDaemonService" in line], lines)
        assert_in_words(lines)

    def test_journald_format_when_journal_stream_is_set(self):
        process = self.start(extra_env={"JOURNAL_STREAM": "8:1234"})
        self.assertTrue(self.next_notification().startswith("READY=1"))
        process.send_signal(15)
        process.wait(timeout=10)
        lines = process.stderr.read().decode().splitlines()
        self.assertIn("<5>orientd.hub: listening", "\n".join(lines))
        self.assertTrue(any(line.startswith("<6>orientd.sensor: sensor available") for line in lines), lines)
        self.assertTrue(all(line.startswith("<") for line in lines), lines)


class SocketActivation(unittest.TestCase):
    def test_the_daemon_adopts_the_socket_systemd_passes(self):
        directory = tempfile.mkdtemp(prefix="orientd-activation-")
        path = os.path.join(directory, "orientd.sock")
        activator = subprocess.Popen(["systemd-socket-activate", "-l", path, ORIENTD, "serve", "--sensor", "stdin",
                                      "--socket", os.path.join(directory, "unused.sock")],
                                     stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(lambda: activator.poll() is None and (activator.kill(), activator.wait()))
        # Raw reads of its standard error (the activator's, then the daemon's): a buffered readline
        # would keep lines in Python's buffer where select() cannot see them.
        said = b""
        def wait_for_line(text):
            nonlocal said
            deadline = time.monotonic() + 10
            while text not in said:
                remaining = deadline - time.monotonic()
                self.assertGreater(remaining, 0, f"no {text!r} in {said!r}")
                ready, _, _ = select.select([activator.stderr.fileno()], [], [], remaining)
                if ready:
                    chunk = os.read(activator.stderr.fileno(), 65536)
                    self.assertTrue(chunk, f"it ended before {text!r}: {said!r}")
                    said += chunk
            return next(line for line in said.split(b"\n") if text in line).decode()
        # systemd-socket-activate says so once the socket listens (the file exists from bind(),
        # a moment earlier, when a connection is still refused).
        wait_for_line(b"Listening on")
        client = Client(path)  # the first connection starts the daemon, which takes over the socket
        self.assertEqual(client.hello["type"], "hello")
        self.assertTrue(client.request("get")["ok"])
        self.assertFalse(os.path.exists(os.path.join(directory, "unused.sock")))
        # Readiness comes after the socket (and the bus): its line says which socket is served.
        self.assertIn("socket.activated=true", wait_for_line(b"listening"))
        activator.send_signal(15)
        activator.wait(timeout=10)


class Units(unittest.TestCase):
    def test_exposure_score_is_at_most_2(self):
        result = subprocess.run(["systemd-analyze", "security", "--offline=true", os.path.join(ROOT, "systemd", "orientd.service")],
                                capture_output=True, text=True)
        line = [l for l in result.stdout.splitlines() if "Overall exposure level" in l][0]
        score = float(line.split(":")[1].split()[0])
        self.assertLessEqual(score, 2.0, line)

    def test_installed_units_verify_and_uninstall_removes_them(self):
        # Installed under a temporary prefix (no DESTDIR), so that ExecStart names a real file and
        # systemd-analyze verify can check the units against this machine's targets.
        prefix = tempfile.mkdtemp(prefix="orientd-install-")
        variables = [f"PREFIX={prefix}", f"SYSCONFDIR={prefix}/etc", f"ORIENTD_BIN={ORIENTD}",
                     f"ORIENTCTL_BIN={os.path.join(os.path.dirname(ORIENTD), 'orientctl')}"]
        result = subprocess.run(["make", "-C", ROOT, "install-files", *variables], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        units = os.path.join(prefix, "lib/systemd/system")
        with open(os.path.join(units, "orientd.service")) as handle:
            self.assertIn(f"ExecStart={prefix}/bin/orientd serve", handle.read())
        verify = subprocess.run(["systemd-analyze", "verify", "--man=no", os.path.join(units, "orientd.service"),
                                 os.path.join(units, "orientd.socket")], capture_output=True, text=True)
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)
        self.assertEqual(verify.stderr.strip(), "", verify.stderr)
        # The user unit for screen rotation (and the kiosk example, a system unit) verify too.
        user_unit = os.path.join(prefix, "lib/systemd/user/orientctl-follow.service")
        with open(user_unit) as handle:
            self.assertIn(f"ExecStart={prefix}/bin/orientctl follow --rotate auto", handle.read())
        runtime = tempfile.mkdtemp(prefix="orientd-user-")
        verify = subprocess.run(["systemd-analyze", "--user", "verify", "--man=no", user_unit], capture_output=True, text=True,
                                env=dict(os.environ, XDG_RUNTIME_DIR=runtime))
        self.assertEqual((verify.returncode, verify.stderr.strip()), (0, ""), verify.stdout + verify.stderr)
        kiosk = os.path.join(prefix, "share/doc/orientd/examples/orientctl-follow-kiosk.service")
        verify = subprocess.run(["systemd-analyze", "verify", "--man=no", kiosk], capture_output=True, text=True)
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)
        for path in ("bin/orientd", "bin/orientctl", "lib/udev/rules.d/60-orientd.rules", "lib/sysusers.d/orientd.conf",
                     "lib/tmpfiles.d/orientd.conf", "etc/orientd/orientd.toml", "share/doc/orientd/docs/protocol.md"):
            self.assertTrue(os.path.exists(os.path.join(prefix, path)), path)
        uninstall = subprocess.run(["make", "-C", ROOT, "uninstall", *variables], capture_output=True, text=True)
        self.assertEqual(uninstall.returncode, 0, uninstall.stderr)
        left = [os.path.join(r, f) for r, _, files in os.walk(prefix) for f in files]
        self.assertEqual(left, [os.path.join(prefix, "etc/orientd/orientd.toml")])  # the admin's configuration stays



class LeftOverBuffers(unittest.TestCase):
    """orientd release-buffers, which the unit runs after the daemon stops however it stopped
    (ExecStopPost=): an enabled buffer whose node nobody holds is disabled. umockdev cannot make a
    node busy (the kernel's one opener at a time); the booted VM's check kills a claimed daemon."""

    def setUp(self):
        from testbed import Testbed
        self.bed = Testbed()
        self.addCleanup(self.bed.cleanup)

    def run_release(self, *args):
        return subprocess.run([ORIENTD, "release-buffers", *args], env=self.bed.env(), capture_output=True,
                               text=True, timeout=30)

    def test_a_buffer_left_enabled_is_disabled_and_one_that_cannot_be_opened_is_said(self):
        left = self.bed.add_accelerometer(0, name="accel_3d", buffered=True, trigger="accel_3d-dev0")
        self.bed.set_attribute(left, "buffer/enable", "1")
        idle = self.bed.add_accelerometer(1, buffered=True, trigger="bmi160-dev1")
        unopenable = self.bed.bed.add_device("iio", "iio:device2", None, ["name", "gyro_3d\n", "buffer/enable", "1\n"],
                                             ["DEVNAME", "/dev/iio:device2"])
        dry = self.run_release("--dry-run")
        self.assertIn("iio:device0 (accel_3d): left over: would be disabled", dry.stdout)
        self.assertEqual(self.bed.attribute(left, "buffer/enable"), "1", "a dry run changes nothing")
        result = self.run_release()
        self.assertIn("iio:device0 (accel_3d): buffer left enabled by a process that ended: disabled", result.stdout)
        self.assertEqual(self.bed.attribute(left, "buffer/enable"), "0")
        self.assertEqual(self.bed.attribute(idle, "buffer/enable"), "0")
        self.assertNotIn("iio:device1", result.stdout, "a buffer that is off is not mentioned")
        self.assertIn("iio:device2 (gyro_3d): buffer enabled, not disabled: open(/dev/iio:device2): ENOENT", result.stdout)
        self.assertEqual(self.bed.attribute(unopenable, "buffer/enable"), "1")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)

    def test_the_unit_runs_it_after_the_daemon_stops(self):
        with open(os.path.join(ROOT, "systemd", "orientd.service")) as unit:
            self.assertIn("ExecStopPost=/usr/local/bin/orientd release-buffers\n", unit.read())


class UdevRule(unittest.TestCase):
    """systemd/60-orientd.rules run by udev's own `udevadm test` on umockdev devices: the rule file
    alone in a private /etc/udev/rules.d (a mount namespace of its own), Debian's rules beside it
    (60-input-id.rules sets ID_INPUT_SWITCH before ours runs)."""

    def setUp(self):
        from testbed import Testbed
        self.bed = Testbed()
        self.addCleanup(self.bed.cleanup)

    def udev_test(self, syspath):
        # udevadm test also writes udev's database (/run/udev) and /dev/char links: both go to
        # tmpfs in the namespace too, so the machine is left as it was.
        script = ("mount -t tmpfs orientd-rules /etc/udev/rules.d && cp \"$0\" /etc/udev/rules.d/ && "
                  "mkdir -p /run/udev && mount -t tmpfs orientd-udev /run/udev && "
                  "mount -t tmpfs orientd-char /dev && exec udevadm test --action=add \"$1\"")
        result = subprocess.run(["unshare", "-m", "sh", "-c", script, os.path.join(ROOT, "systemd", "60-orientd.rules"), syspath],
                                env=self.bed.env(), capture_output=True, text=True, timeout=60)
        output = result.stdout + result.stderr
        self.assertEqual(result.returncode, 0, output)
        self.assertIn("Reading rules file: /etc/udev/rules.d/60-orientd.rules", output)
        self.assertFalse([line for line in output.splitlines() if "60-orientd.rules:" in line and "Invalid" in line], output)
        return output

    def add(self, text):
        self.bed.bed.add_from_string(text)

    def test_the_rule_starts_orientd_for_every_kind_and_opens_switches_and_uinput_to_its_group(self):
        accelerometer = self.bed.add_accelerometer(0)
        output = self.udev_test(accelerometer)
        self.assertRegex(output, r"SYSTEMD_WANTS=.*orientd\.service")
        self.assertIn("chgrp iio", output)
        # An IIO device that is no accelerometer (a lid-angle sensor) starts nothing.
        angle = self.bed.bed.add_device("iio", "iio:device1", None, ["name", "cros-ec-lid-angle\n", "in_angl_raw", "110\n"],
                                        ["DEVNAME", "/dev/iio:device1"])
        self.assertNotIn("orientd.service", self.udev_test(angle))
        # A switch device (the lid switch) gets a read ACL for the group; a keyboard does not.
        self.add("P: /devices/platform/PNP0C0D:00/input/input7/event7\nN: input/event7\nE: DEVNAME=/dev/input/event7\n"
                 "E: SUBSYSTEM=input\nE: MAJOR=13\nE: MINOR=71\n\n"
                 "P: /devices/platform/PNP0C0D:00/input/input7\nE: SUBSYSTEM=input\nA: name=Lid Switch\\n\n"
                 "A: capabilities/ev=21\\n\nA: capabilities/sw=1\\n\n")
        self.assertIn("run: '/usr/bin/setfacl -m g:orientd:r /dev/input/event7'", self.udev_test("/sys/devices/platform/PNP0C0D:00/input/input7/event7"))
        self.add("P: /devices/platform/i8042/serio0/input/input3/event3\nN: input/event3\nE: DEVNAME=/dev/input/event3\n"
                 "E: SUBSYSTEM=input\nE: MAJOR=13\nE: MINOR=67\n\n"
                 "P: /devices/platform/i8042/serio0/input/input3\nE: SUBSYSTEM=input\nA: name=AT Translated Set 2 keyboard\\n\n"
                 "A: capabilities/ev=120013\\n\nA: capabilities/key=402000000 3803078f800d001 feffffdfffefffff fffffffffffffffe\\n\n")
        keyboard = self.udev_test("/sys/devices/platform/i8042/serio0/input/input3/event3")
        self.assertIn("ID_INPUT_KEYBOARD=1", keyboard)
        self.assertNotIn("setfacl", keyboard)
        # Every kind orientd serves starts it, as iio-sensor-proxy's rule does for its types.
        light = self.bed.add_light(2, attributes={"in_illuminance_raw": "10"})
        self.assertRegex(self.udev_test(light), r"SYSTEMD_WANTS=.*orientd\.service")
        self.assertRegex(self.udev_test(self.bed.add_proximity(3, near_level=50)), r"ORIENTD_SENSOR=proximity")
        compass = self.bed.add_buffered_channel(4, "rot_from_north_magnetic_tilt_comp", "magn_3d")
        output = self.udev_test(compass)
        self.assertRegex(output, r"ORIENTD_SENSOR=compass")
        self.assertIn("chgrp iio", output)
        hid_light = self.bed.add_buffered_channel(5, "intensity_both", "als")
        self.assertRegex(self.udev_test(hid_light), r"ORIENTD_SENSOR=light")
        applesmc = self.bed.bed.add_device("platform", "applesmc.768", None, ["light", "(10,20)\n"], [])
        self.assertRegex(self.udev_test(applesmc), r"SYSTEMD_WANTS=.*orientd\.service")
        evdev = self.bed.add_input_accelerometer(6)
        output = self.udev_test(evdev)
        self.assertRegex(output, r"ORIENTD_SENSOR=accelerometer")
        self.assertIn("run: '/usr/bin/setfacl -m g:orientd:r /dev/input/event6'", output)
        # A front proximity switch (SW_FRONT_PROXIMITY, bit 11) starts it; the lid switch alone does not.
        self.add("P: /devices/platform/prox/input/input9/event9\nN: input/event9\nE: DEVNAME=/dev/input/event9\n"
                 "E: SUBSYSTEM=input\nE: MAJOR=13\nE: MINOR=73\n\n"
                 "P: /devices/platform/prox/input/input9\nE: SUBSYSTEM=input\nA: name=Proximity\\n\n"
                 "A: capabilities/ev=21\\n\nA: capabilities/sw=800\\n\n")
        self.assertRegex(self.udev_test("/sys/devices/platform/prox/input/input9/event9"), r"SYSTEMD_WANTS=.*orientd\.service")
        self.assertNotIn("orientd.service", self.udev_test("/sys/devices/platform/PNP0C0D:00/input/input7/event7"))
        # uinput: read and write for the group (the tablet-mode switch orientd offers libinput).
        self.add("P: /devices/virtual/misc/uinput\nN: uinput\nE: DEVNAME=/dev/uinput\nE: SUBSYSTEM=misc\nE: MAJOR=10\nE: MINOR=223\n")
        self.assertIn("run: '/usr/bin/setfacl -m g:orientd:rw /dev/uinput'", self.udev_test("/sys/devices/virtual/misc/uinput"))

    def test_a_gyroscope_gets_the_groups_access_but_starts_nothing(self):
        """An HID hub's gyro_3d is read through its buffer: its node and buffer attributes go to the
        iio group, or the packaged service (User=orientd) cannot open it (EACCES on a real kernel);
        it comes with the accelerometer, so it starts nothing alone."""
        gyroscope = self.bed.add_buffered_channel(1, "anglvel_x", "gyro_3d", scan_type="le:s16/16>>0")
        output = self.udev_test(gyroscope)
        self.assertRegex(output, r"ORIENTD_COMPANION=gyroscope")
        self.assertNotIn("orientd.service", output)
        # The access lines ran for it (the node's GROUP is set on the same path; this machine has no
        # iio group for udevadm test to show it): the attributes orientd writes become the group's.
        access = [line for line in output.splitlines() if line.startswith(f"run: '/bin/sh -c 'cd {gyroscope} ")]
        self.assertTrue(access, output)
        for attribute in ("scan_elements/*_en", "buffer/enable", "trigger/current_trigger", "in_*_hysteresis",
                          "in_*_sampling_frequency"):
            self.assertIn(attribute, access[0])


if __name__ == "__main__":
    unittest.main()
