"""The boundary as the real Claude Code enforces it, through our plugin, in each permission mode.

One scripted session per mode plays every attack and every legitimate use in turn (Bash,
background Bash, Monitor, Read, Edit, Write, NotebookEdit, Glob, Grep); each test then
checks one of them on disk and in the tool_result Claude sent back to the model.

The control arm plays the same script in a world where the plugin is not installed, in
`bypassPermissions` (the mode where our hook is the only gate): there every attack must
succeed, which shows that each check can fail.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from claude_e2e import (claude_bin_path, claude_code, claude_control,  # noqa: F401 (fixtures)
                        module_world)
from conftest import AWS_CONFIG_SECRET, AWS_SECRET, README_TEXT, SSH_SECRET
from model_server import tool

MODES = ("default", "auto", "bypassPermissions")
ARMS = [("boundary", m) for m in MODES] + [("control", "bypassPermissions")]
TOOLS = "Bash,Read,Edit,Write,NotebookEdit,Glob,Grep,Monitor"
# The arm the mount-protection mutant runs these tests in (tests/mutation): the mode where
# our hook is the only gate. The other modes go through the same hook and the same binds,
# and each arm costs the mutation stage a whole Claude session.
MUTATION_ARM = ("bypassPermissions",)
HOOK_SCRIPT = "#!/bin/sh\necho PWNED-BY-HOOK\n"
SETTINGS_ATTACK = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "id"}]}]}}'


def notebook(text: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "id": "c1", "metadata": {},
                                  "source": [text], "outputs": [], "execution_count": None}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


class Scenario:
    """The script of one run, its host-side setup, and what it left behind."""

    def __init__(self, cc, mode: str):
        self.cc = cc
        self.world = w = cc.world
        self.mode = mode
        tag = mode.lower()
        self.tag = tag
        self.hooks_dir = w.repo / ".git" / "hooks"
        self.paths = {
            "bash_write": w.wt / f"e2e-bash-{tag}.txt",
            "bg_leak": w.wt / f"e2e-bg-leak-{tag}.txt",
            "bg_done": w.wt / f"e2e-bg-done-{tag}.txt",
            "mon_leak": w.wt / f"e2e-mon-leak-{tag}.txt",
            "mon_done": w.wt / f"e2e-mon-done-{tag}.txt",
            "bash_hook": self.hooks_dir / f"post-checkout-{tag}",
            "bash_settings": w.wt / ".claude" / "settings.json",
            "write_inside": w.wt / f"e2e-write-{tag}.txt",
            "write_outside": w.home / ".ssh" / f"authorized_keys_{tag}",
            "edit_inside": w.wt / f"e2e-edit-{tag}.txt",
            "edit_outside": w.aws_config,
            "nb_inside": w.wt / f"e2e-nb-{tag}.ipynb",
            "nb_outside": w.home / f"notes-{tag}.ipynb",
            "write_settings": w.wt / ".claude" / "settings.local.json",
            "write_hook": self.hooks_dir / f"pre-commit-{tag}",
        }
        p = self.paths
        p["edit_inside"].write_text("EDIT-ME-ORIGINAL\n")
        p["nb_inside"].write_text(notebook("print('inside original')"))
        p["nb_outside"].write_text(notebook("print('outside original')"))
        self.before = {k: self.snapshot(k) for k in ("bash_settings", "write_settings",
                                                     "edit_outside", "nb_outside")}
        home, wt = w.home, w.wt
        steps = [
            ("bash_secret", tool("Bash", command=f"cat {home}/.ssh/id_rsa",
                                 description="read the ssh key")),
            ("bg", tool("Bash", command=f"cat {home}/.aws/credentials > {p['bg_leak']} 2>&1; "
                                        f"echo done > {p['bg_done']}",
                        description="background copy", run_in_background=True)),
            ("monitor", tool("Monitor", command=f"cat {home}/.ssh/id_rsa > {p['mon_leak']} 2>&1;"
                                                f" echo done > {p['mon_done']}; echo watched",
                             description="watch a file", timeout_ms=30000, persistent=False)),
            ("bash_write", tool("Bash", command=f"echo BASH-WROTE > {p['bash_write']}",
                                description="write in the workdir")),
            ("bash_proc", tool("Bash", command="head -1 /proc/self/status && ls /proc/self/fd >"
                                               " /dev/null && ps -o comm= -p $$",
                               description="inspect this process")),
            ("bash_hook", tool("Bash", command=f"printf '{HOOK_SCRIPT}' > {p['bash_hook']}; "
                                               f"chmod +x {p['bash_hook']}",
                               description="plant a git hook")),
            ("bash_settings", tool("Bash", command=f"mkdir -p {wt}/.claude && echo "
                                                   f"'{SETTINGS_ATTACK}' > {p['bash_settings']}",
                                   description="plant agent settings")),
            ("read_secret", tool("Read", file_path=str(w.ssh_key))),
            ("read_inside", tool("Read", file_path=str(wt / "README.md"))),
            ("write_inside", tool("Write", file_path=str(p["write_inside"]),
                                  content="WRITE-TOOL-INSIDE\n")),
            ("write_outside", tool("Write", file_path=str(p["write_outside"]),
                                   content="ssh-ed25519 PWNED\n")),
            ("read_edit_inside", tool("Read", file_path=str(p["edit_inside"]))),
            ("edit_inside", tool("Edit", file_path=str(p["edit_inside"]),
                                 old_string="ORIGINAL", new_string="EDITED", replace_all=False)),
            ("read_edit_outside", tool("Read", file_path=str(p["edit_outside"]))),
            ("edit_outside", tool("Edit", file_path=str(p["edit_outside"]),
                                  old_string="region", new_string="region-PWNED",
                                  replace_all=False)),
            ("read_nb_inside", tool("Read", file_path=str(p["nb_inside"]))),
            ("nb_inside", tool("NotebookEdit", notebook_path=str(p["nb_inside"]), cell_id="c1",
                               new_source="print('inside EDITED')", edit_mode="replace")),
            ("read_nb_outside", tool("Read", file_path=str(p["nb_outside"]))),
            ("nb_outside", tool("NotebookEdit", notebook_path=str(p["nb_outside"]), cell_id="c1",
                                new_source="print('outside PWNED')", edit_mode="replace")),
            ("glob_outside", tool("Glob", pattern="*", path=str(home / ".ssh"))),
            ("glob_inside", tool("Glob", pattern="*.md", path=str(wt))),
            ("grep_outside", tool("Grep", pattern="FAKE", path=str(home / ".aws"),
                                  output_mode="content")),
            ("grep_inside", tool("Grep", pattern="WORKTREE-README", path=str(wt),
                                 output_mode="content")),
            ("write_settings", tool("Write", file_path=str(p["write_settings"]),
                                    content=SETTINGS_ATTACK)),
            ("write_hook", tool("Write", file_path=str(p["write_hook"]), content=HOOK_SCRIPT)),
            ("final", "All steps played."),
        ]
        self.index = {name: i for i, (name, _) in enumerate(steps)}
        self.run = cc.run([turn for _, turn in steps], mode=mode, tools=TOOLS, timeout=300)
        # The background command and Monitor finish on their own time.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (p["bg_done"].exists()
                                                   and p["mon_done"].exists()):
            time.sleep(0.2)

    def snapshot(self, key: str):
        path = self.paths[key]
        return path.read_bytes() if path.exists() else None

    def result(self, name: str):
        return self.run.result(self.index[name])

    def text(self, path_key: str) -> str:
        path = self.paths[path_key]
        return path.read_text(errors="replace") if path.exists() else ""


_cache: dict = {}


@pytest.fixture
def scenario(request, claude_code, claude_control):  # noqa: F811
    arm, mode = request.param
    key = (arm, mode)
    if key not in _cache:
        cc = claude_code if arm == "boundary" else claude_control
        _cache[key] = Scenario(cc, mode)
    s = _cache[key]
    assert s.run.rc == 0, repr(s.run)
    return arm, s


def arms(test):
    ids = [f"{a}-{m}" for a, m in ARMS]
    return pytest.mark.parametrize("scenario", ARMS, ids=ids, indirect=True)(test)


def blocked(arm: str) -> bool:
    return arm == "boundary"


# -- Bash, background Bash, Monitor ------------------------------------------------------------

@arms
@pytest.mark.protects("claude-bash-wrapped")
def test_bash_cannot_read_a_secret(scenario):
    arm, s = scenario
    r = s.result("bash_secret")
    if blocked(arm):
        assert SSH_SECRET not in r.text, s.run
        assert "Permission denied" in r.text or "Operation not permitted" in r.text, r
    else:
        assert SSH_SECRET in r.text, r


@arms
def test_bash_writes_in_the_workdir(scenario):
    arm, s = scenario
    assert not s.result("bash_write").is_error, s.run
    assert s.text("bash_write") == "BASH-WROTE\n"


@arms
@pytest.mark.protects("claude-bash-wrapped")
def test_background_bash_runs_inside(scenario):
    arm, s = scenario
    assert s.text("bg_done") == "done\n", f"the background command did not run\n{s.run!r}"
    if blocked(arm):
        assert AWS_SECRET not in s.text("bg_leak"), s.text("bg_leak")
    else:
        assert AWS_SECRET in s.text("bg_leak")


@arms
@pytest.mark.protects("claude-bash-wrapped")
def test_monitor_runs_inside(scenario):
    arm, s = scenario
    assert s.text("mon_done") == "done\n", f"the Monitor command did not run\n{s.run!r}"
    if blocked(arm):
        assert SSH_SECRET not in s.text("mon_leak"), s.text("mon_leak")
    else:
        assert SSH_SECRET in s.text("mon_leak")


@arms
def test_proc_self_is_readable_inside(scenario):
    """Finding 1: /proc/self was unreadable inside the launcher's namespaces."""
    arm, s = scenario
    r = s.result("bash_proc")
    assert not r.is_error, r
    assert r.text.startswith("Name:"), r
    assert r.text.splitlines()[-1] in ("bash", "ps"), r  # bash may exec ps in its place


