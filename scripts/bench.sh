#!/usr/bin/env bash
# Benchmarks anyone can run: scripts/bench.sh [PREFIX]
# PREFIX is an installed agent-boundary (default: the test staging install, build/stage).
# Prints a Markdown table of medians (hyperfine); paste it into BENCHMARKS.md.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$repo/build/stage}
# Absolute: the benchmarks run from inside their own worlds.
prefix=$(cd "$prefix" 2>/dev/null && pwd) || { echo "bench: no directory ${1:-}" >&2; exit 1; }
ab=$prefix/bin/agent-boundary
[ -x "$ab" ] || { echo "bench: no agent-boundary at $ab (run scripts/test.sh or pass a prefix)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench: install hyperfine" >&2; exit 1; }
runs=${BENCH_RUNS:-30}

world=/var/tmp/agent-boundary-bench
rm -rf "$world"
mkdir -p "$world"
trap 'rm -rf "$world"' EXIT

# make_tree DIR N: N files in directories of 1000 files each.
make_tree() {
  python3 - "$1" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 1000:03d}")
    if i % 1000 == 0:
        os.makedirs(d, exist_ok=True)
    open(os.path.join(d, f"f{i}"), "w").close()
PY
}

setup_world() {  # setup_world NAME FILES
  local w=$world/$1
  mkdir -p "$w/home" "$w/profiles"
  git -C "$w" init -q repo
  make_tree "$w/repo/src" "$2"
  make_tree "$w/home/data" "$2"
  cp "$repo/profiles/default.yaml" "$w/profiles/"
  echo "$w"
}

median_ms() {  # median_ms JSON -> milliseconds of the first command
  python3 -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$1"
}

# nono 0.80 leaves a /tmp/.nono-<hash>.json behind on every `wrap`, and its start-up slows
# as they pile up: remove the ones this benchmark made before each measurement, so rows
# compare like with like.
clean_nono_leftovers() {
  find /tmp -maxdepth 1 -name '.nono-*.json' -newer "$world" -delete 2>/dev/null || true
}

bench() {  # bench NAME HYPERFINE-ARGS... -> median ms (no shell in between)
  clean_nono_leftovers
  hyperfine -N --warmup 3 --runs "$runs" --export-json "$world/$1.json" "${@:2}" >/dev/null 2>&1
  median_ms "$world/$1.json"
}

bench_stdin() {  # bench_stdin NAME FILE COMMAND -> median ms; hyperfine subtracts the shell
  clean_nono_leftovers
  hyperfine --warmup 3 --runs "$runs" --export-json "$world/$1.json" "$3 < $2" >/dev/null 2>&1
  median_ms "$world/$1.json"
}

rows=()
for files in 1000 100000; do
  w=$(setup_world "w$files" "$files")
  s=$w/home/.local/state/agent-boundary/sessions/s
  ms=$(
    export HOME=$w/home AGENT_BOUNDARY_PROFILES_DIR=$w/profiles
    cd "$w/repo"
    bench "create$files" --prepare "rm -rf $s" "$ab session create $s --workdir $w/repo"
  )
  rows+=("| \`session create\`, starter profile, $files-file workdir and $files-file HOME | $ms ms |")
done

# Per-command overhead: the launcher against nono run directly with the same pinned profile.
w=$world/w100000
s=$w/home/.local/state/agent-boundary/sessions/s
(cd "$w/repo" && HOME=$w/home AGENT_BOUNDARY_PROFILES_DIR=$w/profiles "$ab" session create "$s" --workdir "$w/repo" >/dev/null 2>&1)
nono=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["backend"]["executable"])' "$s/boundary.json")
export HOME=$w/home AGENT_BOUNDARY_PROFILES_DIR=$w/profiles
cd "$w/repo"
direct=$(bench direct "$nono wrap --silent --profile $s/nono-profile.json --workdir $w/repo -- /bin/true")
launcher=$(bench launcher "$ab --session-dir $s exec -- /bin/true")
run=$(bench run "$ab --session-dir $s run -- /bin/true")
probe=$(bench probe "$nono wrap --silent --profile $s/nono-profile.json --workdir $w/repo -- $prefix/libexec/agent-boundary/probe $w/repo/src/d000/f1 read")
overhead() { python3 -c "print('%.1f' % ($1 - $2))"; }

