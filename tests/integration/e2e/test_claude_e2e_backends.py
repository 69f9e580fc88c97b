"""The plugin in the real Claude Code on the srt and devcontainer backends: a small
representative run each (nono is covered by test_claude_e2e_boundary.py). The backend is
chosen the way a user chooses it, with AGENT_BOUNDARY_BACKEND in Claude's environment."""

from __future__ import annotations

import json
import subprocess

import pytest

from claude_e2e import (claude_bin_path, claude_code,  # noqa: F401 (fixtures)
                        module_world)
from conftest import AWS_SECRET, README_TEXT, SSH_SECRET, need, need_tool
from model_server import tool

MODE = "bypassPermissions"
IMAGE = "localhost/agent-boundary-base:bookworm"
LABEL = "agent-boundary.session"


def need_backend(name: str) -> None:
    if name == "srt":
        for t in ("srt", "node", "bwrap", "socat", "rg"):
            need_tool(t)
    else:
        podman = need_tool("podman")
        r = subprocess.run([podman, "image", "exists", IMAGE], capture_output=True)
        need(r.returncode == 0, f"the image {IMAGE} is missing: run scripts/build-base-image.sh")


def remove_containers(world) -> None:
    podman = need_tool("podman")
    r = subprocess.run([podman, "ps", "-a", "--format",
                        f'{{{{.Names}}}} {{{{index .Labels "{LABEL}"}}}}'],
                       capture_output=True, text=True)
    mine = [line.split(" ", 1)[0] for line in r.stdout.splitlines()
            if " " in line and line.split(" ", 1)[1].startswith(str(world.root) + "/")]
    if mine:
        subprocess.run([podman, "rm", "-f", "-t", "0", *mine], capture_output=True)


@pytest.mark.protects("claude-bash-wrapped")
@pytest.mark.protects("claude-file-gate")
@pytest.mark.parametrize("backend", ["srt", "devcontainer"])
def test_backend_holds_in_claude(claude_code, backend):
    need_backend(backend)
    cc = claude_code
    w = cc.world
    out = w.wt / f"e2e-{backend}.txt"
    script = [
        tool("Bash", command=f"cat {w.ssh_key}", description="read the key"),
        tool("Bash", command=f"echo {backend} > {out}", description="write in the workdir"),
        tool("Read", file_path=str(w.aws_credentials)),
        tool("Read", file_path=str(w.wt / "README.md")),
        tool("Write", file_path=str(w.home / f"planted-{backend}"), content="x"),
        "done",
    ]
    try:
        run = cc.run(script, mode=MODE, env={"AGENT_BOUNDARY_BACKEND": backend}, timeout=400)
    finally:
        if backend == "devcontainer":
            remove_containers(w)
    assert run.rc == 0, run
    boundary = json.loads((w.sessions / run.session_id / "boundary.json").read_text())
    assert boundary["backend"]["name"] == backend, boundary
    assert SSH_SECRET not in run.result(0).text and run.result(0).is_error, run
    assert not run.result(1).is_error, run
    assert out.read_text() == f"{backend}\n"
    assert run.result(2).is_error and AWS_SECRET not in run.result(2).text, run
    assert README_TEXT.strip() in run.result(3).text, run
    assert run.result(4).is_error and not (w.home / f"planted-{backend}").exists(), run
