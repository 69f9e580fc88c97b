#!/usr/bin/env bash
# The checkpoint's cost on a 100,000-file repository: scripts/bench-checkpoint.sh [PREFIX]
# The index is generated with `git update-index --index-info` (100,000 entries, 3 gitlinks
# to real nested repositories, 2 submodule git dirs under .git/modules); the checkpoint
# reads only the index and the git dirs, so no work tree files are needed. Prints the
# in-process time (median of `-v`'s "checkpoint: N us" over BENCH_RUNS runs) and
# hyperfine's whole-process medians against the `--version` floor.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$repo/build/stage}
prefix=$(cd "$prefix" 2>/dev/null && pwd) || { echo "bench: no directory ${1:-}" >&2; exit 1; }
ab=$prefix/bin/agent-boundary
[ -x "$ab" ] || { echo "bench: no agent-boundary at $ab" >&2; exit 1; }
runs=${BENCH_RUNS:-50}
files=${BENCH_FILES:-100000}

world=/var/tmp/agent-boundary-bench-checkpoint
rm -rf "$world"
mkdir -p "$world/session"
trap 'rm -rf "$world"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -c user.name=b -c user.email=b@b -c init.defaultBranch=main "$@"; }

w=$world/repo
g init -q "$w"
blob=$(printf 'x\n' | g -C "$w" hash-object -w --stdin)
for n in 1 2 3; do
  g init -q "$w/nested$n"
  g -C "$w/nested$n" commit -q --allow-empty -m n
done
for n in 1 2; do
  mkdir -p "$w/.git/modules/m$n"
  g init -q --bare "$w/.git/modules/m$n"
done
python3 - "$w" "$blob" "$files" <<'PY' | g -C "$w" update-index --index-info
import subprocess, sys
w, blob, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = []
for i in range(n - 3):
    out.append(f"100644 {blob}\tsrc/d{i // 1000:03d}/file-{i:06d}.txt")
for k in (1, 2, 3):
    head = subprocess.run(["git", "-C", f"{w}/nested{k}", "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    out.append(f"160000 {head}\tnested{k}")
sys.stdout.write("\n".join(out) + "\n")
PY
entries=$(g -C "$w" ls-files --stage | wc -l)
size=$(stat -c %s "$w/.git/index")
# The checkpoint reads only held.json (what a session pins at creation).
cat > "$world/session/held.json" <<JSON
{"version": 1, "held": [], "open_keys": [], "writable": ["$w"],
 "repository": {"top": "$w", "git_dir": "$w/.git", "common_dir": "$w/.git", "hash_len": 20},
 "checkpoint": {"submodules": true, "tool_config": true},
 "baseline_configs": {}, "baseline_hooks": {}}
JSON
"$ab" --session-dir "$world/session" checkpoint
# median_us [PREPARE]: the in-process time ("checkpoint: N us" under -v), PREPARE run first.
median_us() {
  for _ in $(seq "$runs"); do
    [ -z "${1:-}" ] || eval "$1"
    "$ab" -v --session-dir "$world/session" checkpoint 2>&1 | sed -n 's/.*checkpoint: \([0-9]*\) us/\1/p'
  done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)] " us (min " a[1] ")"}'
}
echo "index: $entries entries, $size bytes, 3 gitlinks, 2 module git dirs"
# A just-written index (what follows a git command) is parsed; one unchanged for 2 s is not.
echo "in-process median over $runs runs, index just written (parsed): $(median_us "touch $w/.git/index")"
sleep 3
"$ab" --session-dir "$world/session" checkpoint
echo "in-process median over $runs runs, index unchanged (cached): $(median_us)"
if command -v hyperfine >/dev/null; then
  hyperfine -N -w 5 -r "$runs" --export-markdown "$world/h.md" \
    "$ab --version" "$ab --session-dir $world/session checkpoint" >/dev/null
  cat "$world/h.md"
fi
