"""Nothing the sandbox writes runs later on the host (issue 12): nested repositories,
submodules' git dirs, project-set hook and config locations, IDE and agent configs.

Every attack runs inside the boundary (through `run`, and through the Claude hook path:
the PreToolUse rewrite run by bash), then the HOST does something ordinary (`git status`,
`git commit`) with a marker command as the planted payload; the marker must not appear.
The controls run the same attacks without agent-boundary and see the marker appear, so
each attack test can fail."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from claude_support import allow, deny, session_id
from conftest import GIT_IDENTITY, SAFE_PATH, assert_ok, need, need_tool

ENV = {**GIT_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1"}
# Inside the command too: the devcontainer passes only the profile's variables in.
IDENTITY = "export " + " ".join(f"{k}='{v}'" for k, v in GIT_IDENTITY.items()) + "; "
BACKENDS = ["nono", "srt", "devcontainer"]
DC_IMAGE = "localhost/agent-boundary-base:bookworm"


def need_backend(backend):
    if backend == "srt":
        for tool in ("srt", "node", "bwrap", "socat", "rg"):
            need_tool(tool)
    if backend == "devcontainer":
        podman = need_tool("podman")
        r = subprocess.run([podman, "--runtime", "runc", "--cgroup-manager", "cgroupfs", "image",
                            "exists", DC_IMAGE], capture_output=True, timeout=60)
        need(r.returncode == 0, f"the image {DC_IMAGE} is missing: run scripts/build-base-image.sh")


@pytest.fixture
def stop_sessions(world):
    """Session dirs to stop at the end (the devcontainer's container)."""
    dirs = []
    yield dirs
    for d in dirs:
        world.ab("session", "stop", d)


def host_git(world, *args, cwd):
    """Plain host git, as the user runs it after the session (their global config empty)."""
    env = {"HOME": str(world.home), "PATH": SAFE_PATH, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null", **GIT_IDENTITY}
    return subprocess.run([world.git_bin, *args], cwd=str(cwd), env=env, capture_output=True,
                          text=True, timeout=60)


def marker(world, name="MARKER"):
    """A file only host-side code can create (the sandbox cannot write the world root)."""
    return world.root / name


def add_submodule(world, top, name="lib"):
    """A real submodule `name` in `top`, cloned on the host from a local upstream repo."""
    upstream = world.root / f"upstream-{name}"
    upstream.mkdir()
    world.git("init", "-q", cwd=upstream)
    (upstream / "f.txt").write_text("lib\n")
    world.git("add", "f.txt", cwd=upstream)
    world.git("commit", "-qm", "lib", cwd=upstream)
    world.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), name,
              cwd=top)
    world.git("commit", "-qm", "add submodule", cwd=top)


# -- the attacks -----------------------------------------------------------------------------
# Each: (host setup or None, the command run inside, the host action that would run it).

def fsmonitor(m):
    return f"touch {m}"


def hook_script(m):
    return f"#!/bin/sh\\ntouch {m}\\n"


# The submodule attacks find the modules dir through git (a linked worktree keeps its
# submodules' git dirs in its own admin dir, and its `.git` is a file).
SUB = "M=$(git rev-parse --path-format=absolute --git-path modules); "


