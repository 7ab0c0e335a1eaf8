"""`python3 -m bench [SECTION]`, from the repository's root, under umockdev-wrapper (make bench):
every section in turn, or the one named. Each writes its part of docs/benchmarks.md."""
import sys

SECTIONS = {
    "comparison": "orientd against iio-sensor-proxy: detection, reaction, fan-out, cost, memory, start-up",
    "convertibles": "two sensors and the hinge corpus",
    "kinds": "light and proximity against iio-sensor-proxy",
    "power": "adaptive pacing against the fixed rate and iio-sensor-proxy",
    "claims": "D-Bus claims answered under a flood, and the desktop's claim meanwhile",
    "people": "real people at the waist and simulated pockets, beside a plain fused detector",
}


def run(section):
    # Imported only when run: a section's module loads the GI bindings and the testbed.
    if section == "comparison":
        from bench import comparison
        comparison.report()
    elif section == "convertibles":
        from bench import comparison
        comparison.convertibles_section()
    elif section == "kinds":
        from bench import kinds
        kinds.kinds_section()
    elif section == "power":
        from bench import power
        power.power_section()
    elif section == "claims":
        from bench import claims
        claims.claims_section()
    elif section == "people":
        from bench import people
        people.people_section()


def main(arguments):
    if arguments in (["-h"], ["--help"]):
        print(__doc__)
        for name, what in SECTIONS.items():
            print(f"  {name:13} {what}")
        return 0
    if len(arguments) > 1 or (arguments and arguments[0] not in SECTIONS):
        print(f"python3 -m bench: no section {' '.join(arguments)!r}; the sections are {', '.join(SECTIONS)}",
              file=sys.stderr)
        return 64
    for section in arguments or list(SECTIONS):
        print(f"bench: {section}: {SECTIONS[section]}", file=sys.stderr, flush=True)
        run(section)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
