// The smallest Swift process: the runtime and nothing else. `make bench` measures its resident
// memory as the floor under any Swift daemon on the machine.
import Glibc

print("ready")
fflush(nil)
pause()