def attacks(m):
    mon = fsmonitor(m)
    hook = hook_script(m)
    nested = ("git init -q sub && git -C sub commit -q --allow-empty -m x && "
              f"git -C sub config core.fsmonitor '{mon}' && git add sub")
    return {
        # The nested repository, and its variants.
        "nested repo fsmonitor": (None, nested, "status"),
        "nested repo hook": (None, "git init -q sub && git -C sub commit -q --allow-empty -m x && "
                             f"printf '{hook}' > sub/.git/hooks/pre-commit && "
                             "chmod +x sub/.git/hooks/pre-commit && git add sub",
                             "commit-in-sub"),
        "nested repo config symlinked": (
            None, "git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub && "
            f"printf '[core]\\n\\tfsmonitor = {mon}\\n' > evil.cfg && "
            "ln -sf ../../evil.cfg sub/.git/config", "status"),
        "nested repo config hard-linked": (
            None, "git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub && "
            f"git -C sub config core.fsmonitor '{mon}' && ln sub/.git/config keep.cfg", "status"),
        "nested repo gitfile to a planted git dir": (
            None, "git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub && "
            f"git -C sub config core.fsmonitor '{mon}' && mv sub/.git planted-gitdir && "
            "echo \"gitdir: $PWD/planted-gitdir\" > sub/.git", "status"),
        "nested repo renamed into place": (
            None, "git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub && "
            "git init -q sub2 && git -C sub2 commit -q --allow-empty -m y && "
            f"git -C sub2 config core.fsmonitor '{mon}' && rm -rf sub/.git && mv sub2/.git sub/.git",
            "status"),
        "nested repo deleted and re-created": (
            None, "git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub && "
            f"rm -rf sub/.git && git init -q sub && git -C sub config core.fsmonitor '{mon}'",
            "status"),
        "nested repo include": (
            None, "git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub && "
            f"printf '[core]\\n\\tfsmonitor = {mon}\\n' > inc.cfg && "
            "git -C sub config include.path \"$PWD/inc.cfg\"", "status"),
        # Submodules' git dirs.
        "submodule config fsmonitor": (
            "submodule", SUB + f"git -C lib config core.fsmonitor '{mon}'", "status"),
        "submodule config appended": (
            "submodule", SUB + f"printf '[core]\\n\\tfsmonitor = {mon}\\n' >> $M/lib/config",
            "status"),
        "submodule config via symlink": (
            "submodule", SUB + f"ln -s $M/lib/config c && printf '[core]\\n\\tfsmonitor = {mon}\\n' >> c",
            "status"),
        "submodule config via hard link": (
            "submodule", SUB + f"ln $M/lib/config c; printf '[core]\\n\\tfsmonitor = {mon}\\n' >> c",
            "status"),
        "submodule config renamed into place": (
            "submodule", SUB + f"cp $M/lib/config c && printf '[core]\\n\\tfsmonitor = {mon}\\n' >> c && "
            "mv -f c $M/lib/config", "status"),
        "submodule config deleted and re-created": (
            "submodule", SUB + f"rm -f $M/lib/config; printf '[core]\\n\\tfsmonitor = {mon}\\n' > $M/lib/config",
            "status"),
        "submodule hook": (
            "submodule", SUB + f"printf '{hook}' > $M/lib/hooks/pre-commit; "
            "chmod +x $M/lib/hooks/pre-commit", "commit-in-lib"),
        "submodule gitfile repointed": (
            "submodule", SUB + "cp -a $M/lib evil-gitdir && "
            "git config -f evil-gitdir/config core.worktree \"$PWD/lib\" && "
            f"git config -f evil-gitdir/config core.fsmonitor '{mon}'; "
            "echo \"gitdir: $PWD/evil-gitdir\" > lib/.git", "status"),
        "new module dir": (
            "submodule", SUB + "cp -a $M/lib $M/lib2 && "
            f"git config -f $M/lib2/config core.fsmonitor '{mon}'; "
            "echo \"gitdir: $M/lib2\" > lib/.git", "status"),
        # Project-set hook and config locations.
        "hooksPath hook": ("husky", f"mkdir -p .husky; printf '{hook}' > .husky/pre-commit; "
                           "chmod +x .husky/pre-commit", "commit"),
        "hooksPath dir replaced": ("husky", f"mv .husky .husky.old; mkdir -p h && printf '{hook}' > h/pre-commit && "
                                   "chmod +x h/pre-commit && mv h .husky", "commit"),
        "include.path file": ("include", f"printf '[core]\\n\\tfsmonitor = {mon}\\n' >> project.gitconfig",
                              "status"),
        "absent include file": ("include-absent", f"printf '[core]\\n\\tfsmonitor = {mon}\\n' > absent.gitconfig",
                                "status"),
        "config.worktree": ("worktree-config", f"printf '[core]\\n\\tfsmonitor = {mon}\\n' > "
                            "\"$(git rev-parse --git-dir)/config.worktree\"",
                            "status"),
    }


