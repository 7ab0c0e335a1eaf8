"""The daemon over its real socket: protocol v1, claims, sessions, permissions, hostile and slow
clients, many clients, shutdown. Runs the real binary with the stdin mock sensor."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from daemon import Client, Daemon
from testbed import ORIENTD, as_another_user, changes_user, reachable_by_everyone

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = os.path.join(ROOT, "Tests", "Fixtures", "resolver", "resolver-vectors.json")
SCENE_OPS = {"present": "scene.present", "dismiss": "scene.dismiss", "push": "scene.push", "pop": "scene.pop",
             "selectTab": "scene.selectTab", "updateScene": "scene.update", "setWindowMask": "scene.setWindowMask",
             "attemptRotation": "scene.attemptRotation", "forceRotation": "scene.forceRotation",
             "requestGeometryUpdate": "scene.requestGeometryUpdate",
             "updateSupportedOrientations": "scene.updateSupportedOrientations", "launch": "scene.launch",
             "beginDeviceNotifications": "scene.beginDeviceNotifications",
             "endDeviceNotifications": "scene.endDeviceNotifications"}


class DaemonCase(unittest.TestCase):
    daemon_args = ("--claim-linger", "0.2")

    def setUp(self):
        self.daemon = Daemon(*self.daemon_args)
        self.addCleanup(self.stop_daemon)

    def stop_daemon(self):
        if self.daemon.process.poll() is None:
            self.daemon.process.kill()
            self.daemon.process.wait()

    def device_to(self, client, name):
        """Puts the daemon's device into a pose and waits for the client to hear it."""
        if client.request("get")["state"]["device"] == name:
            return
        self.daemon.pose(name)
        client.next_event(lambda e: e["topic"] == "device" and e["to"] == name)


