#!/usr/bin/env bash
# The mutation stage: every protection test must be able to fail. For each mutant of
# tests/mutation/mutants.tsv (a copy of the staged install, or of the tests' source dir, with
# one protection deliberately disabled) run the integration tests marked
# @pytest.mark.protects("<its protection>") against it; each of them must FAIL. A selected
# test that passes is a hole: it would not notice that protection being gone. Prints the
# mutant/test matrix; exit 1 on any hole, on a mutant without tests, on a marked protection
# without a mutant, or when a mutant cannot be built.
#
#   AB_BUILD_DIR (default <repo>/build, staged install in $AB_BUILD_DIR/stage)
#   AB_WORLD_BASE (the integration worlds' base), AB_MUTANTS="name name" (a subset)
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${AB_BUILD_DIR:-$repo/build}
stage=$build/stage
out=$build/mutants
table=$repo/tests/mutation/mutants.tsv
python=python3
"$python" -c 'import pytest, xdist' 2>/dev/null || python=/usr/bin/python3

[ -x "$stage/bin/agent-boundary" ] || { echo "mutation: no staged install at $stage"; exit 1; }
cmake --build "$build" --target mutants >"$out.build.log" 2>&1 || {
  cat "$out.build.log"; echo "mutation: building the mutants failed"; exit 1; }

matrix=$out/matrix.tsv
mkdir -p "$out"
: >"$matrix"
fail=0

# Every protection a test is marked with has a mutant (else its tests are never shown able
# to fail): the marks collected, against the table's PROTECTS column.
if [ -z "${AB_MUTANTS:-}" ]; then
  "$python" -m pytest -q --collect-only -p no:cacheprovider --protections-out="$out/marked.txt" \
    "$repo/tests/integration" >"$out/collect.log" 2>&1 || {
    cat "$out/collect.log"; echo "mutation: collecting the tests' protections failed"; exit 1; }
  awk '!/^#/ && NF { n = split($2, p, ","); for (i = 1; i <= n; i++) print p[i] }' "$table" |
    sort -u >"$out/mutated.txt"
  unmutated=$(comm -23 "$out/marked.txt" "$out/mutated.txt")
  if [ -n "$unmutated" ]; then
    echo "mutation: FAILED: tests are marked with protections no mutant in mutants.tsv disables:"
    echo "$unmutated" | sed 's/^/  /'
    fail=1
  fi
fi
while read -r name protects kind arg1 rest; do
  case "$name" in '' | \#*) continue ;; esac
  if [ -n "${AB_MUTANTS:-}" ] && [[ " $AB_MUTANTS " != *" $name "* ]]; then continue; fi
  dir=$out/$name
  rm -rf "$dir"
  mkdir -p "$dir"
  mstage=$dir/stage
  cp -a "$stage" "$mstage"
  src=$repo
  menv='{}'
  case "$kind" in
    compile)
      case "$rest" in
        agent-boundary) dest=bin/agent-boundary ;;
        probe) dest=libexec/agent-boundary/probe ;;
        backend-* | harness-*)
          dest=$(cd "$mstage" && echo lib*/agent-boundary/plugins)/$rest.so
          rest=$rest.so ;;
        *) echo "mutation: $name: unknown executable $rest"; fail=1; continue ;;
      esac
      [ -e "$mstage/$dest" ] || { echo "mutation: $name: the install has no $dest"; fail=1; continue; }
      install -m 0755 "$out/bin/$name/$rest" "$mstage/$dest" ;;
    env)
      menv=$("$python" -c 'import json, sys; print(json.dumps({sys.argv[1]: sys.argv[2]}))' \
        "$arg1" "$repo/tests/mutation/stand-ins/$rest") ;;
    source-sed)
      src=$dir/src
      mkdir -p "$src"
      cp -a "$repo/profiles" "$repo/claude-plugin" "$repo/.claude-plugin" "$src/"
      sed -E -i "$rest" "$src/$arg1"
      if cmp -s "$repo/$arg1" "$src/$arg1"; then
        echo "mutation: $name: \`sed -E '$rest'\` no longer changes $arg1; update mutants.tsv"
        fail=1; continue
      fi ;;
    *) echo "mutation: $name: unknown kind $kind"; fail=1; continue ;;
  esac
  printf '\n== mutant %s (protects %s)\n' "$name" "$protects"
  AB_PREFIX="$mstage" AB_BUILD_DIR="$build" AB_SOURCE_DIR="$src" AB_MUTANT_ENV="$menv" CI=true \
    "$python" -m pytest -q -p no:cacheprovider --protects="$protects" \
    -n "${AB_TEST_WORKERS:-2}" --dist loadfile \
    --junitxml "$dir/junit.xml" -o junit_family=xunit2 "$repo/tests/integration" \
    >"$dir/pytest.log" 2>&1
  tail -n 3 "$dir/pytest.log"
  "$python" "$repo/tests/mutation/matrix.py" "$name" "$dir/junit.xml" >>"$matrix" || fail=1
done <"$table"

printf '\n== mutant/test matrix (caught: the test failed against the mutant; HOLE: it passed;\n   SETUP-ERROR: only a fixture failed, the test never met the mutant)\n'
column -t -s $'\t' "$matrix" 2>/dev/null || cat "$matrix"
if grep -q -e $'\tHOLE' -e $'\tSETUP-ERROR' -e $'\tNO-TESTS' "$matrix"; then
  echo "mutation: FAILED: a protection test did not notice its protection gone (logs in $out/*/pytest.log)"
  fail=1
fi
exit $fail