# Claude hooks, whole process per call: a session made by the SessionStart hook, then one
# PreToolUse call per tool kind, and the status line.
id=bench-session-0001
printf '{"session_id":"%s","cwd":"%s","hook_event_name":"SessionStart","source":"startup"}' \
  "$id" "$w/repo" | "$ab" claude hook SessionStart 2>/dev/null
payload() {  # payload TOOL INPUT-JSON
  printf '{"session_id":"%s","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"%s","tool_input":%s}' \
    "$id" "$w/repo" "$1" "$2" >"$world/$1.json"
}
payload Bash '{"command":"npm test","description":"tests","timeout":120000}'
payload Read "{\"file_path\":\"$w/repo/src/d000/f1\"}"
payload TodoWrite '{"todos":[]}'
mkdir -p "$w/repo/.claude"
echo '{"enabledPlugins":{"agent-boundary@agent-boundary":true}}' >"$w/repo/.claude/settings.json"
status_json="{\"session_id\":\"$id\",\"cwd\":\"$w/repo\"}"
bash_hook=$(bench_stdin hook-bash "$world/Bash.json" "$ab claude hook PreToolUse")
read_hook=$(bench_stdin hook-read "$world/Read.json" "$ab claude hook PreToolUse")
safe_hook=$(bench_stdin hook-safe "$world/TodoWrite.json" "$ab claude hook PreToolUse")
statusline=$(bench statusline "$ab claude statusline '$status_json'")
true_floor=$(bench true-floor "/bin/true")
cxx_floor=$(bench cxx-floor "$ab --version")
python_floor=$(bench python-floor "python3 -c 'import json, re, shlex, subprocess, pathlib, datetime'")

rows+=("| \`nono wrap -- true\` run directly | $direct ms |")
rows+=("| \`agent-boundary exec -- true\` (the launcher) | $launcher ms (+$(overhead "$launcher" "$direct") ms) |")
rows+=("| \`agent-boundary run -- true\` | $run ms (+$(overhead "$run" "$direct") ms) |")
rows+=("| probe of one path (nono + probe helper) | $probe ms |")
rows+=("| Claude PreToolUse hook, Bash rewrite | $bash_hook ms |")
rows+=("| Claude PreToolUse hook, Read (one probe inside the boundary) | $read_hook ms |")
rows+=("| Claude PreToolUse hook, a safe tool | $safe_hook ms |")
rows+=("| Claude status line | $statusline ms |")
rows+=("| floor: \`/bin/true\` | $true_floor ms |")
rows+=("| floor: \`agent-boundary --version\` (starting our C++ binary, no work) | $cxx_floor ms |")
rows+=("| floor of the Python hook we replace: \`python3 -c 'import json, re, shlex, subprocess, pathlib, datetime'\` | $python_floor ms |")

echo "Medians of $runs runs (hyperfine, 3 warmups; hook rows read stdin through a shell whose cost hyperfine subtracts), $(nproc) cores, $(uname -r), nono $("$nono" --version | awk '{print $2}'), $(date -u +%Y-%m-%d)."
echo
echo "| What | Median |"
echo "|---|---|"
printf '%s\n' "${rows[@]}"

# Every installed backend on the same corpus: verdict matrix and median costs (issue 6).
echo
echo "Backends compared on one corpus (\`agent-boundary compare --runs $runs\`):"
echo
echo '```'
"$ab" compare --runs "$runs" || echo "(compare reported a failure: see above)"
echo '```'