class Protocol(DaemonCase):
    def test_hello_first_with_the_whole_state(self):
        client = self.daemon.client()
        hello = client.hello
        self.assertEqual((hello["type"], hello["protocol"]), ("hello", 1))
        self.assertTrue(hello["server"].startswith("orientd "))
        self.assertEqual(set(hello["state"]), {"device", "interface", "sensor", "locked", "sensorName", "dbus", "hinge", "mode",
                                                 "rate", "faults", "tilt", "gyroscope", "light", "proximity",
                                                 "heading"})
        self.assertEqual(hello["state"]["faults"], [])
        self.assertIsNone(hello["state"]["tilt"], "no reading has classified the tilt yet")
        self.assertEqual(hello["state"]["device"], "unknown")
        self.assertEqual(hello["state"]["sensor"], "idle")
        self.assertEqual(client.request("get")["state"], hello["state"])

    def test_events_in_order_and_seq_grows_by_one_per_change(self):
        client = self.daemon.client()
        client.request("subscribe", topics=["device", "interface", "sensor"])
        self.daemon.pose("portrait")
        self.daemon.pose("landscapeLeft")
        seen = [client.next_event() for _ in range(4)]
        # sensor idle->active, device unknown->portrait, device portrait->landscapeLeft, interface ->landscapeRight
        self.assertEqual([(e["topic"], e.get("to")) for e in seen],
                         [("sensor", "active"), ("device", "portrait"), ("device", "landscapeLeft"), ("interface", "landscapeRight")])
        seqs = [e["seq"] for e in seen]
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + 4)))
        interface = seen[3]
        self.assertEqual((interface["from"], interface["rotationDegrees"], interface["deltaDegrees"], interface["transform"]),
                         ("portrait", 90, 90, [0, 1, -1, 0, 0, 0]))
        self.assertEqual(interface["state"]["device"], "landscapeLeft")
        self.assertEqual(interface["state"]["interface"], "landscapeRight")
        self.assertGreater(seen[2]["time"], 0)

    def test_a_sensor_that_falls_silent_makes_the_orientation_unknown_after_the_timeout(self):
        """The silence alarm: a timer the sensor's thread moves on with every sample, which goes off
        only when no sample came for the detector's silence timeout (2 s)."""
        client = self.daemon.client()
        client.request("subscribe", topics=["device"])
        self.daemon.pose("landscapeLeft", samples=20)
        client.next_event(lambda e: e["topic"] == "device" and e["to"] == "landscapeLeft")
        last_sample = self.daemon.start + self.daemon.last_t
        unknown = client.next_event(lambda e: e["topic"] == "device", timeout=8)
        self.assertEqual(unknown["to"], "unknown")
        self.assertGreaterEqual(time.monotonic() - last_sample, 1.9, "not before the timeout")
        self.daemon.pose("portrait")
        self.assertEqual(client.next_event(lambda e: e["topic"] == "device", timeout=8)["to"], "portrait")

    def test_claims_open_and_close_the_sensor_nestably(self):
        watcher = self.daemon.client()
        watcher.request("subscribe", topics=["sensor"])  # the sensor topic alone claims nothing
        self.assertEqual(watcher.request("get")["state"]["sensor"], "idle")
        a = self.daemon.client()
        a.request("subscribe", topics=["device"])
        watcher.next_event(lambda e: e["topic"] == "sensor" and e["to"] == "active")
        a.request("subscribe", topics=["device"])
        a.request("unsubscribe", topics=["device"])  # one claim left
        b = self.daemon.client()
        b.request("subscribe", topics=["interface"])
        b.close()  # a closed connection releases its claims
        self.daemon.pose("portrait")
        a.next_event(lambda e: e["topic"] == "device")  # still sampling
        self.assertEqual(watcher.request("get")["state"]["sensor"], "active")
        a.request("unsubscribe", topics=["device"])
        watcher.next_event(lambda e: e["topic"] == "sensor" and e["to"] == "idle", timeout=3)

    def test_events_follow_subscriptions_exactly(self):
        keeper = self.daemon.client()
        keeper.request("subscribe", topics=["device"])  # keeps the sensor claimed throughout
        a = self.daemon.client()
        a.request("subscribe", topics=["device", "interface"])
        a.request("subscribe", topics=["device"])  # nested: two unsubscribes end it
        gone = self.daemon.client()
        gone.request("subscribe", topics=["device"])
        gone.close()
        # (pose, whether `a` unsubscribes from device first, whether it then hears the change)
        for pose, unsubscribe_first, a_hears_device in [("portrait", False, True), ("landscapeLeft", True, True),
                                                        ("portrait", True, False)]:
            if unsubscribe_first:
                a.request("unsubscribe", topics=["device"])
            a.events.clear()
            self.daemon.pose(pose)
            keeper.next_event(lambda e: e["topic"] == "device" and e["to"] == pose)
            # Anything sent to `a` for this change precedes the reply to a later request.
            a.request("get")
            device_events = [e["to"] for e in a.events if e["topic"] == "device"]
            self.assertEqual(device_events, [pose] if a_hears_device else [], f"a's device events for {pose}")
        self.assertTrue(any(e["topic"] == "interface" for e in a.events), "a still hears the interface topic")

    def test_malformed_requests_get_errors_and_the_connection_stays(self):
        client = self.daemon.client()
        cases = [
            (b"this is not json\n", None, "bad-request"),
            (b"[1, 2]\n", None, "bad-request"),
            (b'{"op": "get"}\n', None, "bad-request"),
            (b'{"id": [1], "op": "get"}\n', None, "bad-request"),
            (b'{"id": 7}\n', 7, "bad-request"),
            (b'{"id": 8, "op": 3}\n', 8, "bad-request"),
            (b'{"id": "x", "op": "explode"}\n', "x", "unknown-op"),
            (b'{"id": 9, "op": "subscribe", "topics": "device"}\n', 9, "bad-request"),
            (b'{"id": 10, "op": "subscribe", "topics": ["weather"]}\n', 10, "bad-request"),
            (b'{"id": 11, "op": "lock"}\n', 11, "bad-request"),
            (b'{"id": 12, "op": "scene.push", "node": {"kind": "scene", "id": "A"}}\n', 12, "no-session"),
            (b'\xff\xfe{"id": 13}\n', None, "bad-request"),
        ]
        for raw, expected_id, code in cases:
            with self.subTest(raw=raw):
                client.send_raw(raw)
                reply = client.receive()
                self.assertEqual((reply["type"], reply["ok"], reply["id"], reply["error"]["code"]), ("reply", False, expected_id, code))
                self.assertTrue(reply["error"]["message"])
        self.assertIn("topics[0]", json.dumps(client.request("subscribe", topics=["weather"])))
        self.assertTrue(client.request("get")["ok"])

    def test_an_over_long_line_is_refused_and_closes_that_connection_only(self):
        other = self.daemon.client()
        client = self.daemon.client()
        client.send_raw(b'{"id": 1, "op": "get", "pad": "' + b"x" * 70000 + b'"}\n')
        reply = client.receive()
        self.assertEqual(reply["error"]["code"], "line-too-long")
        self.assertIsNone(client.receive())  # closed
        self.assertTrue(other.request("get")["ok"])

    def test_two_hundred_clients_at_once(self):
        clients = [self.daemon.client() for _ in range(200)]
        for client in clients:
            client.request("subscribe", topics=["device"])
        self.daemon.pose("landscapeRight")
        for client in clients:
            self.assertEqual(client.next_event(lambda e: e["topic"] == "device")["to"], "landscapeRight")


