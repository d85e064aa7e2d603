# Shared helpers of the project's scripts. Source it; do not run it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PRESETS=(default asan tsan fuzz coverage mutants)
JOBS="${JOBS:-$(nproc)}"

# Debian packages the build and every campaign need.
PACKAGES=(cmake make g++ clang-14 llvm-14 libclang-rt-14-dev libgtest-dev libgmock-dev
  libbenchmark-dev librapidcheck-dev libboost-dev libboost-fiber-dev libboost-context-dev
  libfuzzer-14-dev libzmq3-dev python3 pkg-config rsync ccache patch nats-server libnats-dev
  redis-server redis-sentinel libhiredis-dev chromium emscripten libfuse3-dev fuse3
  nlohmann-json3-dev rabbitmq-server python3-pika)

# ccache, when present, for every build: paths under the project are rewritten relative to
# each compile's directory and the directory is left out of the hash, so the planted-bug
# scratch tree (build/mutants-work/src, built after build/default) reuses default's objects.
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
  CCACHE_LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
else
  CCACHE_LAUNCHER=()
fi

stage() { printf '\n==> [%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 2; }

# Installs what is missing (idempotent: apt-get runs only when a package is absent).
ensure_deps() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    stage "installing ${missing[*]}"
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    # Packages with a service (rabbitmq-server and its epmd) must not start one: the kit runs
    # its own nodes on loopback. A policy-rc.d of our own says so during the install, unless
    # the machine has one.
    local policy=/usr/sbin/policy-rc.d ours=""
    if [[ ! -e $policy ]]; then
      printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 755 "$policy" && ours=1
    fi
    local installed=0
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null || installed=$?
    if [[ -n "$ours" ]]; then $sudo rm -f "$policy"; fi
    ((installed == 0)) || die "apt-get install ${missing[*]} failed (status $installed)"
  fi
}

# Fails with one line unless the preset exists and its compiler is installed.
check_preset() {
  local p="$1" ok=""
  for known in "${PRESETS[@]}"; do [[ "$p" == "$known" ]] && ok=1; done
  [[ -n "$ok" ]] || die "unknown preset '$p'; presets: ${PRESETS[*]}"
  local cxx=g++
  [[ "$p" != default ]] && cxx=clang++-14
  command -v "$cxx" >/dev/null || die "preset '$p' needs $cxx: apt-get install -y ${cxx%%++*}"
}

# Configures and builds one preset (only the given targets, if any), quietly unless it
# fails; CONFIGURE_ARGS (an array, may be unset) go to the configure step.
# Usage: build_preset PRESET [TARGET...]
build_preset() {
  local p="$1"
  shift
  check_preset "$p"
  local targets=()
  (($#)) && targets=(--target "$@")
  [[ -v CONFIGURE_ARGS ]] || local CONFIGURE_ARGS=()
  stage "configure + build '$p' (build/$p)${1:+, targets: $*}"
  local log="$ROOT/build/$p.build.log"
  mkdir -p "$ROOT/build"
  if ! (cd "$ROOT" && cmake --preset "$p" "${CCACHE_LAUNCHER[@]}" "${CONFIGURE_ARGS[@]}" >"$log" 2>&1 &&
    cmake --build --preset "$p" -j "$JOBS" "${targets[@]}" >>"$log" 2>&1); then
    tail -50 "$log"
    die "build of preset '$p' failed (full log: $log)"
  fi
  echo "    built ($(grep -c 'Built target' "$log") targets)"
}

# The test executables of tests/ (the real-thread suites), for builds that run only them.
test_targets() {
  grep -oE 'broker_add_gtest\(NAME [A-Za-z0-9_]+' "$ROOT/tests/CMakeLists.txt" | awk '{print $2}'
}
