"""Qt's QOrientationSensor through Qt Sensors' iio-sensor-proxy backend (the path KWin's screen
rotation takes): prints "start" once the sensor is active, then each reading's orientation name
(TopUp, TopDown, LeftUp, RightUp, FaceUp, FaceDown, Undefined) as it changes."""
import signal
import sys

from PyQt5.QtCore import QCoreApplication, QTimer
from PyQt5.QtSensors import QOrientationReading, QOrientationSensor

NAMES = {getattr(QOrientationReading, name): name for name in
         ("Undefined", "TopUp", "TopDown", "LeftUp", "RightUp", "FaceUp", "FaceDown")}

app = QCoreApplication(sys.argv)
signal.signal(signal.SIGTERM, lambda *_: app.quit())
sensor = QOrientationSensor()
# The backend the iio-sensor-proxy plugin registers; fails when the name is not on the bus.
sensor.setIdentifier(b"iio-sensor-proxy.orientationsensor")


def changed():
    print(NAMES.get(sensor.reading().orientation(), "?"), flush=True)


sensor.readingChanged.connect(changed)
if not sensor.start():
    print("no sensor", flush=True)
    sys.exit(1)
print("start", flush=True)
# Let Python see SIGTERM while Qt's loop runs.
timer = QTimer()
timer.timeout.connect(lambda: None)
timer.start(200)
sys.exit(app.exec_())