class Tilt(DaemonCase):
    def test_the_state_has_the_screens_tilt_in_physical_words(self):
        client = self.daemon.client()
        client.request("subscribe", topics=["device"])
        self.device_to(client, "portrait")
        self.assertEqual(client.request("get")["state"]["tilt"], "vertical")
        # Screen to the sky: faceUp here (net.hadess.SensorProxy says face-down, the incumbent's sign).
        self.device_to(client, "faceUp")
        self.assertEqual(client.request("get")["state"]["tilt"], "faceUp")


class SlowClients(DaemonCase):
    daemon_args = ("--claim-linger", "0.2", "--stall-timeout", "2")

    def test_a_client_that_stops_reading_neither_delays_others_nor_stays_forever(self):
        stalled = self.daemon.client()
        stalled.request("subscribe", topics=["device", "interface"])
        reader = self.daemon.client()
        reader.request("subscribe", topics=["device", "interface"])
        seqs = []
        heard = threading.Condition()

        def read_everything():  # the healthy client reads all the time, on its own thread
            while True:
                event = reader.next_event(timeout=30)
                with heard:
                    seqs.append(event["seq"])
                    heard.notify()
                if event["topic"] == "device" and event["to"] == "faceUp":
                    return

        thread = threading.Thread(target=read_everything)
        thread.start()
        # Far more events than the stalled client's socket buffers hold, then a distinct last pose.
        # Each turn is two events (device, interface). Every 100 turns the writer waits until the
        # reader has heard them: a reader that cannot keep up is coalesced by design, and this
        # reader shares Python's interpreter lock with the writer, which could starve it.
        for k in range(1500):
            self.daemon.pose("portrait" if k % 2 else "landscapeLeft", samples=4)
            if k % 100 == 99:
                with heard:
                    self.assertTrue(heard.wait_for(lambda: len(seqs) >= 2 * (k + 1) - 2, timeout=30),
                                    f"the healthy client heard {len(seqs)} events of {2 * (k + 1)}")
        self.daemon.pose("faceUp")
        thread.join(timeout=60)
        self.assertFalse(thread.is_alive(), "the healthy client did not get the last change")
        # The reader heard every change, each seq once and in order, while the other client stalled.
        self.assertGreater(len(seqs), 2000)
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + len(seqs))))
        self.daemon.wait_for_log("client stalled: disconnecting", timeout=10)
        received = 0
        while stalled.receive(timeout=10) is not None:  # what was already sent, then EOF
            received += 1
        self.assertLess(received, len(seqs))

    def test_a_client_that_reads_late_gets_the_newest_state_and_sees_the_skip(self):
        late = self.daemon.client()
        late.request("subscribe", topics=["device"])
        reader = self.daemon.client()
        reader.request("subscribe", topics=["device"])
        for k in range(800):
            self.daemon.pose("portrait" if k % 2 else "landscapeLeft", samples=4)
        # A pose that occurs once marks the last change (a portrait with seq ≥ 800 need not be it).
        self.daemon.pose("faceUp")
        final = reader.next_event(lambda e: e["topic"] == "device" and e["to"] == "faceUp", timeout=15)
        seqs = []
        while True:
            event = late.next_event(lambda e: e["topic"] == "device", timeout=10)
            seqs.append(event["seq"])
            if event["seq"] >= final["seq"]:
                break
        self.assertEqual(seqs, sorted(seqs))
        self.assertTrue(any(b - a > 1 for a, b in zip(seqs, seqs[1:])), "no skip was visible in seq")
        self.assertEqual(event["state"]["device"], "faceUp")


