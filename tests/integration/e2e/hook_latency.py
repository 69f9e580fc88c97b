#!/usr/bin/env python3
"""Hook latency inside the real Claude Code, from its own debug log.

    AB_PREFIX=build/stage AB_SOURCE_DIR=. python3 tests/integration/e2e/hook_latency.py [--runs N]

Builds a test world (the integration tests' World), installs our plugin through Claude's
plugin commands, then runs N sessions of one Bash and one Read call against the scripted
model server with `--debug-file`. Claude logs every hook as
`Hooks: <Event>:<matcher> [...] (plugin ...) finished with status N (M ms)`; the medians
of SessionStart, PreToolUse:Bash and PreToolUse:Read are printed as a Markdown table. The
time is the client's: it includes spawning the hook's shell.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from claude_e2e import ClaudeCode, claude_bin, make_marketplace, new_world  # noqa: E402
from conftest import prefix  # noqa: E402
from model_server import tool  # noqa: E402

HOOKS = ("SessionStart:startup", "PreToolUse:Bash", "PreToolUse:Read")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mode", default="bypassPermissions")
    args = ap.parse_args()
    source = Path(os.environ.get("AB_SOURCE_DIR", HERE.parents[2])).resolve()
    world = new_world("hook-latency", prefix(), source, "/usr/bin/git")
    try:
        cc = ClaudeCode(world, claude_bin(), make_marketplace(world.root / "marketplace", source))
        cc.install_plugin()
        samples: dict[str, list[int]] = {h: [] for h in HOOKS}
        for i in range(args.runs):
            run = cc.run([tool("Bash", command="echo hi", description="echo"),
                          tool("Read", file_path=str(world.wt / "README.md")), "done"],
                         mode=args.mode, debug=True)
            assert run.rc == 0, run
            assert not run.result(0).is_error and not run.result(1).is_error, run
            for name, status, ms in run.hook_timings():
                if name in samples and status == 0:
                    samples[name].append(ms)
        print(f"Medians of {args.runs} `claude -p` sessions ({args.mode}), Claude Code's own "
              "`--debug-file` timings:\n")
        print("| Hook (inside Claude Code 2.1.328) | Median | Runs |")
        print("|---|---|---|")
        for h in HOOKS:
            s = samples[h]
            median = f"{statistics.median(s):.0f} ms" if s else "n/a"
            print(f"| {h} | {median} | {', '.join(map(str, s))} |")
    finally:
        world.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
