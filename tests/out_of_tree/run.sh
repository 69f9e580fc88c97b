#!/usr/bin/env bash
# ctest out_of_tree_plugin: an outside author's plugin, built only against the installed
# package, loads in the installed agent-boundary.
#
#   run.sh <source-dir> <build-dir> [cmake] [generator] [c++ compiler]
#
# 1. installs the already-built <build-dir> into a fresh prefix under /var/tmp;
# 2. configures tests/out_of_tree with -DCMAKE_PREFIX_PATH=<prefix>, builds and installs it
#    (the helper installs into ${AGENT_BOUNDARY_PLUGIN_DIR});
# 3. runs <prefix>/bin/agent-boundary plugins and expects `backend toy` without REFUSED;
# 4. expects find_package(AgentBoundary 0.2) to fail against the same prefix.
# Exits non-zero with a message naming the failed step; removes the prefix in any case.
set -euo pipefail

fail() {
  echo "out_of_tree_plugin: FAIL: $*" >&2
  exit 1
}

[[ $# -ge 2 ]] || fail "usage: $0 <source-dir> <build-dir> [cmake] [generator] [c++ compiler]"
src=$1
build=$2
cmake=${3:-cmake}
generator=${4:-Ninja}
cxx=${5:-}
[[ -f $src/tests/out_of_tree/CMakeLists.txt ]] || fail "$src is not the agent-boundary source dir"
[[ -f $build/CMakeCache.txt ]] || fail "$build is not a configured build dir"
[[ -x $build/bin/agent-boundary ]] || fail "$build/bin/agent-boundary is not built"

# Directories cmake --install creates must not be group-writable, or the loader refuses
# everything in them.
umask 022
tmp=$(mktemp -d /var/tmp/ab-out-of-tree.XXXXXX)
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
chmod 0755 "$tmp"
prefix=$tmp/prefix
log=$tmp/log
mkdir -p "$log"

# Runs a step quietly; on failure prints its output and fails.
step() {
  local name=$1
  shift
  if ! "$@" >"$log/$name" 2>&1; then
    cat "$log/$name" >&2
    fail "$name failed: $*"
  fi
}

compiler_args=()
[[ -n $cxx ]] && compiler_args=(-DCMAKE_CXX_COMPILER="$cxx")

echo "== install $build into $prefix"
step install-core "$cmake" --install "$build" --prefix "$prefix"
[[ -x $prefix/bin/agent-boundary ]] || fail "no $prefix/bin/agent-boundary after install"
config=$(find "$prefix" -name AgentBoundaryConfig.cmake -print -quit)
[[ -n $config ]] || fail "no AgentBoundaryConfig.cmake installed under $prefix"

echo "== configure, build and install the out-of-tree toy backend"
step configure-toy "$cmake" -S "$src/tests/out_of_tree" -B "$tmp/toy-build" -G "$generator" \
  "${compiler_args[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
found=$(sed -n 's/^AgentBoundary_DIR:PATH=//p' "$tmp/toy-build/CMakeCache.txt")
[[ $found == "$prefix"/* ]] || fail "find_package(AgentBoundary) used $found, not the package in $prefix"
step build-toy "$cmake" --build "$tmp/toy-build"
step install-toy "$cmake" --install "$tmp/toy-build"
toy=$(find "$prefix" -name backend-toy.so -print -quit)
[[ -n $toy ]] || fail "backend-toy.so was not installed under $prefix"
plugin_dir=$(dirname "$toy")

exports=$(nm -D --defined-only "$toy" | awk '{print $NF}')
[[ $exports == ab_plugin_entry_v1 ]] ||
  fail "backend-toy.so must export only ab_plugin_entry_v1, exports: $(echo $exports)"

echo "== $prefix/bin/agent-boundary plugins"
set +e
out=$("$prefix/bin/agent-boundary" plugins 2>&1)
rc=$?
set -e
echo "$out"
grep -qx "plugin dir: $plugin_dir" <<<"$out" ||
  fail "agent-boundary looks for plugins elsewhere than $plugin_dir, where the package installs them"
toy_line=$(grep -E '^backend toy( |$)' <<<"$out" || true)
[[ -n $toy_line ]] || fail "\`agent-boundary plugins\` does not list \`backend toy\`"
[[ $toy_line != *REFUSED* ]] || fail "the installed agent-boundary refuses the toy backend: $toy_line"
[[ $toy_line == "backend toy 0.0.1 (ABI "* ]] || fail "unexpected line for the toy backend: $toy_line"
! grep -q REFUSED <<<"$out" || fail "\`agent-boundary plugins\` refuses an installed plugin"
[[ $rc -eq 0 ]] || fail "\`agent-boundary plugins\` exited with $rc"

echo "== find_package(AgentBoundary 0.2) must fail"
mkdir -p "$tmp/too-new"
cat >"$tmp/too-new/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(TooNew LANGUAGES CXX)
find_package(AgentBoundary 0.2 REQUIRED)
CMAKE
if "$cmake" -S "$tmp/too-new" -B "$tmp/too-new-build" -G "$generator" "${compiler_args[@]}" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$log/too-new" 2>&1; then
  cat "$log/too-new" >&2
  fail "find_package(AgentBoundary 0.2) accepted the installed package"
fi
grep -q "considered but not accepted" "$log/too-new" || {
  cat "$log/too-new" >&2
  fail "find_package(AgentBoundary 0.2) failed, but not because of the version"
}

echo "out_of_tree_plugin: OK"