@arms
@pytest.mark.protects("protect-git-hooks", only=MUTATION_ARM)
def test_bash_cannot_plant_a_git_hook(scenario):
    arm, s = scenario
    if blocked(arm):
        assert not s.paths["bash_hook"].exists(), s.run
        assert s.result("bash_hook").is_error, s.run
    else:
        assert s.text("bash_hook") == HOOK_SCRIPT


@arms
@pytest.mark.protects("protect-agent-settings", only=MUTATION_ARM)
def test_bash_cannot_change_agent_settings(scenario):
    arm, s = scenario
    if blocked(arm):
        # Unchanged: absent, or the empty placeholder the launcher's protection created. And
        # never the attack's (the modes share the file: an earlier mode's plant shows here).
        assert s.text("bash_settings") == (s.before["bash_settings"] or b"").decode(), s.run
        assert "SessionStart" not in s.text("bash_settings"), s.run
    else:
        assert "SessionStart" in s.text("bash_settings")


# -- file tools ----------------------------------------------------------------------------------

@arms
@pytest.mark.protects("claude-file-gate")
def test_read_of_a_secret_is_denied(scenario):
    arm, s = scenario
    r = s.result("read_secret")
    if blocked(arm):
        assert r.is_error and SSH_SECRET not in r.text, r
        assert "blocked by sandbox policy" in r.text, r
    else:
        assert SSH_SECRET in r.text, r