class Sessions(DaemonCase):
    def vectors(self):
        with open(VECTORS) as handle:
            vectors = json.load(handle)["vectors"]
        usable = []
        for vector in vectors:
            devices = [vector["initial"]["deviceOrientation"]] + [s["action"]["value"] for s in vector["steps"] if s["action"]["type"] == "deviceOrientation"]
            if "unknown" in devices or vector["initial"].get("lock") or any(s["action"]["type"] == "setLock" for s in vector["steps"]):
                continue  # unknown needs 2 s of silence; the lock is the daemon's, tested below
            usable.append(vector)
        return usable

    def test_a_session_per_connection_reproduces_the_resolver_vectors(self):
        watcher = self.daemon.client()
        watcher.request("subscribe", topics=["device"])
        vectors = self.vectors()
        self.assertGreaterEqual(len(vectors), 25)
        for vector in vectors:
            with self.subTest(vector=vector["id"]):
                self.device_to(watcher, vector["initial"]["deviceOrientation"])
                client = self.daemon.client()
                opened = client.request("session.open", initial=vector["initial"])
                self.assertTrue(opened["ok"], opened)
                self.assertEqual(opened["interface"], vector["initial"]["interfaceOrientation"])
                for index, step in enumerate(vector["steps"]):
                    action, expect = step["action"], step["expect"]
                    if action["type"] == "deviceOrientation":
                        before = self.daemon_device(watcher)
                        if action["value"] != before:
                            self.daemon.pose(action["value"])
                            watcher.next_event(lambda e: e["topic"] == "device" and e["to"] == action["value"])
                        state = client.request("session.get")
                        session_events = [e for e in client.events if e["topic"] == "session"]
                        client.events.clear()
                        events = [e for e in session_events if "from" in e]
                        errors = [e["error"] for e in session_events if "error" in e]
                        error = {"code": errors[0]["code"], "reason": errors[0]["reason"]} if errors else None
                    else:
                        fields = {("scene" if k == "id" else k): v for k, v in action.items() if k != "type"}
                        reply = client.request(SCENE_OPS[action["type"]], **fields)
                        client.events = [e for e in client.events if e["topic"] != "session"]
                        state = reply if reply["ok"] else client.request("session.get")
                        events = [reply["change"]] if reply["ok"] and reply["change"] else []
                        error = None if reply["ok"] else {"code": reply["error"]["code"], "reason": reply["error"]["reason"]}
                    actual = {"interface": state["interface"], "effectiveDevice": state["effectiveDevice"], "decider": state["decider"],
                              "events": [{k: e[k] for k in ("from", "to", "rotationDegrees", "deltaDegrees", "transform")} for e in events],
                              "error": error}
                    self.assertEqual(actual, {k: expect[k] for k in actual}, f"step {index}: {action}")
                client.close()

    def daemon_device(self, watcher):
        return watcher.request("get")["state"]["device"]

    def test_session_events_go_to_their_connection_only_and_sessions_end_with_it(self):
        watcher = self.daemon.client()
        watcher.request("subscribe", topics=["device"])
        self.device_to(watcher, "portrait")
        a, b = self.daemon.client(), self.daemon.client()
        a.request("session.open")
        self.assertEqual(a.request("session.open")["error"]["code"], "session-exists")
        self.daemon.pose("landscapeRight")
        event = a.next_event(lambda e: e["topic"] == "session")
        self.assertEqual((event["to"], event["cause"], event["sessionSeq"]), ("landscapeLeft", "deviceOrientation", 1))
        self.assertFalse(any(e["topic"] == "session" for e in b.events))
        self.assertEqual(b.request("session.get")["error"]["code"], "no-session")

    def test_rejections_carry_the_resolver_error(self):
        client = self.daemon.client()
        client.request("session.open", initial={"deviceOrientation": "portrait", "interfaceOrientation": "portrait",
                                                 "root": {"kind": "scene", "id": "A"}})
        reply = client.request("scene.present", node={"kind": "scene", "id": "L", "supported": ["landscapeLeft"]})
        self.assertEqual((reply["ok"], reply["error"]["code"], reply["error"]["reason"]),
                         (False, "invalidInterfaceOrientation", "preferredNotSupported"))
        reply = client.request("scene.requestGeometryUpdate", mask=[])
        self.assertEqual(reply["error"]["code"], "geometryRequestUnsupported")
        reply = client.request("scene.push", node={"kind": "scene"})
        self.assertEqual(reply["error"]["code"], "bad-request")
        self.assertIn("node.id", reply["error"]["message"])

    def test_session_size_is_limited(self):
        client = self.daemon.client()
        client.request("session.open", initial={"deviceOrientation": "portrait", "interfaceOrientation": "portrait",
                                                 "root": {"kind": "navigation", "id": "nav", "delegatesToChild": True,
                                                          "stack": [{"kind": "scene", "id": "A"}]}})
        big = {"kind": "navigation", "id": "n", "stack": [{"kind": "scene", "id": f"s{k}"} for k in range(300)]}
        self.assertEqual(client.request("scene.push", node=big)["error"]["code"], "limit-exceeded")