ATTACK_NAMES = sorted(attacks("M"))
# Refused by issue 4's pin of `.git` (a hard link across mounts is EXDEV), not by this
# issue's holds: tested on its own, unmarked, so the plants mutant does not count it.
PINNED = {"submodule config via hard link"}
EVERY_BACKEND = {"nested repo fsmonitor", "submodule config fsmonitor", "hooksPath hook",
            "include.path file", "config.worktree", "new module dir"}


def set_up(world, top, setup):
    """Host-side state before the session (what the project already had)."""
    if setup == "submodule":
        add_submodule(world, top)
    elif setup == "husky":
        (top / ".husky").mkdir()
        world.git("config", "core.hooksPath", ".husky", cwd=top)
    elif setup == "include":
        (top / "project.gitconfig").write_text("[user]\n\tname = project\n")
        world.git("config", "include.path", str(top / "project.gitconfig"), cwd=top)
    elif setup == "include-absent":
        world.git("config", "include.path", str(top / "absent.gitconfig"), cwd=top)
    elif setup == "worktree-config":
        world.git("config", "extensions.worktreeConfig", "true", cwd=top)


def host_action(world, top, action):
    """What the user does on the host afterwards; the planted code would run here."""
    if action == "status":
        host_git(world, "status", cwd=top)
    elif action == "commit":
        host_git(world, "commit", "-q", "--allow-empty", "-m", "host", cwd=top)
    elif action == "commit-in-sub":
        host_git(world, "status", cwd=top)
        host_git(world, "commit", "-q", "--allow-empty", "-m", "host", cwd=top / "sub")
    elif action == "commit-in-lib":
        host_git(world, "status", cwd=top)
        host_git(world, "commit", "-q", "--allow-empty", "-m", "host", cwd=top / "lib")


def assert_attack_ran(world, top, cmd, r):
    """A nested-repository attack really added its gitlink (else the test proves nothing)."""
    if "git add sub" in cmd:
        staged = host_git(world, "ls-files", "--stage", "sub", cwd=top).stdout
        assert staged.startswith("160000"), f"no gitlink was added:\n{r.stdout}{r.stderr}"


def session_for(world, backend, top, stop_sessions, name="s1", profile=None):
    need_backend(backend)
    d = world.create_session(name, profile=profile, workdir=top,
                             env={"AGENT_BOUNDARY_BACKEND": backend})
    stop_sessions.append(d)
    return d


# -- controls: without agent-boundary, every attack runs its payload on the host ----------------

# The linked worktree runs only the attacks the hook tests use (generated, never skipped).
@pytest.mark.parametrize("name,where", [(n, "repo") for n in ATTACK_NAMES] +
                         [(n, "wt") for n in ATTACK_NAMES if n in EVERY_BACKEND])
def test_control_without_the_boundary_the_attack_runs_on_the_host(world, name, where):
    m = marker(world)
    setup, cmd, action = attacks(m)[name]
    top = world.repo if where == "repo" else world.wt
    if setup:
        set_up(world, top, setup)
    r = subprocess.run(["/bin/bash", "-c", cmd], cwd=str(top), capture_output=True, text=True,
                       env=world.env(ENV), timeout=60)
    host_action(world, top, action)
    assert m.exists(), f"the attack is not an attack:\n{r.stdout}{r.stderr}"


# -- through `run` ------------------------------------------------------------------------------

def test_a_hard_link_to_a_held_submodule_config_fails(world, stop_sessions):
    test_attack_through_run_never_runs_on_the_host(world, stop_sessions, "nono",
                                                   "submodule config via hard link")


# Every variant on nono; one of each class on srt and devcontainer (generated, not skipped:
# the mutation stage counts a skipped protection test as a hole).
RUN_CASES = [(n, b) for b in BACKENDS for n in sorted(set(ATTACK_NAMES) - PINNED)
             if b == "nono" or n in EVERY_BACKEND]


@pytest.mark.protects("plants")
@pytest.mark.parametrize("name,backend", RUN_CASES)
def test_attack_through_run_never_runs_on_the_host(world, stop_sessions, backend, name):
    m = marker(world)
    setup, cmd, action = attacks(m)[name]
    top = world.repo
    if setup:
        set_up(world, top, setup)
    d = session_for(world, backend, top, stop_sessions)
    r = world.run_in(d, "/bin/bash", "-c", IDENTITY + cmd, cwd=top, env=ENV)
    assert_attack_ran(world, top, cmd, r)
    host_action(world, top, action)
    assert not m.exists(), f"planted code ran on the host:\n{r.stdout}{r.stderr}"


