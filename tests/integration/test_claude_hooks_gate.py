"""The reference's gate table (reference-agent-boundary.md section 10.3, "Default path policy
table"), reproduced on Linux with the shipped default profile: Read/Write/Edit decided by
the PreToolUse hook's probe inside the real boundary."""

import json
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from claude_support import allow, deny, session_id
from conftest import TOOL_CONFIG_DIRS


@pytest.fixture
def sid(claude):
    claude.start("gate")
    return session_id("gate")


@pytest.fixture
def sdir(claude, sid):
    return claude.session_dir("gate")


def _tree(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        out += [os.path.normpath(os.path.join(rel, n)) for n in dirnames + filenames]
    return sorted(out)


def _common_dir(world):
    return world.repo / ".git"


# -- allowed -------------------------------------------------------------------------------------

def test_read_worktree_file(world, claude, sid):
    h = allow(claude.read(sid, world.wt / "README.md"))
    assert "allowed by sandbox probe" in h.reason
    assert h.updated is None


def test_read_absent_worktree_file(world, claude, sid):
    allow(claude.read(sid, world.wt / "absent.txt"))
    allow(claude.read(sid, world.wt / "no" / "such" / "dir" / "file.txt"))
    assert not (world.wt / "no").exists()


def test_read_git_common_dir_config(world, claude, sid):
    allow(claude.read(sid, _common_dir(world) / "config"))


def test_write_and_edit_worktree_files_leave_nothing_behind(world, claude, sid):
    before = _tree(world.wt)
    readme = (world.wt / "README.md").read_bytes()
    for tool in (claude.write, claude.edit):
        allow(tool(sid, world.wt / "README.md"))
    allow(claude.write(sid, world.wt / "new.txt"))
    allow(claude.write(sid, world.wt / "a" / "b" / "c.txt"))
    allow(claude.edit(sid, world.wt / "new.txt"))
    allow(claude.pre(sid, "NotebookEdit", {"notebook_path": str(world.wt / "x" / "n.ipynb"),
                                           "new_source": "1"}))
    # The probe undid what it tried: no new files or directories, the file untouched.
    assert _tree(world.wt) == before
    assert (world.wt / "README.md").read_bytes() == readme


def test_write_git_common_dir_index(world, claude, sid):
    index = _common_dir(world) / "index"
    assert index.is_file()
    before = index.read_bytes()
    allow(claude.write(sid, index))
    assert index.read_bytes() == before


def test_absent_denied_leaf_in_fresh_workdir_cleans_up(world, claude):
    # Reference: a fresh workdir with .claude/; new files are allowed and nothing remains.
    fresh = world.root / "fresh"
    (fresh / ".claude").mkdir(parents=True)
    claude.start("fresh", cwd=fresh)
    sid = session_id("fresh")
    allow(claude.write(sid, fresh / "new.txt", cwd=fresh))
    allow(claude.write(sid, fresh / "a" / "b" / "c.txt", cwd=fresh))
    # (plus the empty tool config dirs the session holds, issue 12)
    assert sorted(set(os.listdir(fresh)) - TOOL_CONFIG_DIRS) == [".claude"]
    assert os.listdir(fresh / ".claude") == []


def test_parallel_writes_of_new_files_are_all_allowed_and_leave_nothing(world, claude, sid):
    # Claude Code runs independent tool calls in parallel (e.g. several new files at once).
    before = _tree(world.wt)
    problems = []
    for round_ in range(5):
        paths = [world.wt / f"new{round_}" / "pkg" / f"f{i}.txt" for i in range(8)]
        with ThreadPoolExecutor(len(paths)) as pool:
            hooks = list(pool.map(lambda p: claude.write(sid, p), paths))
        problems += [h.reason for h in hooks if h.rc != 0 or h.decision != "allow"]
        if _tree(world.wt) != before:
            problems.append(f"round {round_} left {sorted(set(_tree(world.wt)) - set(before))}")
    assert problems == []


# -- denied: reads ---------------------------------------------------------------------------------

@pytest.mark.protects("landlock", "probe")
def test_read_secrets_denied(world, claude, sid):
    for path in (world.aws_config, world.ssh_key, world.aws_credentials,
                 world.home / ".aws" / "new", world.home / ".ssh"):
        h = deny(claude.read(sid, path))
        assert "blocked by sandbox policy" in h.reason, h


@pytest.mark.protects("landlock", "probe")
def test_read_profiles_denied(world, claude, sid):
    deny(claude.read(sid, world.profiles / "default.yaml"))


@pytest.mark.protects("landlock", "probe")
def test_read_own_session_files_denied(world, claude, sid, sdir):
    for name in ("policy.json", "boundary.json", "nono-profile.json"):
        deny(claude.read(sid, sdir / name))


@pytest.mark.protects("landlock", "probe")
def test_read_home_outside_grants_denied(world, claude, sid):
    (world.home / "notes.txt").write_text("HOME-NOTES\n")
    deny(claude.read(sid, world.home / "notes.txt"))
    deny(claude.read(sid, world.repo / "README.md"))  # the main checkout's files


# -- denied: writes --------------------------------------------------------------------------------

@pytest.mark.protects("landlock", "probe")
def test_write_secrets_and_home_denied(world, claude, sid):
    before = world.aws_config.read_bytes()
    targets = [world.aws_config, world.home / "evil.txt", world.home / ".aws" / "x",
               world.home / ".ssh" / "authorized_keys2", world.home / "new" / "dir" / "f"]
    for path in targets:
        deny(claude.write(sid, path))
        deny(claude.edit(sid, path))
    assert world.aws_config.read_bytes() == before
    for path in targets[1:]:
        assert not os.path.lexists(path), path
    assert not (world.home / "new").exists()


def test_write_profiles_denied(world, claude, sid):
    before = (world.profiles / "default.yaml").read_bytes()
    h = deny(claude.write(sid, world.profiles / "default.yaml"))
    assert "refusing to let the sandbox rewrite its own policy" in h.reason
    deny(claude.edit(sid, world.profiles / "default.yaml"))
    deny(claude.write(sid, world.profiles / "evil.yaml"))
    assert (world.profiles / "default.yaml").read_bytes() == before
    assert not (world.profiles / "evil.yaml").exists()


def test_write_session_files_denied(world, claude, sid, sdir):
    claude.start("other")
    other = claude.session_dir("other")
    for path in (sdir / "policy.json", sdir / "boundary.json", other / "policy.json",
                 other / "boundary.json", world.sessions / "planted" / "x",
                 world.state / "bin" / "agent-boundary"):
        h = deny(claude.write(sid, path))
        assert "refusing to let the sandbox rewrite its own policy" in h.reason, h
    assert not (world.sessions / "planted").exists()
    assert not (world.state / "bin").exists()


def test_write_plugin_files_denied(world, claude, sid):
    root = claude.plugin_root
    for path in (root / "hooks" / "hooks.json", root / "bin" / "bootstrap",
                 root / ".claude-plugin" / "plugin.json", root / "new-file"):
        deny(claude.write(sid, path))
        deny(claude.edit(sid, path))
    assert not (root / "new-file").exists()
    # Reading the plugin's files is denied as well (the whole root is protected).
    deny(claude.read(sid, root / "hooks" / "hooks.json"))


def test_write_installation_denied(world, claude, sid):
    deny(claude.write(sid, world.prefix / "bin" / "agent-boundary"))
    deny(claude.write(sid, world.prefix / "lib" / "agent-boundary" / "plugins" / "backend-x.so"))


# -- special files ---------------------------------------------------------------------------------

def test_a_probe_stuck_in_open_is_denied_at_its_deadline(world, claude):
    """README: a hung mount cannot stall the probe. The stand-in for a path whose open()
    never returns (a mount served by a stopped process) is a copy of the install whose probe
    helper never answers; the hook must deny at the probe's deadline (5 s), well inside its
    own 20 s, instead of waiting."""
    import shutil
    import subprocess
    import time
    copy = world.root / "prefix-hung"
    shutil.copytree(world.prefix, copy, symlinks=True)
    probe = copy / "libexec" / "agent-boundary" / "probe"
    probe.unlink()
    probe.write_text("#!/bin/sh\nexec sleep 60\n")
    probe.chmod(0o755)
    binary = str(copy / "bin" / "agent-boundary")
    sid = session_id("hung")
    assert world.ab("session", "create", world.sessions / sid, binary=binary).returncode == 0
    payload = json.dumps(claude.payload(sid, "Read", {"file_path": str(world.wt / "README.md")}))
    t0 = time.monotonic()
    r = subprocess.run([binary, "claude", "hook", "PreToolUse"], cwd=str(world.wt),
                       env=claude.full_env(), input=payload, capture_output=True, text=True,
                       timeout=30)
    elapsed = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny", out
    assert "timed out" in out["permissionDecisionReason"], out
    assert 4.0 <= elapsed < 15.0, elapsed


@pytest.mark.parametrize("tool", ["Read", "Write", "Edit"])
def test_fifo_in_workdir_is_decided_promptly(world, claude, sid, tool):
    fifo = world.wt / "fifo"
    os.mkfifo(fifo)
    tool_input = {"file_path": str(fifo)}
    if tool == "Write":
        tool_input["content"] = "x"
    elif tool == "Edit":
        tool_input.update(old_string="a", new_string="b")
    h = claude.pre(sid, tool, tool_input, timeout=30)
    assert h.elapsed < 10, f"the hook took {h.elapsed:.1f}s on a FIFO: {h!r}"
    assert h.rc == 0, h
    assert h.decision in ("allow", "deny"), h


def test_fifo_as_path_parent_is_decided_promptly(world, claude, sid):
    os.mkfifo(world.wt / "fifo")
    h = claude.read(sid, world.wt / "fifo" / "child")
    assert h.elapsed < 10, h
    assert h.decision in ("allow", "deny"), h


def test_read_through_symlink_to_secret_denied(world, claude, sid):
    (world.wt / "innocent").symlink_to(world.ssh_key)
    deny(claude.read(sid, world.wt / "innocent"))
    deny(claude.read(sid, "innocent"))
    (world.wt / "linkdir").symlink_to(world.home / ".ssh")
    deny(claude.read(sid, world.wt / "linkdir" / "id_rsa"))


def test_read_through_symlink_in_workdir_is_resolved(world, claude, sid):
    # The link sits in a directory the sandbox writes, but nothing sandboxed runs between the
    # check and the tool (test_file_tool_race.py): the tool gets the link's target.
    (world.wt / "alias").symlink_to(world.wt / "README.md")
    h = allow(claude.read(sid, world.wt / "alias"))
    assert h.updated == {"file_path": str(world.wt / "README.md")}
    (world.wt / "node_modules" / ".bin").mkdir(parents=True)
    (world.wt / "node_modules" / "tool.js").write_text("tool\n")
    (world.wt / "node_modules" / ".bin" / "tool").symlink_to("../tool.js")
    h = allow(claude.read(sid, world.wt / "node_modules" / ".bin" / "tool"))
    assert h.updated == {"file_path": str(world.wt / "node_modules" / "tool.js")}


def test_write_through_symlink_to_secret_denied(world, claude, sid):
    (world.wt / "evil-link").symlink_to(world.aws_config)
    before = world.aws_config.read_bytes()
    deny(claude.write(sid, world.wt / "evil-link"))
    (world.wt / "dangling").symlink_to(world.home / "planted.txt")
    deny(claude.write(sid, world.wt / "dangling"))
    assert world.aws_config.read_bytes() == before
    assert not (world.home / "planted.txt").exists()


def test_symlink_outside_writable_dirs_is_followed(world, claude, sid):
    # A link in a directory the sandbox cannot write is stable: its target decides.
    link = world.root / "wt-link"
    link.symlink_to(world.wt)
    h = allow(claude.read(sid, link / "README.md"))
    assert h.updated == {"file_path": str(world.wt / "README.md")}
    secret_link = world.root / "ssh-link"
    secret_link.symlink_to(world.ssh_key)
    deny(claude.read(sid, secret_link))


def test_relative_path_is_made_absolute_and_canonical(world, claude, sid):
    sub = world.wt / "sub"
    sub.mkdir()
    h = allow(claude.pre(sid, "Read", {"file_path": "../README.md", "offset": 1, "limit": 5},
                         cwd=sub))
    assert h.updated == {"file_path": str(world.wt / "README.md"), "offset": 1, "limit": 5}
    h = allow(claude.read(sid, "README.md"))
    assert h.updated["file_path"] == str(world.wt / "README.md")
    h = allow(claude.read(sid, f"{world.wt}/sub/../README.md"))
    assert h.updated["file_path"] == str(world.wt / "README.md")
    h = allow(claude.write(sid, "sub/new.txt"))
    assert h.updated["file_path"] == str(sub / "new.txt")
    assert h.updated["content"] == "PROBE-CONTENT\n"
    assert not (sub / "new.txt").exists()


def test_relative_path_escaping_the_workdir_denied(world, claude, sid):
    deny(claude.read(sid, "../home/.ssh/id_rsa", cwd=world.wt))
    rel = os.path.relpath(world.ssh_key, world.wt)
    deny(claude.read(sid, rel))


def test_tilde_path_is_not_expanded_into_home(world, claude, sid):
    # Claude expands ~ before the hook; a literal `~` is a relative name in the cwd.
    h = claude.read(sid, "~/.ssh/id_rsa")
    if h.decision == "allow":
        assert h.updated["file_path"] == str(world.wt / "~" / ".ssh" / "id_rsa")
    else:
        deny(h)


# -- Linux: denies inside the writable workdir (issue 4) ------------------------------------------

# Not the probe's: the gate refuses held paths by name before it probes (the mount-protection
# mutant takes both layers away).
@pytest.mark.protects("mount-protection")
def test_claude_settings_in_workdir_are_protected(world, claude, sid):
    # The session created `.claude` and placeholders for both files (issue 4).
    (world.wt / ".claude").mkdir(exist_ok=True)
    (world.wt / ".claude" / "settings.json").write_text(json.dumps({"hooks": {}}))
    for name in ("settings.json", "settings.local.json"):
        deny(claude.write(sid, world.wt / ".claude" / name))
        deny(claude.edit(sid, world.wt / ".claude" / name))



@pytest.mark.protects("pinned-files")
def test_a_session_missing_a_pinned_file_denies_file_tools(world, claude, sid, sdir):
    # Without protect.json the probe would run without the read-only binds and answer
    # "allowed" for the git hooks; the hook must deny instead, and say how to fix it.
    (sdir / "protect.json").unlink()
    for h in (claude.write(sid, world.repo / ".git" / "hooks" / "pre-commit"),
              claude.read(sid, world.wt / "README.md")):
        reason = deny(h).reason
        assert "protect.json" in reason and "reload" in reason, reason
    assert not (world.repo / ".git" / "hooks" / "pre-commit").exists()
