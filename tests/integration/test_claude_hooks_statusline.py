"""`agent-boundary claude statusline '<json>'`: one coloured token when the plugin is enabled
for the session's checkout, nothing otherwise; it spawns nothing (no git, no jq)."""

import json
import os
import subprocess
import time

import pytest

from claude_support import GREEN, RED, RESET, YELLOW
from conftest import assert_no_crash, assert_ok

ON = f"{GREEN}boundary:default{RESET}"
OFF = f"{RED}boundary:off{RESET}"


@pytest.fixture
def started(claude):
    return claude.start("status")


def _line(claude, name="status", cwd=None, env=None, drop=()):
    r = claude.statusline(claude.statusline_payload(name, cwd), env=env, drop=drop)
    assert_no_crash(r)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr
    return r.stdout


def test_enabled_in_worktree_settings_is_green(world, claude, started):
    claude.enable_plugin(world.wt)
    assert _line(claude) == ON


def test_state_off_is_red(world, claude, started):
    claude.enable_plugin(world.wt)
    assert_ok(world.ab("--session-dir", started, "off"))
    assert _line(claude) == OFF
    assert_ok(world.ab("--session-dir", started, "on"))
    assert _line(claude) == ON


def test_plugin_disabled_is_red(world, claude, started):
    claude.enable_plugin(world.wt, value=False)
    assert _line(claude) == OFF


def test_no_settings_mention_is_empty(world, claude, started):
    assert _line(claude) == ""
    # Settings that exist but do not mention the plugin say nothing either.
    (world.wt / ".claude").mkdir(exist_ok=True)  # the session may have created it
    (world.wt / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"other@market": True}, "permissions": {}}))
    assert _line(claude) == ""


@pytest.mark.parametrize("arg", ["not json", "", "[]", "null", '{"session_id": 5}',
                                 '{"session_id": "pytest-status-0001"}',
                                 '{"session_id": "pytest-status-0001", "cwd": "relative"}',
                                 '{"session_id": "../x", "cwd": "/"}',
                                 '{"cwd": "/"}'])
def test_invalid_input_is_empty(world, claude, started, arg):
    claude.enable_plugin(world.wt)
    r = claude.statusline(arg)
    assert_no_crash(r)
    assert r.returncode == 0
    assert r.stdout == ""


def test_missing_argument_does_not_crash(world, claude):
    r = world.ab("claude", "statusline", env=claude.env())
    assert_no_crash(r)


def test_spawns_neither_git_nor_jq(world, claude, started):
    claude.enable_plugin(world.wt)
    empty = world.root / "empty-bin"
    empty.mkdir()
    assert _line(claude, env={"PATH": str(empty)}) == ON
    assert _line(claude, drop=("PATH",)) == ON


def test_spawns_nothing_even_when_tools_are_on_path(world, claude, started):
    # Fake git and jq that record being run: neither may be.
    claude.enable_plugin(world.wt)
    fake = world.root / "fake-bin"
    fake.mkdir()
    marker = world.root / "spawned"
    for tool in ("git", "jq", "sh", "bash"):
        p = fake / tool
        p.write_text(f"#!/bin/sh\necho {tool} >> '{marker}'\nexit 1\n")
        os.chmod(p, 0o755)
    assert _line(claude, env={"PATH": f"{fake}:/usr/bin:/bin"}) == ON
    assert not marker.exists(), marker.read_text()


def test_unknown_session_is_red(world, claude, started):
    claude.enable_plugin(world.wt)
    assert _line(claude, name="nosuch") == OFF


def test_from_a_subdirectory(world, claude, started):
    claude.enable_plugin(world.wt)
    sub = world.wt / "a" / "b"
    sub.mkdir(parents=True)
    assert _line(claude, cwd=sub) == ON


def test_main_checkout_settings_apply_to_the_worktree(world, claude, started):
    claude.enable_plugin(world.repo)
    assert _line(claude) == ON


def test_local_settings_win_over_shared(world, claude, started):
    claude.enable_plugin(world.wt, value=True)
    claude.enable_plugin(world.wt, value=False, name="settings.local.json")
    assert _line(claude) == OFF


def test_worktree_wins_over_main_checkout(world, claude, started):
    claude.enable_plugin(world.repo, value=True)
    claude.enable_plugin(world.wt, value=False)
    assert _line(claude) == OFF


def test_user_settings(world, claude, started):
    claude.enable_plugin(world.home, value=True)  # ~/.claude/settings.json
    assert _line(claude) == ON
    claude.enable_plugin(world.wt, value=False)  # the project overrides the user
    assert _line(claude) == OFF


def test_claude_config_dir(world, claude, started):
    config = world.root / "claude-config"
    config.mkdir()
    (config / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"agent-boundary@agent-boundary": True}}))
    assert _line(claude, env={"CLAUDE_CONFIG_DIR": str(config)}) == ON


def test_dev_marketplace_key(world, claude, started):
    claude.enable_plugin(world.wt, key="agent-boundary-dev@skills-dir")
    assert _line(claude) == ON


def test_invalid_settings_file_says_nothing(world, claude, started):
    (world.wt / ".claude").mkdir(exist_ok=True)  # the session may have created it
    (world.wt / ".claude" / "settings.local.json").write_text("{not json")
    claude.enable_plugin(world.repo)
    assert _line(claude) == ON


def test_self_edit_is_yellow(world, claude, started):
    world.profile("self-edit", extra="self_edit: true\n")
    assert_ok(world.ab("--session-dir", started, "use", "self-edit"))
    claude.enable_plugin(world.wt)
    assert _line(claude) == f"{YELLOW}boundary:self-edit{RESET}"


def test_corrupt_boundary_is_red(world, claude, started):
    claude.enable_plugin(world.wt)
    (started / "boundary.json").write_text("{not json")
    assert _line(claude) == OFF


def test_outside_any_checkout(world, claude, started):
    outside = world.root / "plain"
    outside.mkdir()
    assert _line(claude, cwd=outside) == ""
    claude.enable_plugin(outside)
    assert _line(claude, cwd=outside) == ON


def test_fifo_settings_file_does_not_hang(world, claude, started):
    # .claude/ sits in the sandbox-writable checkout (issue 4): a FIFO there must not stall
    # every status line render.
    (world.wt / ".claude").mkdir(exist_ok=True)  # the session may have created it
    os.mkfifo(world.wt / ".claude" / "settings.local.json")
    claude.enable_plugin(world.wt)
    t0 = time.monotonic()
    try:
        r = claude.statusline(claude.statusline_payload("status"), timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("the status line hung on a FIFO settings file")
    assert time.monotonic() - t0 < 10
    assert r.returncode == 0
    assert r.stdout in (ON, "")
