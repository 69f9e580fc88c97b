#!/usr/bin/env bash
# The whole test suite: build, install into a staging prefix, then
#   1. clang-format check of our sources,
#   2. unit tests (GoogleTest through ctest),
#   3. integration tests (pytest) driving the staged install with the real nono,
#   4. the mutation stage (tests/mutation/run.sh): every protection test must fail against
#      a copy of the install with that protection disabled.
# With CI=true nothing may skip itself: a missing tool or kernel feature is a failure.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${AB_BUILD_DIR:-$repo/build}
# Sandboxes grant /tmp; an install under it would be sandbox-writable and refused.
case "$build" in /tmp/*) build=/var/tmp/agent-boundary-build-$(id -u) ;; esac
stage=$build/stage

step() { printf '\n== %s\n' "$*"; }
fail=0

step "build"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_INSTALL_PREFIX="$stage" >/dev/null || exit 1
cmake --build "$build" || exit 1
rm -rf "$stage"
cmake --install "$build" >/dev/null || exit 1

step "format"
mapfile -t sources < <(cd "$repo" && git ls-files '*.cpp' '*.hpp' '*.h')
if ! (cd "$repo" && clang-format --dry-run --Werror "${sources[@]}"); then
  echo "clang-format: run clang-format -i on the files above"; fail=1
fi

step "unit tests"
ctest --test-dir "$build" --output-on-failure -j2 || fail=1

step "integration tests"
python=python3
"$python" -c 'import pytest' 2>/dev/null || python=/usr/bin/python3
AB_PREFIX="$stage" AB_BUILD_DIR="$build" AB_SOURCE_DIR="$repo" \
  "$python" -m pytest -q -rs -p no:cacheprovider "$repo/tests/integration" || fail=1

step "mutation"
AB_BUILD_DIR="$build" "$repo/tests/mutation/run.sh" || fail=1

exit $fail
