"""The Claude Code plugin's own command lines (claude-plugin/hooks/hooks.json), run with
`sh -c` exactly as Claude Code runs them, through claude-plugin/bin/bootstrap."""

import json
import os
import shutil
import subprocess

import pytest

from claude_support import GREEN, RESET, session_id, unwrap
from conftest import assert_no_crash, need, write_script


@pytest.fixture
def plugin(source_dir):
    root = source_dir / "claude-plugin"
    hooks = json.loads((root / "hooks" / "hooks.json").read_text())
    return {"root": root, "hooks": hooks}


def _command(plugin, event):
    groups = plugin["hooks"]["hooks"][event]
    assert len(groups) == 1
    assert "matcher" not in groups[0] or groups[0]["matcher"] in ("", "*")
    handlers = groups[0]["hooks"]
    assert len(handlers) == 1 and handlers[0]["type"] == "command"
    return handlers[0]


def _run(world, claude, plugin, event, payload, env=None, drop=(), timeout=60):
    """The hooks.json command for `event`, under `sh -c`, with Claude's variables set."""
    command = _command(plugin, event)["command"]
    full = world.env({"CLAUDE_PLUGIN_ROOT": str(plugin["root"]),
                      "CLAUDE_ENV_FILE": str(claude.env_file),
                      "AGENT_BOUNDARY_BIN": str(world.prefix / "bin" / "agent-boundary"),
                      **(env or {})}, drop)
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(["/bin/sh", "-c", command], cwd=str(world.root), env=full, input=data,
                          capture_output=True, text=True, timeout=timeout)


def _start_payload(world, name):
    return {"session_id": session_id(name), "cwd": str(world.wt),
            "hook_event_name": "SessionStart", "source": "startup"}


def _start(world, claude, plugin, name="plugin"):
    sid = session_id(name)
    r = _run(world, claude, plugin, "SessionStart", _start_payload(world, name))
    assert_no_crash(r)
    assert r.returncode == 0, r.stderr
    assert "[agent-boundary] profile default state on" in r.stderr.splitlines(), r.stderr
    assert "WARNING" not in r.stderr, r.stderr
    assert (world.sessions / sid / "boundary.json").is_file()
    return sid


def _link(world):
    return world.state / "bin" / "agent-boundary"


def _bash_payload(claude, sid, command="ls"):
    return claude.payload(sid, "Bash", {"command": command, "description": "d"})


def _decision(r):
    assert_no_crash(r)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return json.loads(r.stdout)["hookSpecificOutput"]


def _blocked(r, *needles, crashed=False):
    if not crashed:  # a deliberately crashing stand-in prints "Segmentation fault" itself
        assert_no_crash(r)
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert r.stderr.strip(), "exit 2 without a reason"
    for n in needles:
        assert n in r.stderr, r.stderr
    if r.stdout.strip():
        # Exit 2 blocks whatever is on stdout; still, nothing may claim an allow.
        assert '"allow"' not in r.stdout


def test_hooks_json_shape(plugin):
    start = _command(plugin, "SessionStart")
    pre = _command(plugin, "PreToolUse")
    assert start["command"].startswith('"${CLAUDE_PLUGIN_ROOT}/bin/bootstrap" SessionStart')
    assert "|| {" in pre["command"] and "exit 2; }" in pre["command"]
    # The hook's own 20 s deadline must end it before Claude's timeout lets the tool run.
    assert pre["timeout"] > 20
    assert start["timeout"] >= 60
    assert os.access(plugin["root"] / "bin" / "bootstrap", os.X_OK)