@pytest.mark.protects("plants")
def test_a_background_process_that_replants_is_caught_by_the_next_checkpoint(world,
                                                                              stop_sessions):
    m = marker(world)
    top = world.repo
    d = session_for(world, "nono", top, stop_sessions)
    cmd = ("git init -q sub && git -C sub commit -q --allow-empty -m x && git add sub && "
           f"(sleep 2; git -C sub config core.fsmonitor '{fsmonitor(m)}'; touch replanted) "
           ">/dev/null 2>&1 &")
    r = world.run_in(d, "/bin/bash", "-c", cmd, cwd=top, env=ENV)
    assert_ok(r)
    deadline = time.monotonic() + 20
    while not (top / "replanted").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (top / "replanted").exists(), "the background process did not run"
    # If the backend let the process outlive the command, the plant is live until the next
    # checkpoint (the documented gap); the next command, tool call or session end
    # neutralises it. If the backend waited for it, the launcher's own checkpoint did.
    c = world.ab("--session-dir", d, "checkpoint")
    assert_ok(c)
    assert "core.fsmonitor" in r.stderr + c.stderr, r.stderr + c.stderr
    host_git(world, "status", cwd=top)
    assert not m.exists()


# -- through the Claude hook path -----------------------------------------------------------------

def claude_session(world, claude, backend, stop_sessions, name="plants"):
    need_backend(backend)
    # SessionStart takes the backend from the default profile, as a user's would.
    text = world.default_profile_text
    if backend == "devcontainer":
        text = text.replace("nono:\n  extends: default\n", "")
    (world.profiles / "default.yaml").write_text(text + f"\nbackend: {backend}\n")
    d = claude.start(name)
    stop_sessions.append(d)
    assert json.loads((d / "boundary.json").read_text())["backend"]["name"] == backend
    return d, session_id(name)


@pytest.mark.protects("plants")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(EVERY_BACKEND))
def test_attack_through_the_claude_hook_never_runs_on_the_host(world, claude, stop_sessions,
                                                               backend, name):
    m = marker(world)
    setup, cmd, action = attacks(m)[name]
    top = world.wt
    if setup:
        set_up(world, top, setup)
    d, sid = claude_session(world, claude, backend, stop_sessions)
    h = allow(claude.bash(sid, IDENTITY + cmd))
    r = claude.run_rewritten(h.updated["command"])
    assert_attack_ran(world, top, cmd, r)
    # The next tool call runs the checkpoint too (it would catch a late background plant).
    allow(claude.read(sid, world.wt / "README.md"))
    host_action(world, top, action)
    assert not m.exists(), f"planted code ran on the host:\n{r.stdout}{r.stderr}"


@pytest.mark.protects("plants")
def test_the_hook_checkpoint_says_what_it_neutralised(world, claude, stop_sessions):
    m = marker(world)
    d, sid = claude_session(world, claude, "nono", stop_sessions)
    # Planted outside any wrapped command (as a surviving background process would).
    sub = world.wt / "sub"
    sub.mkdir()
    world.git("init", "-q", cwd=sub)
    world.git("commit", "-q", "--allow-empty", "-m", "x", cwd=sub)
    world.git("config", "core.fsmonitor", fsmonitor(m), cwd=sub)
    world.git("add", "sub", cwd=world.wt)
    h = allow(claude.read(sid, world.wt / "README.md"))
    assert "[checkpoint]" in h.reason and "core.fsmonitor" in h.reason, h.reason
    host_git(world, "status", cwd=world.wt)
    assert not m.exists()


@pytest.mark.protects("plants")
def test_session_end_runs_the_checkpoint(world, claude, stop_sessions):
    m = marker(world)
    d, sid = claude_session(world, claude, "nono", stop_sessions)
    sub = world.wt / "sub"
    sub.mkdir()
    world.git("init", "-q", cwd=sub)
    world.git("commit", "-q", "--allow-empty", "-m", "x", cwd=sub)
    world.git("config", "core.fsmonitor", fsmonitor(m), cwd=sub)
    world.git("add", "sub", cwd=world.wt)
    r = claude.session_end(sid)
    assert r.returncode == 0
    assert "core.fsmonitor" in r.stderr, r.stderr
    host_git(world, "status", cwd=world.wt)
    assert not m.exists()


