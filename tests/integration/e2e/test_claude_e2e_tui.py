"""The interactive Claude Code TUI under tmux: the README's status line, and a turn that runs
a command through the boundary (the TUI starts in `auto` mode)."""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

from claude_e2e import (FAKE_API_KEY, claude_bin_path, claude_code,  # noqa: F401 (fixtures)
                        module_world)
from conftest import SSH_SECRET, need_tool
from model_server import ModelServer, tool

# The status line exactly as README.md gives it.
README_STATUS_LINE = ('ab="${XDG_STATE_HOME:-$HOME/.local/state}/agent-boundary/bin/agent-boundary"; '
                      '[ -x "$ab" ] && "$ab" claude statusline "$(cat)"')
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def readme_status_line(source_dir) -> str:
    text = (source_dir / "README.md").read_text()
    m = re.search(r'"statusLine": \{"type": "command", "command": "(.*)"\}', text)
    assert m, "README.md has no statusLine example"
    return json.loads('"' + m.group(1) + '"')


class Tui:
    def __init__(self, cc, server: ModelServer, socket: str):
        self.cc = cc
        self.server = server
        self.socket = socket
        self.tmux = need_tool("tmux")

    def start(self, cwd) -> None:
        env = self.cc.env({"ANTHROPIC_BASE_URL": self.server.url, "TERM": "xterm-256color"})
        args = []
        for k, v in env.items():
            args += ["-e", f"{k}={v}"]
        subprocess.run([self.tmux, "-L", self.socket, "-f", "/dev/null", "new-session", "-d",
                        "-s", "e2e", "-x", "150", "-y", "45", "-c", str(cwd), *args,
                        self.cc.bin], check=True, env={"PATH": "/usr/bin:/bin",
                                                       "TERM": "xterm-256color"})

    def screen(self, colours: bool = False) -> str:
        argv = [self.tmux, "-L", self.socket, "capture-pane", "-p", "-t", "e2e"]
        if colours:
            argv.insert(4, "-e")
        return subprocess.run(argv, capture_output=True, text=True).stdout

    def wait_for(self, needle: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if needle in screen:
                return screen
            time.sleep(0.5)
        raise AssertionError(f"{needle!r} never appeared; screen:\n{screen}")

    def send(self, text: str) -> None:
        subprocess.run([self.tmux, "-L", self.socket, "send-keys", "-t", "e2e", text, "Enter"],
                       check=True)

    def stop(self) -> None:
        subprocess.run([self.tmux, "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def tui_home(claude_code, source_dir):
    """The fake HOME prepared as a user who installed the plugin, set the README's status
    line and accepted the first-run dialogs."""
    w = claude_code.world
    settings_file = w.home / ".claude" / "settings.json"
    settings = json.loads(settings_file.read_text())
    settings["statusLine"] = {"type": "command", "command": readme_status_line(source_dir)}
    settings_file.write_text(json.dumps(settings, indent=2))
    state_file = w.home / ".claude.json"
    state = json.loads(state_file.read_text()) if state_file.exists() else {}
    state.update({"hasCompletedOnboarding": True, "theme": "dark",
                  "customApiKeyResponses": {"approved": [FAKE_API_KEY[-20:]], "rejected": []}})
    state.setdefault("projects", {})[str(w.wt)] = {"hasTrustDialogAccepted": True,
                                                   "hasCompletedProjectOnboarding": True}
    state_file.write_text(json.dumps(state))
    return w


def test_readme_status_line_is_the_one_tested(source_dir):
    assert readme_status_line(source_dir) == README_STATUS_LINE


@pytest.mark.protects("claude-bash-wrapped")
def test_status_line_and_a_boundary_turn_in_the_tui(claude_code, tui_home):
    w = tui_home
    marker = w.wt / "tui-marker.txt"
    script = [tool("Bash", command=f"cat {w.ssh_key}; echo tui > {marker}",
                   description="read the key"),
              "TUI-TURN-DONE"]
    with ModelServer(script) as server:
        tui = Tui(claude_code, server, f"ab-e2e-{w.root.name}")
        try:
            tui.start(w.wt)
            # The status line renders before SessionStart has made the session (red
            # `boundary:off`), and again after each assistant message.
            screen = tui.wait_for("auto mode")
            tui.send("run the scripted step")
            tui.wait_for("TUI-TURN-DONE")
            screen = tui.wait_for("boundary:default")
            coloured = tui.screen(colours=True)
            line = next(ln for ln in coloured.splitlines() if "boundary:default" in ln)
            assert "\x1b[32m" in line, repr(line)  # green: on, not self_edit
            r = server.result(0)
            assert SSH_SECRET not in r.text, r
            assert marker.read_text() == "tui\n"
            # Every tool the interactive client offers is one the gate classifies.
            names = server.tool_names()
            assert "Bash" in names and "Read" in names, names
        finally:
            tui.stop()
