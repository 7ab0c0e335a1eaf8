"""orientd's benchmarks beside iio-sensor-proxy (`make bench`): a package whose sections
(comparison.py, kinds.py, power.py) share bench/common.py and bench/peer.py and never import each
other. `python3 -m bench [SECTION]` from the repository's root runs them (bench/__main__.py)."""
