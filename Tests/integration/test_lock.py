"""The rotation lock kept across restarts (issue 72, `[session] persist-lock`): saved in the state
directory ($STATE_DIRECTORY) atomically, restored with what it pins, a corrupt file or a read-only
directory a warning that names the file, never a crash."""
import os
import tempfile
import unittest

from daemon import Daemon


class KeptLock(unittest.TestCase):
    def setUp(self):
        self.state = tempfile.mkdtemp(prefix="orientd-state-")
        self.lock_file = os.path.join(self.state, "lock")

    def start(self, *args, prefix=()):
        daemon = Daemon("--dbus", "off", *args, prefix=prefix, env=dict(os.environ, STATE_DIRECTORY=self.state))
        self.addCleanup(lambda: daemon.process.poll() is None and daemon.process.kill())
        return daemon

    @staticmethod
    def shown(daemon, orientation):
        """Poses `orientation` and waits until the daemon's device orientation is it."""
        client = daemon.client()
        client.request("subscribe", topics=["device"])
        daemon.pose(orientation)
        client.next_event(lambda e: e["topic"] == "device" and e["to"] == orientation)
        return client

    def test_the_lock_and_what_it_pins_survive_a_restart(self):
        first = self.start()
        client = self.shown(first, "landscapeLeft")
        locked = client.request("lock", on=True)
        self.assertTrue(locked["state"]["locked"])
        pinned = locked["state"]["interface"]
        self.assertEqual(pinned, "landscapeRight")  # a pad's lock pins what it shows
        first.stop()
        with open(self.lock_file) as kept:
            self.assertIn('pinned = "landscapeLeft"', kept.read())

        # Restarted while the device stands in portrait: still locked, still showing what was pinned.
        second = self.start()
        second.wait_for_log("rotation lock restored: locked, pinned landscapeLeft")
        client = self.shown(second, "portrait")
        state = client.request("get")["state"]
        self.assertTrue(state["locked"])
        self.assertEqual(state["interface"], pinned)
        # Unlocked, the next start is unlocked.
        self.assertFalse(client.request("lock", on=False)["state"]["locked"])
        second.stop()
        third = self.start()
        self.assertFalse(third.client().request("get")["state"]["locked"])

    def test_a_corrupt_file_is_a_warning_naming_it_and_the_configured_lock_holds(self):
        with open(self.lock_file, "w") as corrupt:
            corrupt.write("locked = maybe\n\x00\x01")
        daemon = self.start()
        daemon.wait_for_log("rotation lock not restored")
        warning = next(line for line in daemon.log if "rotation lock not restored" in line)
        self.assertIn(self.lock_file, warning)
        self.assertIn("locked = false", warning)
        client = daemon.client()
        self.assertFalse(client.request("get")["state"]["locked"])
        # The file is written afresh at the next change.
        self.assertTrue(client.request("lock", on=True)["state"]["locked"])
        daemon.stop()
        with open(self.lock_file) as kept:
            self.assertIn("locked = true", kept.read())

    def test_a_read_only_state_directory_keeps_the_lock_in_memory(self):
        # The directory bound read-only onto itself in a mount namespace of the daemon's own.
        read_only = ("unshare", "--mount", "sh", "-c",
                     f"mount --bind {self.state} {self.state} && mount -o remount,bind,ro {self.state} {self.state}"
                     ' && exec "$0" "$@"')
        daemon = self.start(prefix=read_only)
        client = daemon.client()
        self.assertTrue(client.request("lock", on=True)["state"]["locked"])
        daemon.wait_for_log("rotation lock not kept across restarts")
        warning = next(line for line in daemon.log if "rotation lock not kept" in line)
        self.assertIn(self.lock_file, warning)
        self.assertIn("Read-only file system", warning)
        self.assertTrue(client.request("get")["state"]["locked"])  # it holds in memory
        self.assertIsNone(daemon.process.poll())
        self.assertFalse(os.path.exists(self.lock_file))

    def test_persist_lock_off_keeps_nothing(self):
        daemon = self.start("--no-persist-lock")
        self.assertTrue(daemon.client().request("lock", on=True)["state"]["locked"])
        daemon.stop()
        self.assertEqual(os.listdir(self.state), [])
        self.assertFalse(self.start("--no-persist-lock").client().request("get")["state"]["locked"])


if __name__ == "__main__":
    unittest.main()
