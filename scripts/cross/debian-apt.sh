# Sourced by scripts/cross/cross-build, cross-deb, debian-root and scripts/package/test-source (not
# run): the Debian archive this machine uses, and apt on another release and architecture with lists
# and downloads of its own under $cache, nothing of this machine's apt state touched. The archive may
# be a snapshot whose Release files have expired: their dates are not checked.
mirror=$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
mirror=${ORIENTD_DEBIAN_MIRROR:-${mirror:-http://deb.debian.org/debian}}

apt_for() {  # apt_for SUITE ARCH ARGS...   (downloads go to $cache/apt-SUITE-ARCH/archives)
  local suite=$1 architecture=$2 dir="$cache/apt-$1-$2"; shift 2
  mkdir -p "$dir/lists/partial" "$dir/archives/partial"
  echo "deb [arch=$architecture] $mirror $suite main" > "$dir/sources.list"
  touch "$dir/status"
  apt-get -o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$dir/lists" \
    -o Dir::Cache="$dir" -o Dir::Cache::archives="$dir/archives" -o Dir::State::status="$dir/status" -o APT::Architecture="$architecture" \
    -o APT::Architectures::="$architecture" -o Debug::NoLocking=1 -o Acquire::Check-Valid-Until=false -qq "$@"
}

# The tree's source files, NUL-separated, relative to the repository's root (the current folder):
# what git tracks, as it is in the work tree; in an unpacked source package (make source-test), which
# has no .git of its own (even when it lies inside another checkout), every file but build output.
source_files() {
  if [[ -e .git ]]; then
    git ls-files -z
  else
    find . \( -path './.build*' -o -path ./dist -o -path ./debian/orientd -o -path ./debian/.debhelper \) -prune \
      -o -type f -printf '%P\0'
  fi
}