class MaxClients(DaemonCase):
    daemon_args = ("--max-clients", "3")

    def first_message(self):
        sock = socket.socket(socket.AF_UNIX)
        sock.settimeout(5)
        sock.connect(self.daemon.socket_path)
        self.addCleanup(sock.close)
        return sock, json.loads(sock.makefile("r").readline())

    def test_beyond_the_maximum_a_client_is_refused_and_closed_and_places_come_back(self):
        held = [self.first_message() for _ in range(3)]
        self.assertTrue(all(message["type"] == "hello" for _, message in held))
        refused, message = self.first_message()
        self.assertEqual((message["type"], message["id"], message["error"]["code"]), ("reply", None, "too-many-clients"))
        self.assertEqual(refused.recv(100), b"")  # closed by the daemon
        held.pop()[0].close()
        # Clients that leave at once, some before their hello could be written, give their place
        # back too (a hello that found its client gone once closed the channel before the daemon
        # kept the connection, and the place was lost for good).
        for index in range(50):
            sock = socket.socket(socket.AF_UNIX)
            sock.connect(self.daemon.socket_path)
            if index % 2:
                try:
                    sock.sendall(b'{"id":1,"op":"subscribe","topics":["device"]}\n')
                except (BrokenPipeError, ConnectionResetError):
                    pass  # refused and closed already: the place of a client that left is not back yet
            sock.close()
        # The daemon learns of the closes on its own loop: a place is free once a hello comes.
        deadline = time.monotonic() + 10
        while True:
            sock, message = self.first_message()
            if message["type"] == "hello" or time.monotonic() > deadline:
                break
            sock.close()
        self.assertEqual(message["type"], "hello")


@changes_user
class Permissions(DaemonCase):
    daemon_args = ("--control-group", "users")

    def as_user(self, uid, gid, groups, op_json):
        script = ("import socket,sys,json\ns=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1]);f=s.makefile('rw')\n"
                  "f.readline();f.write(sys.argv[2]+'\\n');f.flush();print(f.readline())")
        result = subprocess.run(as_another_user(self, uid, gid, groups) + [sys.executable, "-c", script, self.daemon.socket_path, json.dumps(op_json)],
                                capture_output=True, text=True, timeout=10)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def test_lock_needs_root_or_the_control_group(self):
        users = subprocess.run(["getent", "group", "users"], capture_output=True, text=True).stdout.split(":")[2]
        refused = self.as_user(65534, 65534, None, {"id": 1, "op": "lock", "on": True})
        self.assertEqual(refused["error"]["code"], "permission-denied")
        refused = self.as_user(65534, 65534, "12345", {"id": 1, "op": "lock", "on": True})  # another group
        self.assertEqual(refused["error"]["code"], "permission-denied")
        self.assertEqual(self.as_user(65534, 65534, None, {"id": 2, "op": "get"})["ok"], True)
        allowed = self.as_user(65534, int(users), None, {"id": 3, "op": "lock", "on": True})  # the control group
        self.assertTrue(allowed["ok"], allowed)
        self.assertTrue(allowed["state"]["locked"])
        refused = self.as_user(65534, 65534, None, {"id": 4, "op": "system.setSupportedOrientations", "mask": ["portrait"]})
        self.assertEqual(refused["error"]["code"], "permission-denied")
        root = self.daemon.client()
        self.assertTrue(root.request("lock", on=False)["ok"])