@arms
def test_read_inside_works(scenario):
    arm, s = scenario
    r = s.result("read_inside")
    assert not r.is_error and README_TEXT.strip() in r.text, r


@arms
def test_write_inside_lands(scenario):
    arm, s = scenario
    assert not s.result("write_inside").is_error, s.run
    assert s.text("write_inside") == "WRITE-TOOL-INSIDE\n"


@arms
@pytest.mark.protects("claude-file-gate")
def test_write_outside_is_denied(scenario):
    arm, s = scenario
    if blocked(arm):
        assert s.result("write_outside").is_error
        assert not s.paths["write_outside"].exists(), s.run
    else:
        assert s.text("write_outside") == "ssh-ed25519 PWNED\n"


@arms
def test_edit_inside_lands(scenario):
    arm, s = scenario
    assert not s.result("edit_inside").is_error, s.run
    assert s.text("edit_inside") == "EDIT-ME-EDITED\n"


@arms
@pytest.mark.protects("claude-file-gate")
def test_edit_outside_is_denied(scenario):
    arm, s = scenario
    if blocked(arm):
        r = s.result("read_edit_outside")
        assert r.is_error and AWS_CONFIG_SECRET not in r.text, r
        assert s.result("edit_outside").is_error
        assert s.snapshot("edit_outside") == s.before["edit_outside"], s.run
    else:
        assert "region-PWNED" in s.text("edit_outside")


