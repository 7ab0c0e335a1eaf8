"""The real orientd daemon on a temporary socket with the stdin mock sensor, and a small protocol-v1
client, for the daemon tests."""
import json
import os
import resource
import select
import socket
import subprocess
import tempfile
import time

from testbed import ORIENTD, assert_in_words, own_state_directory

G = 9.81
POSES = {  # gravity-pointing display frame (detection.md §1)
    "portrait": (0, -G, 0), "portraitUpsideDown": (0, G, 0), "landscapeLeft": (-G, 0, 0),
    "landscapeRight": (G, 0, 0), "faceUp": (0, 0, -G), "faceDown": (0, 0, G),
}


class Daemon:
    """`orientd serve --sensor stdin` on a socket in a fresh directory; poses are written to its stdin."""

    def __init__(self, *args, sensor="stdin", socket_path=None, open_files=None, prefix=(), executable=ORIENTD, **popen):
        """`open_files`: the (soft, hard) RLIMIT_NOFILE the daemon starts with; `prefix`: a command
        that runs it (testbed.as_another_user), with `executable` a copy that user can reach;
        `popen`: more of subprocess.Popen's arguments (env)."""
        self.directory = tempfile.mkdtemp(prefix="orientd-test-")
        os.chmod(self.directory, 0o755)  # reachable by the unprivileged test users too
        self.socket_path = socket_path or os.path.join(self.directory, "orientd.sock")
        popen["env"] = own_state_directory(popen.get("env") or dict(os.environ))
        self.process = subprocess.Popen([*prefix, executable, "serve", "--sensor", sensor, "--socket", self.socket_path, *args],
                                        stdin=subprocess.PIPE, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                        preexec_fn=open_files and (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, open_files)),
                                        **popen)
        self.log = []
        self.partial = b""
        self.start = time.monotonic()
        self.last_t = -1.0
        self.wait_for_log("listening")

    def wait_for_log(self, text, timeout=10, count=1):
        """Reads the daemon's log until `count` lines contain `text`. Raw reads and our own line
        splitting: select() with a buffered readline() would strand lines in Python's buffer."""
        deadline = time.monotonic() + timeout
        descriptor = self.process.stderr.fileno()
        while sum(text in line for line in self.log) < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"orientd did not log {text!r}: {self.log[-10:]}")
            ready, _, _ = select.select([descriptor], [], [], remaining)
            if ready:
                chunk = os.read(descriptor, 65536)
                if not chunk:
                    raise AssertionError(f"orientd exited before logging {text!r}: {self.log[-10:]}")
                *lines, self.partial = (self.partial + chunk).split(b"\n")
                self.log += [line.decode(errors="replace") for line in lines]

    def pose(self, name, samples=8):
        """Writes `samples` readings of a pose, 40 ms apart: ending now, or continuing after the last
        sample when poses come faster than real time (sample times never go backwards)."""
        x, y, z = POSES[name]
        start = max(time.monotonic() - self.start - (samples - 1) * 0.04, self.last_t + 0.04)
        times = [start + k * 0.04 for k in range(samples)]
        self.last_t = times[-1]
        lines = "".join(f"{t:.4f},{x},{y},{z}\n" for t in times)
        self.process.stdin.write(lines.encode())
        self.process.stdin.flush()

    def client(self, **kwargs):
        return Client(self.socket_path, **kwargs)

    def stop(self, sig=15, timeout=10):
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired as timedOut:
            # Where each thread waits is what a hang at exit needs to be found: said before the kill.
            stacks = subprocess.run(["gdb", "-p", str(self.process.pid), "-batch", "-ex", "thread apply all bt"],
                                    capture_output=True, text=True, timeout=60).stdout
            self.process.kill()
            raise AssertionError(f"orientd did not stop within {timeout} s of signal {sig}; its threads:\n{stacks}\n"
                                 f"its log: {self.log[-20:]}") from timedOut
        rest = self.partial + self.process.stderr.read()
        self.log += rest.decode(errors="replace").splitlines()
        assert_in_words(self.log)
        return self.process.returncode


class Client:
    """A protocol-v1 client: one JSON object per line each way."""

    def __init__(self, path, read_hello=True):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""
        self.events = []
        self.next_id = 1
        self.hello = self.receive() if read_hello else None

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, message):
        self.sock.sendall((json.dumps(message) + "\n").encode())

    def receive(self, timeout=10):
        """The next message, or None at EOF."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no message within {timeout} s")
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def request(self, op, **fields):
        """Sends a request; returns its reply, keeping events that arrive meanwhile."""
        request_id = self.next_id
        self.next_id += 1
        self.send({"id": request_id, "op": op, **fields})
        while True:
            message = self.receive()
            if message is None:
                raise AssertionError(f"connection closed before the reply to {op}")
            if message.get("type") == "reply" and message.get("id") == request_id:
                return message
            self.events.append(message)

    def next_event(self, predicate=lambda e: True, timeout=10):
        """The first event (kept or new) for which predicate holds; earlier ones are discarded."""
        deadline = time.monotonic() + timeout
        while True:
            while self.events:
                event = self.events.pop(0)
                if predicate(event):
                    return event
            message = self.receive(timeout=max(0.01, deadline - time.monotonic()))
            if message is None:
                raise AssertionError("connection closed while waiting for an event")
            if message.get("type") == "event":
                self.events.append(message)

    def close(self):
        self.sock.close()