class Lifecycle(unittest.TestCase):
    def test_sigterm_says_goodbye_to_every_client_and_removes_the_socket(self):
        daemon = Daemon()
        clients = [daemon.client() for _ in range(5)]
        clients[0].request("subscribe", topics=["device"])
        self.assertEqual(daemon.stop(), 0)
        for client in clients:
            message = client.receive()
            while message and message["type"] != "goodbye":
                message = client.receive()
            self.assertEqual(message["type"], "goodbye")
            self.assertIsNone(client.receive())
        self.assertFalse(os.path.exists(daemon.socket_path))

    def test_after_the_goodbye_no_client_is_accepted(self):
        # Shutdown stops accepting, then says goodbye, then closes: a client that came during the
        # goodbye's linger got a hello and was cut without a goodbye.
        daemon = Daemon()
        first = daemon.client()
        daemon.process.send_signal(signal.SIGTERM)
        message = first.receive()
        while message and message["type"] != "goodbye":
            message = first.receive()
        self.assertEqual(message["type"], "goodbye")
        late = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(late.close)
        with self.assertRaises((FileNotFoundError, ConnectionRefusedError), msg="a client accepted after the goodbye"):
            late.connect(daemon.socket_path)
        self.assertEqual(daemon.stop(), 0)

    def test_a_stale_socket_is_replaced_and_a_live_one_refused(self):
        first = Daemon()
        self.addCleanup(lambda: first.process.poll() is None and first.stop())
        second = subprocess.run([ORIENTD, "serve", "--sensor", "stdin", "--socket", first.socket_path],
                                capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
        self.assertEqual(second.returncode, 71)
        self.assertIn("another orientd is listening on " + first.socket_path, second.stderr)
        first.process.kill()  # a crash: the socket file stays behind
        first.process.wait()
        self.assertTrue(os.path.exists(first.socket_path))
        third = Daemon(socket_path=first.socket_path)  # returns once it logs "listening"
        self.addCleanup(third.stop)
        client = Client(first.socket_path)
        self.addCleanup(client.close)
        self.assertEqual(client.hello["type"], "hello")
        self.assertEqual(third.process.poll(), None)

    def test_socket_mode(self):
        daemon = Daemon("--socket-mode", "0660")
        self.addCleanup(daemon.stop)
        self.assertEqual(os.stat(daemon.socket_path).st_mode & 0o777, 0o660)

    def test_the_socket_file_appears_listening_with_its_mode(self):
        # The socket is bound and set up under a temporary name and renamed into place: whoever sees
        # the file can connect at once (a client that saw it between bind and listen was refused), and
        # it has its mode from the start. Each start is watched as closely as Python can.
        for attempt in range(20):
            directory = tempfile.mkdtemp(prefix="orientd-appear-")
            path = os.path.join(directory, "orientd.sock")
            process = subprocess.Popen([ORIENTD, "serve", "--sensor", "stdin", "--socket", path, "--config", "/dev/null",
                                        "--dbus", "off", "--socket-mode", "0660"], stdin=subprocess.PIPE,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.addCleanup(lambda p=process: p.poll() is None and (p.kill(), p.wait()))
            deadline = time.monotonic() + 10
            while not os.path.exists(path):  # nothing to await but the file itself
                self.assertLess(time.monotonic(), deadline, "the socket never appeared")
            mode = os.stat(path).st_mode & 0o777
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.connect(path)  # ConnectionRefusedError fails the test
            connection.close()
            self.assertEqual(mode, 0o660, f"start {attempt + 1}")
            self.assertEqual(os.listdir(directory), ["orientd.sock"], "no temporary name left behind")
            process.terminate()
            self.assertEqual(process.wait(10), 0)


class Orientctl(DaemonCase):
    ORIENTCTL = os.path.join(os.path.dirname(ORIENTD), "orientctl")

    def orientctl(self, *args, timeout=10, user=None):
        """orientctl COMMAND --socket DAEMON'S ARGS..., as root or (user=True) as nobody."""
        command = as_another_user(self) + [reachable_by_everyone(self.ORIENTCTL)] if user else [self.ORIENTCTL]
        return subprocess.run(command + [*args[:1], "--socket", self.daemon.socket_path, *args[1:]],
                              capture_output=True, text=True, timeout=timeout)

    @changes_user
    def test_get_wait_lock_and_follow(self):
        result = self.orientctl("get", "--json")
        self.assertEqual(json.loads(result.stdout)["device"], "unknown")
        waiter = subprocess.Popen([self.ORIENTCTL, "wait", "--socket", self.daemon.socket_path, "landscapeLeft", "--timeout", "10"])
        watcher = self.daemon.client()
        watcher.request("subscribe", topics=["sensor"])
        watcher.next_event(lambda e: e["to"] == "active")  # the waiter's claim started sampling
        self.daemon.pose("landscapeLeft")
        self.assertEqual(waiter.wait(timeout=10), 0)
        self.assertEqual(self.orientctl("wait", "faceDown", "--timeout", "0.3").returncode, 1)
        self.assertEqual(self.orientctl("lock", "on").returncode, 0)
        denied = self.orientctl("lock", "off", user=True)
        self.assertEqual(denied.returncode, 77)
        self.assertIn("permission-denied", denied.stderr)
        self.assertTrue(json.loads(self.orientctl("get", "--json").stdout)["locked"])

    def test_monitor_says_the_goodbye_reason_in_words_and_a_too_long_path_is_explained(self):
        monitor = subprocess.Popen([self.ORIENTCTL, "monitor", "--socket", self.daemon.socket_path],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: monitor.poll() is None and (monitor.kill(), monitor.wait()))
        watcher = self.daemon.client()
        watcher.request("subscribe", topics=["sensor"])
        watcher.next_event(lambda e: e["to"] == "active")  # monitor's subscription started sampling
        self.daemon.stop()
        self.assertEqual(monitor.wait(timeout=10), 69)
        self.assertEqual(monitor.stderr.read(), "orientctl: orientd said goodbye: orientd is shutting down\n")
        far = "/tmp/" + "d" * 120 + "/orientd.sock"
        result = subprocess.run([self.ORIENTCTL, "get", "--socket", far], capture_output=True, text=True, timeout=10)
        self.assertEqual(result.returncode, 69)
        self.assertIn(f"cannot connect to {far}: the path is longer than a socket address holds (107 bytes)", result.stderr)

    def test_follow_passes_values_as_arguments(self):
        output = os.path.join(self.daemon.directory, "follow.txt")
        follower = subprocess.Popen([self.ORIENTCTL, "follow", "--socket", self.daemon.socket_path, "--exec",
                                     f"sh -c 'printf \"%s|%s\\n\" \"$1\" \"$2\" >> {output}' sh {{interface}} '{{degrees}} deg'"],
                                    stderr=subprocess.PIPE)
        self.addCleanup(lambda: (follower.kill(), follower.wait()))
        watcher = self.daemon.client()
        watcher.request("subscribe", topics=["interface"])
        self.daemon.pose("portrait")
        self.daemon.pose("landscapeRight")
        watcher.next_event(lambda e: e["topic"] == "interface" and e["to"] == "landscapeLeft")
        deadline = time.monotonic() + 5
        while True:
            lines = open(output).read().splitlines() if os.path.exists(output) else []
            if "landscapeLeft|-90 deg" in lines or time.monotonic() > deadline:
                break
            time.sleep(0.05)  # the follower writes a file; there is no event to wait on
        self.assertIn("landscapeLeft|-90 deg", lines)

    def test_no_daemon_is_a_friendly_error(self):
        result = subprocess.run([self.ORIENTCTL, "get", "--socket", "/nonexistent/orientd.sock"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 69)
        self.assertIn("is orientd running?", result.stderr)


if __name__ == "__main__":
    unittest.main()


class Configuration(unittest.TestCase):
    def test_the_daemon_reads_its_configuration_file_and_options_override_it(self):
        import tempfile
        directory = tempfile.mkdtemp(prefix="orientd-config-")
        config = os.path.join(directory, "orientd.toml")
        with open(config, "w") as handle:
            handle.write('[session]\nidiom = "phone"\nsupported = ["landscape"]\n[socket]\nmode = "0640"\n')
        daemon = Daemon("--config", config, "--socket-mode", "0600")
        self.addCleanup(daemon.stop)
        self.assertEqual(os.stat(daemon.socket_path).st_mode & 0o777, 0o600)  # the option wins
        self.assertEqual(daemon.client().hello["state"]["interface"], "landscapeRight")  # landscape only: launched there

    def test_an_invalid_configuration_stops_the_daemon_with_exit_78(self):
        import tempfile
        config = os.path.join(tempfile.mkdtemp(prefix="orientd-config-"), "orientd.toml")
        with open(config, "w") as handle:
            handle.write("[clients]\nmax = 0\n")
        result = subprocess.run([ORIENTD, "serve", "--config", config, "--socket", config + ".sock", "--sensor", "stdin"],
                                capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
        self.assertEqual(result.returncode, 78)
        self.assertIn(f"{config}:2: [clients] max: must be an integer > 0", result.stderr)