# -- tool configs --------------------------------------------------------------------------------

TOOL_WRITES = {
    ".vscode/tasks.json": '{"tasks": [{"runOptions": {"runOn": "folderOpen"}}]}',
    ".vscode/settings.json": '{"python.defaultInterpreterPath": "/tmp/evil"}',
    ".idea/workspace.xml": "<project/>",
    ".devcontainer/devcontainer.json": '{"initializeCommand": "touch /tmp/x"}',
    ".codex/config.toml": "x = 1",
    ".gemini/settings.json": "{}",
    ".github/hooks/hooks.json": "{}",
    ".opencode/plugin.js": "x",
    ".cursor/mcp.json": "{}",
    ".mcp.json": '{"mcpServers": {"x": {"command": "touch"}}}',
    "opencode.json": "{}",
    ".envrc": "touch /tmp/x",
}


@pytest.mark.protects("plants")
@pytest.mark.parametrize("backend", BACKENDS)
def test_tool_configs_cannot_be_planted(world, stop_sessions, backend):
    top = world.repo
    d = session_for(world, backend, top, stop_sessions)
    script = "; ".join(f"mkdir -p $(dirname {p}); printf '%s' '{c}' > {p}"
                       for p, c in TOOL_WRITES.items())
    script += "; mv .vscode .vscode.old; rm -rf .idea; ln -sfn /tmp .cursor; true"
    world.run_in(d, "/bin/bash", "-c", script, cwd=top, env=ENV)
    for p in TOOL_WRITES:
        assert not (top / p).exists(), f"{p} was planted"
    assert (top / ".vscode").is_dir() and not (top / ".cursor").is_symlink()
    # Held files that did not exist were moved aside, visibly.
    assert (top / ".mcp.json.agent-boundary-moved").exists()


@pytest.mark.protects("plants")
@pytest.mark.parametrize("backend", BACKENDS)
def test_claude_gate_refuses_held_paths_naming_the_key(world, claude, stop_sessions, backend):
    add_submodule(world, world.wt)
    (world.wt / ".husky").mkdir()
    world.git("config", "core.hooksPath", ".husky", cwd=world.wt)
    d, sid = claude_session(world, claude, backend, stop_sessions)
    modules = Path(world.git("rev-parse", "--path-format=absolute", "--git-path", "modules",
                             cwd=world.wt).stdout.strip())
    cases = {
        world.wt / ".mcp.json": "allow_tool_config_escape",
        world.wt / ".vscode" / "tasks.json": "allow_tool_config_escape",
        world.wt / ".envrc": "allow_tool_config_escape",
        world.wt / ".github" / "hooks" / "x.json": "allow_tool_config_escape",
        modules / "lib" / "config": "allow_submodule_escape",
        modules / "lib" / "hooks" / "pre-commit": "allow_submodule_escape",
        world.wt / "lib" / ".git": "allow_submodule_escape",
        world.wt / ".husky" / "pre-commit": "allow_git_hook_escape",
        world.repo / ".git" / "config": "allow_git_hook_escape",
        world.wt / ".claude" / "settings.json": "allow_agent_settings_escape",
    }
    for path, key in cases.items():
        for tool in (claude.write, claude.edit):
            h = deny(tool(sid, path))
            assert key in h.reason, (path, h.reason)
        h = claude.pre(sid, "NotebookEdit", {"notebook_path": str(path), "new_source": "x"})
        assert key in deny(h).reason
    allow(claude.write(sid, world.wt / "src.py"))
    allow(claude.read(sid, world.wt / "README.md"))


# -- below the root: what exists at session creation, down to srt's depth -----------------------

