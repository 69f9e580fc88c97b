"""The real Claude Code (2.1.328) with our plugin: in-process file tools keep working while
the session's sandboxed processes are held for them, and a background attacker started by
an earlier Bash call cannot race them (issue 13; the 1,000-attempt matrix drives the hook
directly in test_file_tool_race.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from claude_e2e import claude_bin_path, claude_code, module_world  # noqa: F401 (fixtures)
from conftest import HERE, SSH_SECRET, need_tool
from model_server import tool

BASHRC = "# the user's own shell startup file\n"


@pytest.fixture(scope="module")
def swapper(module_world) -> str:
    cc = need_tool("cc")
    out = module_world.wt / "race-swapper"
    r = subprocess.run([cc, "-O2", "-static", "-o", str(out),
                        str(HERE / "helpers" / "race_swapper.c")],
                       capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    return str(out)


def frozen_counts(world) -> dict:
    out = {}
    for d in (world.state / "sessions").iterdir():
        f = d / "frozen"
        if f.exists():
            out[d.name] = f.read_text().strip()
    return out


def test_read_then_edit_write_new_and_symlinked_files(claude_code):
    w = claude_code.world
    d = w.wt / "e2e-edit"
    (d / "node_modules" / ".bin").mkdir(parents=True)
    (d / "node_modules" / "tool.js").write_text("TOOL-JS\n")
    (d / "node_modules" / ".bin" / "tool").symlink_to("../tool.js")
    f = d / "notes.txt"
    f.write_text("alpha beta\n")
    new = d / "fresh" / "deeper" / "new.txt"
    run = claude_code.run([
        # A background process of the session: it must be running again between the tools.
        tool("Bash", command="nohup sh -c 'while [ ! -e e2e-edit/stop ]; do date +%s%N > "
                             "e2e-edit/tick; sleep 0.05; done' >/dev/null 2>&1 &"),
        tool("Read", file_path=str(f)),
        tool("Edit", file_path=str(f), old_string="beta", new_string="gamma"),
        tool("Write", file_path=str(new), content="NEW-FILE\n"),
        tool("Read", file_path=str(d / "node_modules" / ".bin" / "tool")),
        tool("Bash", command="a=$(cat e2e-edit/tick); sleep 0.5; b=$(cat e2e-edit/tick); "
                             "[ \"$a\" != \"$b\" ] && echo TICKING"),
        tool("Bash", command="touch e2e-edit/stop"),
        "done",
    ], mode="default")
    assert run.rc == 0, run
    assert "alpha beta" in run.result(1).text, run
    assert not run.result(2).is_error, run
    assert f.read_text() == "alpha gamma\n"
    assert not run.result(3).is_error, run
    assert new.read_text() == "NEW-FILE\n"
    assert "TOOL-JS" in run.result(4).text, run
    assert "TICKING" in run.result(5).text, run
    assert set(frozen_counts(w).values()) <= {"0"}, frozen_counts(w)
    posts = [e for e in run.hook_events() if "PostToolUse" in json.dumps(e)]
    assert posts, run


@pytest.mark.protects("file-tool-race")
def test_background_swapper_cannot_race_real_reads_and_writes(claude_code, swapper):
    w = claude_code.world
    d = w.wt / "e2e-race"
    d.mkdir()
    f = d / "f"
    f.write_text("BENIGN\n")
    bashrc = w.home / ".bashrc"
    bashrc.write_text(BASHRC)
    n = int(os.environ.get("AB_RACE_E2E_ATTEMPTS", "15"))
    script = [tool("Bash", command=f"nohup {swapper} inotify file {d} f {w.ssh_key} "
                                   f"{d}/.race-stop >/dev/null 2>&1 &"),
              tool("Bash", command=f"sleep 1; ls -a {d}")]
    script += [tool("Read", file_path=str(f)) for _ in range(n)]
    script += [tool("Bash", command=f"touch {d}/.race-stop"), "done"]
    run = claude_code.run(script, mode="default", timeout=600)
    assert run.rc == 0, run
    assert ".race-ready" in run.result(1).text, run
    texts = [run.result(2 + i).text for i in range(n)]
    assert not any(SSH_SECRET in t for t in texts), texts
    assert sum("BENIGN" in t for t in texts) >= n // 2, texts

    g = w.wt / "e2e-race-w"
    g.mkdir()
    script = [tool("Bash", command=f"nohup {swapper} inotify dir {g} sub {w.home} "
                                   f"{g}/.race-stop >/dev/null 2>&1 &"),
              tool("Bash", command=f"sleep 1; ls -a {g}")]
    script += [tool("Write", file_path=str(g / "sub" / ".bashrc"), content="PWNED\n")
               for _ in range(n)]
    script += [tool("Bash", command=f"touch {g}/.race-stop"), "done"]
    run = claude_code.run(script, mode="default", timeout=600)
    assert run.rc == 0, run
    assert bashrc.read_text() == BASHRC
    shutil.rmtree(g, ignore_errors=True)
