// A Swift process that uses FoundationEssentials (JSON coding), which swift-argument-parser links
// on Linux, so every program built with it carries it: the floor under orientd's own code.
import FoundationEssentials
import Glibc

struct Probe: Codable { var value: Int }
let encoded = try JSONEncoder().encode(Probe(value: 1))
_ = try JSONDecoder().decode(Probe.self, from: encoded)
print("ready")
fflush(nil)
pause()