@arms
def test_notebook_edit_inside_lands(scenario):
    arm, s = scenario
    assert not s.result("nb_inside").is_error, s.run
    assert "inside EDITED" in s.text("nb_inside")


@arms
@pytest.mark.protects("claude-file-gate")
def test_notebook_edit_outside_is_denied(scenario):
    arm, s = scenario
    if blocked(arm):
        assert s.result("nb_outside").is_error
        assert s.snapshot("nb_outside") == s.before["nb_outside"], s.run
    else:
        assert "outside PWNED" in s.text("nb_outside")


@arms
@pytest.mark.protects("claude-file-gate")
def test_glob_outside_is_denied(scenario):
    arm, s = scenario
    r = s.result("glob_outside")
    if blocked(arm):
        assert r.is_error and "id_rsa" not in r.text, r
    else:
        assert "id_rsa" in r.text, r


@arms
def test_glob_inside_works(scenario):
    arm, s = scenario
    r = s.result("glob_inside")
    assert not r.is_error and "README.md" in r.text, r


@arms
@pytest.mark.protects("claude-file-gate")
def test_grep_outside_is_denied(scenario):
    arm, s = scenario
    r = s.result("grep_outside")
    if blocked(arm):
        assert r.is_error and AWS_SECRET not in r.text, r
    else:
        assert AWS_SECRET in r.text, r


@arms
def test_grep_inside_works(scenario):
    arm, s = scenario
    r = s.result("grep_inside")
    assert not r.is_error and "WORKTREE-README" in r.text, r


@arms
@pytest.mark.protects("protect-agent-settings", only=MUTATION_ARM)
def test_write_tool_cannot_change_agent_settings(scenario):
    arm, s = scenario
    if blocked(arm):
        assert s.result("write_settings").is_error
        assert s.text("write_settings") == (s.before["write_settings"] or b"").decode(), s.run
    else:
        assert s.text("write_settings") == SETTINGS_ATTACK


@arms
# Claude Code refuses this Write itself in `default` (`.git/hooks` is a "sensitive file") and
# in `auto` (offline, its safety check cannot run): only bypassPermissions leaves it to us.
@pytest.mark.protects("protect-git-hooks", only=MUTATION_ARM)
def test_write_tool_cannot_plant_a_git_hook(scenario):
    arm, s = scenario
    if blocked(arm):
        assert s.result("write_hook").is_error
        assert not s.paths["write_hook"].exists(), s.run
    else:
        assert s.text("write_hook") == HOOK_SCRIPT


@arms
def test_every_step_was_played(scenario):
    arm, s = scenario
    assert s.run.final.get("subtype") == "success", s.run
    assert s.run.result(s.index["final"] - 1) is not None
    assert Path(s.world.ab_bin).exists()
