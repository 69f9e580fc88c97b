#!/usr/bin/env bash
# The whole test suite. First the build every other phase needs:
#   build        GCC, RelWithDebInfo, warnings are errors; installed into build/stage
# then, side by side:
#   format       clang-format check of our sources
#   unit         GoogleTest through ctest
#   clang        Clang build of everything (Release, warnings are errors) with
#                AddressSanitizer and UndefinedBehaviorSanitizer, and its unit tests
# then alone (its sandboxes and containers have deadlines; a build beside it starves them):
#   integration  pytest driving the staged install with the real nono, srt and podman
#                (test files spread over 2 workers)
# and last, once those have ended:
#   mutation     tests/mutation/run.sh: every protection test must fail against a copy of
#                the install with that protection disabled
# Each phase's output goes to build/test-logs/<phase>.log and is printed whole when the
# phase ends, with its duration; a summary ends the run. AB_SKIP=phase,phase skips phases
# (not with CI=true: then nothing may skip itself, and a missing tool is a failure).
# To add a phase: write a function and add one `start_phase NAME function` line below.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${AB_BUILD_DIR:-$repo/build}
# Sandboxes grant /tmp; an install under it would be sandbox-writable and refused.
case "$build" in /tmp/*) build=/var/tmp/agent-boundary-build-$(id -u) ;; esac
stage=$build/stage
logs=$build/test-logs
skip=",${AB_SKIP:-},"
if [ "${CI:-}" = true ] && [ "$skip" != ",," ]; then
  echo "test: AB_SKIP=$AB_SKIP is not allowed with CI=true" >&2; exit 2
fi

elapsed() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
started=$SECONDS
summary=()
fail=0

# -- the phases ---------------------------------------------------------------------------

phase_build() {
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAB_WERROR=ON \
    -DCMAKE_INSTALL_PREFIX="$stage" >/dev/null || return 1
  cmake --build "$build" || return 1
  rm -rf "$stage"
  cmake --install "$build" >/dev/null
}

phase_format() {
  local sources
  mapfile -t sources < <(cd "$repo" && git ls-files '*.cpp' '*.hpp' '*.h')
  (cd "$repo" && clang-format --dry-run --Werror "${sources[@]}") && return 0
  echo "clang-format: run clang-format -i on the files above"
  return 1
}

phase_unit() {
  ctest --test-dir "$build" --output-on-failure -j2
}

# A second compiler catches what GCC lets through (and the reverse); its unit tests run too,
# under the sanitizers (a memory error or undefined behaviour fails them).
phase_clang() {
  if ! command -v clang++ >/dev/null; then
    [ "${CI:-}" = true ] && { echo "clang++ is not installed (CI=true forbids skipping)"; return 1; }
    echo "SKIPPED: clang++ is not installed (apt-get install clang)"; return 0
  fi
  local dir=$build-clang
  CC=clang CXX=clang++ cmake -S "$repo" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DAB_WERROR=ON -DAB_SANITIZE=ON >/dev/null || return 1
  cmake --build "$dir" || return 1
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$dir" --output-on-failure -j2 -LE packaging  # packaging: once, with GCC
}

# pytest-xdist runs the test files on AB_TEST_WORKERS workers (default 2), a file's tests
# on one worker in order: most of the suite's time is spent waiting on sandboxes, agents and
# containers, not computing, and each test has its own world.
phase_integration() {
  local python=python3
  "$python" -c 'import pytest, xdist' 2>/dev/null || python=/usr/bin/python3
  AB_PREFIX="$stage" AB_BUILD_DIR="$build" AB_SOURCE_DIR="$repo" \
    "$python" -m pytest -q -p no:cacheprovider -rs --durations=15 \
    -n "${AB_TEST_WORKERS:-2}" --dist loadfile "$repo/tests/integration"
}

phase_mutation() {
  AB_BUILD_DIR="$build" "$repo/tests/mutation/run.sh"
}

# -- running them -------------------------------------------------------------------------

declare -A phase_pid phase_t0
record() {  # name rc seconds
  local state=ok
  [ "$2" = 0 ] || { state="FAILED (exit $2)"; fail=1; }
  summary+=("$(printf '  %-12s %-18s %s' "$1" "$state" "$(elapsed "$3")")")
  printf '== %s: %s in %s\n' "$1" "$state" "$(elapsed "$3")"
}

skipped() {
  case "$skip" in *",$1,"*) summary+=("$(printf '  %-12s skipped (AB_SKIP)' "$1")"); return 0 ;; esac
  return 1
}

start_phase() {  # name function
  skipped "$1" && return
  "$2" >"$logs/$1.log" 2>&1 &
  phase_pid[$1]=$!
  phase_t0[$1]=$SECONDS
}

# Print each phase's log as it ends; every 60 s say which are still running.
wait_phases() {
  local next=$((SECONDS + 60)) name
  while [ ${#phase_pid[@]} -gt 0 ]; do
    for name in "${!phase_pid[@]}"; do
      kill -0 "${phase_pid[$name]}" 2>/dev/null && continue
      local rc=0
      wait "${phase_pid[$name]}" || rc=$?
      printf '\n== %s\n' "$name"
      cat "$logs/$name.log"
      record "$name" "$rc" $((SECONDS - phase_t0[$name]))
      unset "phase_pid[$name]"
    done
    [ ${#phase_pid[@]} -eq 0 ] && break
    sleep 1
    if [ "$SECONDS" -ge "$next" ]; then
      local running=""
      for name in "${!phase_pid[@]}"; do
        running+=" $name ($(elapsed $((SECONDS - phase_t0[$name]))): $(tail -n 1 "$logs/$name.log" | cut -c1-60))"
      done
      echo "test: still running:$running"
      next=$((SECONDS + 60))
    fi
  done
}

mkdir -p "$build"
rm -rf "$logs"
mkdir -p "$logs"
printf '== build\n'
t0=$SECONDS
phase_build 2>&1 | tee "$logs/build.log"
rc=${PIPESTATUS[0]}
record build "$rc" $((SECONDS - t0))
[ "$rc" = 0 ] || exit 1

# The Clang build runs before the integration tests, not beside them: beside two test
# workers it slowed a devcontainer freeze (`podman exec`) past the hook's 5 s deadline.
start_phase format phase_format
start_phase unit phase_unit
start_phase clang phase_clang
wait_phases
start_phase integration phase_integration
wait_phases
start_phase mutation phase_mutation
wait_phases

printf '\n== summary (%s in all)\n' "$(elapsed $((SECONDS - started)))"
printf '%s\n' "${summary[@]}"
exit $fail