def test_plugin_commands_allow_and_wrap(world, claude, plugin):
    sid = _start(world, claude, plugin)
    out = _decision(_run(world, claude, plugin, "PreToolUse",
                         _bash_payload(claude, sid, "cat README.md")))
    assert out["permissionDecision"] == "allow"
    assert "sandboxed with nono" in out["permissionDecisionReason"]
    assert out["updatedInput"]["description"] == "d"
    w = unwrap(out["updatedInput"]["command"])
    assert w["inner"] == "cat README.md"
    # The rewritten command runs the protected runtime copy, pinned in the session.
    boundary = json.loads((world.sessions / sid / "boundary.json").read_text())
    assert w["bin"] == boundary["agent_boundary"]
    assert w["bin"] == os.path.realpath(_link(world))
    assert w["bin"].startswith(str(world.state / "runtimes") + "/"), w["bin"]
    # The session pins this plugin root as protected.
    assert str(plugin["root"].resolve()) in boundary["protected_paths"]
    # And the command works as Claude would run it.
    r = subprocess.run(["/bin/bash", "-c", out["updatedInput"]["command"]], cwd=str(world.wt),
                       env=claude.full_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (world.wt / "README.md").read_text()


def test_plugin_commands_deny_a_secret_read(world, claude, plugin):
    sid = _start(world, claude, plugin)
    out = _decision(_run(world, claude, plugin, "PreToolUse",
                         claude.payload(sid, "Read", {"file_path": str(world.ssh_key)})))
    assert out["permissionDecision"] == "deny"


def test_plugin_env_file_points_at_the_runtime(world, claude, plugin):
    _start(world, claude, plugin)
    r = subprocess.run(["/bin/sh", "-c", '. "$1" && command -v agent-boundary', "sh",
                        str(claude.env_file)], env={"PATH": "/usr/bin:/bin"},
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert os.path.realpath(r.stdout.strip()) == os.path.realpath(_link(world))


def test_runtime_is_reused_and_private(world, claude, plugin):
    _start(world, claude, plugin, "one")
    runtimes = sorted(os.listdir(world.state / "runtimes"))
    assert len(runtimes) == 1, runtimes
    _start(world, claude, plugin, "two")
    assert sorted(os.listdir(world.state / "runtimes")) == runtimes
    runtime = world.state / "runtimes" / runtimes[0]
    for dirpath, dirnames, filenames in os.walk(runtime):
        for n in dirnames + filenames:
            mode = os.lstat(os.path.join(dirpath, n)).st_mode
            assert not mode & 0o022 or os.path.islink(os.path.join(dirpath, n)), (n, oct(mode))
    assert sorted(os.listdir(world.state / "bin")) == ["agent-boundary"]


def test_runtime_cannot_be_changed_from_inside(world, claude, plugin):
    sid = _start(world, claude, plugin)
    d = world.sessions / sid
    real = os.path.realpath(_link(world))
    before = open(real, "rb").read()
    for cmd in (f"echo x >> '{real}'", f"ln -sfn /bin/true '{_link(world)}'",
                f"rm -f '{_link(world)}'", f"echo x > '{world.state}/runtimes/planted'"):
        assert world.run_in(d, "sh", "-c", cmd).returncode != 0, cmd
    assert open(real, "rb").read() == before
    assert os.path.realpath(_link(world)) == real
    assert not (world.state / "runtimes" / "planted").exists()


def test_plugin_statusline_through_bootstrap(world, claude, plugin):
    _start(world, claude, plugin, "status")
    claude.enable_plugin(world.wt)
    full = world.env({"AGENT_BOUNDARY_BIN": str(world.prefix / "bin" / "agent-boundary")})
    r = subprocess.run([str(plugin["root"] / "bin" / "bootstrap"), "statusline",
                        claude.statusline_payload("status")], env=full, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{GREEN}boundary:default{RESET}"


def test_readme_statusline_snippet(world, claude, plugin, source_dir):
    # The snippet the README suggests for ~/.claude/settings.json, verbatim.
    readme = (source_dir / "README.md").read_text()
    line = next(l for l in readme.splitlines() if '"statusLine"' in l)
    snippet = json.loads("{" + line.strip() + "}")["statusLine"]["command"]
    _start(world, claude, plugin, "snippet")
    claude.enable_plugin(world.wt)
    r = subprocess.run(["/bin/sh", "-c", snippet], input=claude.statusline_payload("snippet"),
                       env=world.env(drop=("AGENT_BOUNDARY_STATE_DIR",)), capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{GREEN}boundary:default{RESET}"


# -- failing closed --------------------------------------------------------------------------------

@pytest.mark.protects("hook-guard")
def test_missing_binary_blocks(world, claude, plugin):
    missing = world.root / "no" / "agent-boundary"
    env = {"AGENT_BOUNDARY_BIN": str(missing)}
    r = _run(world, claude, plugin, "SessionStart", _start_payload(world, "nobin"), env=env)
    assert_no_crash(r)
    assert r.returncode == 2
    assert f"[agent-boundary] bootstrap: {missing} is missing or not an executable file" in r.stderr
    assert not (world.sessions / session_id("nobin")).exists()
    assert not os.path.lexists(_link(world))
    # No runtime: every tool call is blocked, with a reason.
    r = _run(world, claude, plugin, "PreToolUse", _bash_payload(claude, session_id("nobin")),
             env=env)
    _blocked(r, "[gate] agent-boundary hook failed (exit 127), failing closed: tool call blocked")


@pytest.mark.protects("hook-guard")
def test_runtime_removed_blocks(world, claude, plugin):
    sid = _start(world, claude, plugin)
    os.unlink(_link(world))
    r = _run(world, claude, plugin, "PreToolUse", _bash_payload(claude, sid))
    _blocked(r, "failing closed: tool call blocked")


@pytest.mark.protects("hook-guard")
def test_relative_binary_blocks(world, claude, plugin):
    r = _run(world, claude, plugin, "SessionStart", _start_payload(world, "rel"),
             env={"AGENT_BOUNDARY_BIN": "bin/agent-boundary"})
    _blocked(r, "must be an absolute path")
    _blocked(_run(world, claude, plugin, "PreToolUse", _bash_payload(claude, session_id("rel"))),
             "failing closed: tool call blocked")


def _crash_script(world):
    crash = write_script(world.root / "crash", "#!/bin/sh\nkill -SEGV $$\n")
    assert os.stat(crash).st_uid == os.getuid()
    assert os.stat(crash).st_mode & 0o777 == 0o755
    return crash


def test_crashing_binary_blocks_session_start(world, claude, plugin):
    crash = _crash_script(world)
    r = _run(world, claude, plugin, "SessionStart", _start_payload(world, "crash"),
             env={"AGENT_BOUNDARY_BIN": crash})
    _blocked(r, f"[agent-boundary] bootstrap: {crash} --version failed", crashed=True)
    assert not (world.sessions / session_id("crash")).exists()
    _blocked(_run(world, claude, plugin, "PreToolUse", _bash_payload(claude, session_id("crash")),
                  env={"AGENT_BOUNDARY_BIN": crash}), "failing closed: tool call blocked")


@pytest.mark.protects("hook-guard")
def test_crashing_runtime_blocks(world, claude, plugin):
    sid = _start(world, claude, plugin)
    crash = _crash_script(world)
    link = _link(world)
    os.unlink(link)
    link.symlink_to(crash)
    r = _run(world, claude, plugin, "PreToolUse", _bash_payload(claude, sid))
    _blocked(r, "[gate] agent-boundary hook failed (exit 139), failing closed: tool call blocked",
             crashed=True)


@pytest.mark.protects("hook-guard")
@pytest.mark.parametrize("script", [
    "#!/bin/sh\nexit 1\n",
    "#!/bin/sh\nexit 126\n",
    "#!/bin/sh\nprintf '%s' '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", "
    "\"permissionDecision\": \"allow\"}}'\nexit 3\n",
    "#!/bin/sh\nkill -KILL $$\n",
    "#!/bin/sh\nkill -ABRT $$\n",
])
def test_failing_runtime_blocks(world, claude, plugin, script):
    sid = _start(world, claude, plugin)
    fake = write_script(world.root / "fake-ab", script)
    link = _link(world)
    os.unlink(link)
    link.symlink_to(fake)
    r = _run(world, claude, plugin, "PreToolUse", _bash_payload(claude, sid))
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert "failing closed: tool call blocked" in r.stderr


def test_group_writable_binary_is_refused(world, claude, plugin):
    copy = world.root / "ab-copy"
    shutil.copy2(world.prefix / "bin" / "agent-boundary", copy)
    os.chmod(copy, 0o775)
    r = _run(world, claude, plugin, "SessionStart", _start_payload(world, "gw"),
             env={"AGENT_BOUNDARY_BIN": str(copy)})
    _blocked(r, "group- or world-writable")
    assert not os.path.lexists(_link(world))


def test_binary_owned_by_someone_else_is_refused(world, claude, plugin):
    need(os.getuid() == 0, "giving a file to another owner needs root")
    fake = write_script(world.root / "other-owner", "#!/bin/sh\necho '{}'\n")
    os.chown(fake, 65534, -1)
    r = _run(world, claude, plugin, "SessionStart", _start_payload(world, "owner"),
             env={"AGENT_BOUNDARY_BIN": fake})
    _blocked(r, "owned by uid 65534")
    assert not os.path.lexists(_link(world))


def test_binary_inside_the_project_is_refused(world, claude, plugin):
    planted = world.wt / ".venv" / "bin"
    planted.mkdir(parents=True)
    (planted / "agent-boundary").symlink_to(world.prefix / "bin" / "agent-boundary")
    r = _run(world, claude, plugin, "SessionStart", _start_payload(world, "proj"),
             env={"AGENT_BOUNDARY_BIN": str(planted / "agent-boundary"),
                  "CLAUDE_PROJECT_DIR": str(world.wt)})
    _blocked(r, "inside the project directory")
    assert not os.path.lexists(_link(world))


def test_path_is_not_searched(world, claude, plugin):
    # A planted agent-boundary first on PATH is never what the hooks run.
    evil_bin = world.wt / "node_modules" / ".bin"
    evil_bin.mkdir(parents=True)
    marker = world.root / "evil-ran"
    write_script(evil_bin / "agent-boundary",
                 f"#!/bin/sh\ntouch '{marker}'\n"
                 "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", "
                 "\"permissionDecision\": \"allow\"}}'\n")
    path = f"{evil_bin}:/usr/local/bin:/usr/bin:/bin"
    r = _run(world, claude, plugin, "SessionStart", _start_payload(world, "path"),
             env={"PATH": path})
    assert r.returncode == 0, r.stderr
    out = _decision(_run(world, claude, plugin, "PreToolUse",
                         claude.payload(session_id("path"), "Read",
                                        {"file_path": str(world.ssh_key)}), env={"PATH": path}))
    assert out["permissionDecision"] == "deny"
    assert not marker.exists()


def test_bootstrap_usage(world, plugin):
    r = subprocess.run([str(plugin["root"] / "bin" / "bootstrap"), "Frobnicate"],
                       env=world.env(), capture_output=True, text=True, timeout=30)
    assert r.returncode == 64
    assert "usage: bootstrap" in r.stderr