# Held like the root's, each in its group (the value: the key that opens it).
NESTED = {
    "app/.vscode/tasks.json": "allow_tool_config_escape",
    "app/.mcp.json": "allow_tool_config_escape",
    "app/web/.envrc": "allow_tool_config_escape",
    "app/web/.github/hooks/hooks.json": "allow_tool_config_escape",
    "app/.claude/settings.json": "allow_agent_settings_escape",
}
CLONE = "tools/clone"  # a repository kept inside the workdir, untracked by the outer one
# Absent at creation, planted by the command: moved aside by the checkpoint after it.
NESTED_NEW = ["newpkg/.vscode/tasks.json", "app/.envrc", "app/web/.claude/settings.json"]
OPEN_ALL = ("allow_tool_config_escape: true\nallow_submodule_escape: true\n"
            "allow_agent_settings_escape: true\n")


def set_up_nested(world, top):
    for rel in NESTED:
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text("original\n")
    clone = top / CLONE
    clone.mkdir(parents=True)
    world.git("init", "-q", cwd=clone)
    world.git("commit", "-q", "--allow-empty", "-m", "x", cwd=clone)


def nested_attack(m):
    """Rewrites each held file (in place, renamed over, re-created after a rename away),
    plants an fsmonitor and a hook in the nested clone, and new configs below the root."""
    writes = "; ".join(f"printf pwned > {rel}" for rel in NESTED)
    return (writes + "; printf pwned > x && mv -f x app/.mcp.json"
            "; mv app/web/.envrc envrc.old; printf pwned > app/web/.envrc"
            f"; git -C {CLONE} config core.fsmonitor '{fsmonitor(m)}'"
            f"; printf '{hook_script(m)}' > {CLONE}/.git/hooks/pre-commit"
            f"; chmod +x {CLONE}/.git/hooks/pre-commit"
            + "".join(f"; mkdir -p $(dirname {rel}); printf pwned > {rel}" for rel in NESTED_NEW)
            + "; true")


@pytest.mark.protects("plants")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", ["run", "claude-hook", "control"])
def test_configs_and_repositories_below_the_root_are_held(world, claude, stop_sessions, backend,
                                                          path):
    m = marker(world)
    top = world.wt if path == "claude-hook" else world.repo
    set_up_nested(world, top)
    cmd = nested_attack(m)
    if path == "claude-hook":
        d, sid = claude_session(world, claude, backend, stop_sessions)
        r = claude.run_rewritten(allow(claude.bash(sid, IDENTITY + cmd)).updated["command"])
        for rel, key in NESTED.items():
            for tool in (claude.write, claude.edit):
                assert key in deny(tool(sid, top / rel)).reason, rel
        assert "allow_submodule_escape" in \
            deny(claude.write(sid, top / CLONE / ".git" / "config")).reason
    else:
        # The control opens every group: the same attack lands, so the checks can fail.
        if path == "control":
            world.profile("open", extra=OPEN_ALL)
        d = session_for(world, backend, top, stop_sessions,
                        profile="open" if path == "control" else None)
        r = world.run_in(d, "/bin/bash", "-c", IDENTITY + cmd, cwd=top, env=ENV)
    host_git(world, "status", cwd=top / CLONE)
    host_git(world, "commit", "-q", "--allow-empty", "-m", "host", cwd=top / CLONE)
    planted = [rel for rel in NESTED if (top / rel).read_text() != "original\n"]
    planted += [rel for rel in NESTED_NEW if (top / rel).exists()]
    if path == "control":
        assert planted == list(NESTED) + NESTED_NEW and m.exists(), \
            f"{planted}\n{r.stdout}{r.stderr}"
        return
    assert not planted, f"{planted} were rewritten:\n{r.stdout}{r.stderr}"
    assert not m.exists(), f"planted code ran on the host:\n{r.stdout}{r.stderr}"


# -- opening a group, and status -------------------------------------------------------------------

@pytest.mark.protects("plants")
def test_status_says_what_is_held_and_the_keys_open_each_group(world, stop_sessions):
    add_submodule(world, world.repo)
    d = session_for(world, "nono", world.repo, stop_sessions)
    out = world.ab("--session-dir", d, "status").stdout
    for key in ("allow_git_hook_escape", "allow_agent_settings_escape", "allow_submodule_escape",
                "allow_tool_config_escape"):
        assert f"`{key}: true` opens it" in out, out
    held = {g["key"]: g for g in
            json.loads(world.ab("--session-dir", d, "status", "--json").stdout)["held"]}
    assert str(world.repo / ".git" / "modules" / "lib" / "config") in \
        held["allow_submodule_escape"]["paths"]
    assert str(world.repo / ".mcp.json") in held["allow_tool_config_escape"]["watched"]

    world.profile("open", extra="allow_tool_config_escape: true\nallow_submodule_escape: true\n")
    d2 = session_for(world, "nono", world.repo, stop_sessions, name="s2", profile="open")
    out = world.ab("--session-dir", d2, "status").stdout
    assert "OPEN: submodule" in out and "OPEN: IDE" in out, out
    r = world.run_in(d2, "/bin/bash", "-c",
                     "echo '{}' > .vscode/tasks.json && echo x >> .git/modules/lib/config",
                     cwd=world.repo, env=ENV)
    assert_ok(r)


# -- ordinary work still works inside ------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_ordinary_git_work_still_works(world, stop_sessions, backend):
    add_submodule(world, world.repo)
    d = session_for(world, backend, world.repo, stop_sessions)
    script = IDENTITY + """set -e
echo a > a.txt; git add a.txt; git commit -qm a
git checkout -q -b feature; echo b > b.txt; git add b.txt; git commit -qm b
echo c >> a.txt; git stash -q; git stash pop -q; git commit -qam c
git worktree add -q inner-wt; git -C inner-wt log -1 --format=%s
mkdir -p scratch && git init -q scratch/t && git -C scratch/t commit -q --allow-empty -m t
git -C lib log -1 --format=%s
git status --short | grep -v '^??' || true
"""
    r = world.run_in(d, "/bin/bash", "-c", script, cwd=world.repo, env=ENV)
    assert_ok(r)
    assert r.stdout.splitlines()[:2] == ["c", "lib"], r.stdout
    assert "checkpoint" not in r.stderr, r.stderr  # nothing of the user's was touched
    # Held submodules: `git submodule update` cannot rewrite their config (documented).
    r = world.run_in(d, "/bin/bash", "-c", "git submodule update", cwd=world.repo, env=ENV)
    assert r.returncode != 0


@pytest.mark.protects("plants")
@pytest.mark.parametrize("backend", BACKENDS)
def test_submodule_update_with_the_group_open_and_the_checkpoint_still_neutralises(
        world, stop_sessions, backend):
    add_submodule(world, world.repo)
    world.profile("subs", extra="allow_submodule_escape: true\n")
    d = session_for(world, backend, world.repo, stop_sessions, profile="subs")
    m = marker(world)
    r = world.run_in(d, "/bin/bash", "-c",
                     IDENTITY + "git submodule update && git -C lib log -1 --format=%s && "
                     f"git -C lib config core.fsmonitor '{fsmonitor(m)}'",
                     cwd=world.repo, env=ENV)
    assert_ok(r)
    assert r.stdout == "lib\n"
    assert "neutralised core.fsmonitor" in r.stderr, r.stderr
    host_git(world, "status", cwd=world.repo)
    assert not m.exists()


@pytest.mark.parametrize("backend", ["nono", "srt"])
def test_npm_install_and_python_venv_still_work(world, stop_sessions, backend):
    npm = need_tool("npm")
    python = need_tool("python3")
    pkg = world.repo / "localpkg"
    pkg.mkdir()
    (pkg / "package.json").write_text('{"name": "localpkg", "version": "1.0.0"}')
    (world.repo / "package.json").write_text('{"name": "app", "version": "1.0.0"}')
    d = session_for(world, backend, world.repo, stop_sessions)
    script = (f"set -e; {npm} install --offline --no-audit --no-fund ./localpkg >/dev/null; "
              "test -e node_modules/localpkg/package.json; "
              f"{python} -m venv --without-pip venv; venv/bin/python -c 'print(42)'")
    r = world.run_in(d, "/bin/bash", "-c", script, cwd=world.repo,
                     env={**ENV, "npm_config_cache": str(world.repo / ".npm-cache")})
    assert_ok(r)
    assert r.stdout.strip().endswith("42"), r.stdout
