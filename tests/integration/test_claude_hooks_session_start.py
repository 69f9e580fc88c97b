"""Claude Code SessionStart hook: `agent-boundary claude hook SessionStart`.

Creates (or resumes, untouched) the session for Claude's session id, exports PATH through
CLAUDE_ENV_FILE, pins the plugin root as protected, prunes idle sessions, checks
enforcement, and honours a narrower project profile."""

import json
import os
import shutil
import subprocess
import time

import pytest

from claude_support import session_id
from conftest import (AWS_CONFIG_SECRET, SAFE_PATH, assert_no_crash, assert_ok, file_mode,
                      write_script)

DAY = 24 * 3600


def _status(world, d):
    r = world.ab("--session-dir", d, "status")
    assert_ok(r)
    return r.stdout.splitlines()[0]


def _status_json(world, d):
    r = world.ab("--session-dir", d, "status", "--json")
    assert_ok(r)
    return json.loads(r.stdout)


def _stderr_lines(r):
    return r.stderr.splitlines()


# -- creation ----------------------------------------------------------------------------------

@pytest.mark.protects("self-test")  # its landlock part is the self-test's verdict
def test_creates_the_session(world, claude):
    sid = session_id("create")
    r = claude.session_start(sid)
    assert_no_crash(r)
    assert r.returncode == 0, r.stderr
    d = world.sessions / sid
    assert (d / "boundary.json").is_file()
    assert (d / "policy.json").is_file()
    assert _status(world, d) == "profile default state on"
    j = _status_json(world, d)
    assert j["workdir"] == str(world.wt)
    assert j["complete"] is True
    # The exact line the hook prints (the reference prints "profile default, state on").
    assert _stderr_lines(r)[0] == "[agent-boundary] profile default state on", r.stderr
    # Every stderr line is attributable, and the enforcement self-test passed.
    for line in _stderr_lines(r):
        assert line.startswith("[agent-boundary] "), r.stderr
    assert "NOT sandboxed" not in r.stderr and "self-test" not in r.stderr, r.stderr


def test_stdout_is_empty(world, claude):
    # Plain stdout of a SessionStart hook goes into Claude's context: nothing is printed there.
    r = claude.session_start(session_id("quiet"))
    assert_ok(r)
    assert r.stdout == ""


def test_workdir_is_the_payload_cwd_resolved(world, claude):
    sub = world.wt / "sub"
    sub.mkdir()
    link = world.root / "wt-link"
    link.symlink_to(world.wt)
    d = claude.start("cwd", cwd=link / "sub")
    assert _status_json(world, d)["workdir"] == str(sub)


def test_exports_path_to_the_env_file(world, claude):
    assert not claude.env_file.exists()
    claude.start("env")
    text = claude.env_file.read_text()
    exports = [l for l in text.splitlines() if l.startswith("export PATH=")]
    assert len(exports) == 1, text
    assert file_mode(claude.env_file) == 0o600
    # Sourced the way Claude sources it before a Bash command: the install's bin dir first.
    r = subprocess.run(["/bin/sh", "-c", '. "$1" && printf %s "$PATH"', "sh", str(claude.env_file)],
                       env={"PATH": SAFE_PATH}, capture_output=True, text=True, timeout=30)
    assert_ok(r)
    entries = r.stdout.split(":")
    assert entries[0] == str(world.prefix / "bin"), r.stdout
    assert entries[1:] == SAFE_PATH.split(":"), r.stdout


def test_env_file_existing_content_is_kept(world, claude):
    claude.env_file.write_text("export FOO=bar")  # no trailing newline
    claude.start("envkeep")
    lines = claude.env_file.read_text().splitlines()
    assert lines[0] == "export FOO=bar"
    assert lines[1].startswith("export PATH="), lines


def test_unwritable_env_file_is_reported_not_fatal(world, claude):
    target = world.root / "env-dir"
    target.mkdir()
    sid = session_id("envdir")
    r = claude.session_start(sid, env={"CLAUDE_ENV_FILE": str(target)})
    assert_no_crash(r)
    assert r.returncode == 0
    assert "could not write CLAUDE_ENV_FILE" in r.stderr
    assert (world.sessions / sid / "boundary.json").is_file()


# -- resume --------------------------------------------------------------------------------------

def test_resume_keeps_the_pinned_files(world, claude):
    d = claude.start("resume")
    before = {n: (d / n).read_bytes() for n in ("boundary.json", "policy.json",
                                                "nono-profile.json")}
    data = world.home / "data"
    data.mkdir()
    (data / "f.txt").write_text("LATER-GRANT\n")
    text = world.default_profile_text
    assert "\nread: []\n" in text, "the shipped default profile changed shape"
    (world.profiles / "default.yaml").write_text(
        text.replace("\nread: []\n", "\nread:\n  - $HOME/data\n"))

    r = claude.session_start(session_id("resume"), source="resume")
    assert_no_crash(r)
    assert r.returncode == 0, r.stderr
    assert _stderr_lines(r)[0] == "[agent-boundary] profile default state on", r.stderr
    after = {n: (d / n).read_bytes() for n in before}
    assert after == before
    # Still the old policy: the new grant did not leak in.
    assert world.run_in(d, "cat", data / "f.txt").returncode != 0


def test_resume_keeps_state_off(world, claude):
    d = claude.start("resoff")
    assert_ok(world.ab("--session-dir", d, "off"))
    r = claude.session_start(session_id("resoff"), source="resume")
    assert r.returncode == 0
    assert _stderr_lines(r)[0] == "[agent-boundary] profile default state off", r.stderr
    assert _status(world, d) == "profile default state off"


# -- invalid payloads ----------------------------------------------------------------------------

@pytest.mark.parametrize("sid", ["../x", "../../../../tmp/pwned-0001", "short", "a" * 65,
                                 "has space-0001", "pytest/evil-0001", "", None])
def test_invalid_session_id_makes_nothing(world, claude, sid):
    r = claude.session_start(sid)
    assert_no_crash(r)
    assert r.returncode == 0
    assert "no valid session id in the payload; not generating a policy" in r.stderr, r.stderr
    assert not world.sessions.exists() or os.listdir(world.sessions) == []
    assert not (world.state / "x").exists()
    assert not (world.root / "x").exists()
    assert not claude.env_file.exists()


@pytest.mark.parametrize("raw", ["not json", "[]", '{"session_id": 12345678}',
                                 '{"session_id": "pytest-rel-0001", "cwd": "relative/dir"}', ""])
def test_malformed_payload_is_reported(world, claude, raw):
    r = claude.session_start(None, raw=raw)
    assert_no_crash(r)
    assert r.returncode == 0
    assert "[agent-boundary] cannot read the SessionStart payload" in r.stderr, r.stderr
    assert not world.sessions.exists() or os.listdir(world.sessions) == []


# -- the plugin root -------------------------------------------------------------------------------

def test_plugin_root_is_pinned_and_unwritable(world, claude):
    d = claude.start("plugin")
    assert str(claude.plugin_root) in _status_json(world, d)["protected_paths"]
    root = claude.plugin_root
    hooks = root / "hooks" / "hooks.json"
    bootstrap = root / "bin" / "bootstrap"
    before = (hooks.read_bytes(), bootstrap.read_bytes())
    r = world.run_in(d, "sh", "-c", f"echo x > '{root}/f'")
    assert r.returncode != 0, r.stdout + r.stderr
    assert not (root / "f").exists()
    for cmd in (f"echo x >> '{hooks}'", f"echo 'exit 0' > '{bootstrap}'", f"rm -f '{bootstrap}'",
                f"mv '{hooks}' '{root}/moved.json'"):
        assert world.run_in(d, "sh", "-c", cmd).returncode != 0, cmd
    assert (hooks.read_bytes(), bootstrap.read_bytes()) == before


def test_plugin_root_stays_pinned_after_reload(world, claude):
    d = claude.start("pinreload")
    assert_ok(world.ab("--session-dir", d, "reload"))  # no CLAUDE_PLUGIN_ROOT here
    assert str(claude.plugin_root) in _status_json(world, d)["protected_paths"]
    r = world.run_in(d, "sh", "-c", f"echo x > '{claude.plugin_root}/f'")
    assert r.returncode != 0
    assert not (claude.plugin_root / "f").exists()


# -- the enforcement self-test ---------------------------------------------------------------------

@pytest.mark.protects("self-test")
def test_self_test_passes_quietly(world, claude):
    r = claude.session_start(session_id("selftest"))
    assert_ok(r)
    # Quiet because it passed, not because no session (and so no self-test) was made.
    assert (claude.session_dir("selftest") / "boundary.json").is_file(), r.stderr
    assert "could not" not in r.stderr, r.stderr
    assert "WARNING" not in r.stderr, r.stderr
    assert "self-test" not in r.stderr, r.stderr
    assert "NOT sandboxed" not in r.stderr, r.stderr


def test_self_test_detects_a_backend_that_does_not_enforce(world, claude):
    # A "nono" that identifies itself correctly but runs the command unconfined.
    fake = write_script(world.root / "fake-nono",
                        "#!/bin/sh\n"
                        "if [ \"$1\" = wrap ]; then\n"
                        "  while [ $# -gt 0 ] && [ \"$1\" != -- ]; do shift; done; shift\n"
                        "  exec \"$@\"\n"
                        "fi\n"
                        "exec /usr/local/bin/nono \"$@\"\n")
    r = claude.session_start(session_id("fakenono"), env={"AGENT_BOUNDARY_NONO": fake})
    assert_no_crash(r)
    assert r.returncode == 0
    # Caught while the session is created: from inside such a "boundary" the installed code
    # is writable, so no session is made (every tool call is then denied: no policy).
    assert "could not generate a policy" in r.stderr, r.stderr
    assert "is writable inside this boundary" in r.stderr, r.stderr


# -- pruning ---------------------------------------------------------------------------------------

def _plant_session(world, name, age_days, child_age_days=None):
    d = world.sessions / session_id(name)
    d.mkdir(mode=0o700)
    f = d / "boundary.json"
    f.write_text("{}")
    t_child = time.time() - (age_days if child_age_days is None else child_age_days) * DAY
    os.utime(f, (t_child, t_child))
    t = time.time() - age_days * DAY
    os.utime(d, (t, t))
    return d


def test_prune_removes_idle_sessions_only(world, claude):
    keep = claude.start("first")
    old = _plant_session(world, "old", 31)
    recent = _plant_session(world, "recent", 29)
    fresh = _plant_session(world, "fresh", 0)
    touched = _plant_session(world, "touched", 40, child_age_days=1)
    claude.start("second")
    assert not old.exists()
    assert recent.is_dir()
    assert fresh.is_dir()
    assert touched.is_dir()
    assert keep.is_dir()
    assert claude.session_dir("second").is_dir()
    assert not [n for n in os.listdir(world.sessions) if n.startswith(".")]


def test_prune_never_removes_the_session_being_resumed(world, claude):
    d = claude.start("idle")
    t = time.time() - 45 * DAY
    for name in os.listdir(d):
        os.utime(d / name, (t, t))
    os.utime(d, (t, t))
    before = (d / "policy.json").read_bytes()
    r = claude.session_start(session_id("idle"), source="resume")
    assert_ok(r)
    assert (d / "policy.json").read_bytes() == before
    assert _status(world, d) == "profile default state on"


def test_prune_ignores_plain_files(world, claude):
    claude.start("first")
    stray = world.sessions / "stray-file"
    stray.write_text("x")
    t = time.time() - 60 * DAY
    os.utime(stray, (t, t))
    claude.start("second")
    assert stray.is_file()


# -- the project's profile choice -----------------------------------------------------------------

DEFAULT_DENIES = ["$WORKDIR/.claude/settings.json", "$WORKDIR/.claude/settings.local.json"]


def test_project_profile_narrower_is_used(world, claude):
    world.profile("narrow", deny=DEFAULT_DENIES)
    (world.wt / ".agent-boundary-profile").write_text("narrow\n")
    r = claude.session_start(session_id("narrow"))
    assert_ok(r)
    assert _stderr_lines(r)[0] == "[agent-boundary] profile narrow state on", r.stderr
    assert "widen" not in r.stderr
    d = world.sessions / session_id("narrow")
    assert _status(world, d) == "profile narrow state on"
    assert _status_json(world, d)["profile"] == "narrow"


def test_project_profile_found_from_a_subdirectory(world, claude):
    world.profile("narrow", deny=DEFAULT_DENIES)
    (world.wt / ".agent-boundary-profile").write_text("narrow\n")
    sub = world.wt / "src" / "deep"
    sub.mkdir(parents=True)
    d = claude.start("narrowsub", cwd=sub)
    assert _status(world, d) == "profile narrow state on"


def test_project_profile_wider_is_refused(world, claude):
    other = world.home / "other"
    other.mkdir()
    (other / "secret.txt").write_text("OTHER-HOME-DATA\n")
    world.profile("wide", read=["$HOME/other"], deny=DEFAULT_DENIES)
    (world.wt / ".agent-boundary-profile").write_text("wide\n")
    r = claude.session_start(session_id("wide"))
    assert_ok(r)
    assert _stderr_lines(r)[0] == "[agent-boundary] profile default state on", r.stderr
    assert (f"[agent-boundary] the project asks for profile `wide`, which would widen the "
            f"boundary (it grants {other}); using `default`") in _stderr_lines(r), r.stderr
    d = world.sessions / session_id("wide")
    assert _status(world, d) == "profile default state on"
    r = world.run_in(d, "cat", other / "secret.txt")
    assert r.returncode != 0
    assert "OTHER-HOME-DATA" not in r.stdout


@pytest.mark.parametrize("kind,needle", [
    ("drops-deny", "it drops the deny of"),
    ("other-nono", "its `nono:` block differs"),
    ("self-edit", "it sets self_edit"),
])
def test_project_profile_other_widenings_are_refused(world, claude, kind, needle):
    if kind == "drops-deny":
        world.profile("proj")
    elif kind == "other-nono":
        world.write_profile("proj", "name: proj\ndescription: d\nallow: [$WORKDIR]\n"
                            f"deny: {json.dumps(DEFAULT_DENIES)}\n"
                            "nono:\n  extends: default\n  security:\n    groups: []\n")
    else:
        world.profile("proj", deny=DEFAULT_DENIES, extra="self_edit: true\n")
    (world.wt / ".agent-boundary-profile").write_text("proj")
    r = claude.session_start(session_id("proj"))
    assert_no_crash(r)
    assert r.returncode == 0
    assert "the project asks for profile `proj`" in r.stderr, r.stderr
    assert needle in r.stderr, r.stderr
    assert _status(world, world.sessions / session_id("proj")) == "profile default state on"


@pytest.mark.parametrize("name", ["nosuch", "../../etc/passwd", "a/b", ".hidden"])
def test_project_profile_unknown_or_bad_name_falls_back(world, claude, name):
    (world.wt / ".agent-boundary-profile").write_text(name + "\n")
    r = claude.session_start(session_id("badname"))
    assert_no_crash(r)
    assert r.returncode == 0
    if name == "nosuch":  # a plain name: said back, with why it cannot be used
        assert "unknown profile 'nosuch'" in r.stderr, r.stderr
    else:  # anything else is never echoed (the file is agent-writable)
        assert "does not hold a plain profile name" in r.stderr, r.stderr
    assert "using `default`" in r.stderr
    assert _status(world, world.sessions / session_id("badname")) == "profile default state on"


# -- the project file is agent-writable: it must not become a way out --------------------------

def test_project_profile_symlink_does_not_leak(world, claude):
    # The sandboxed agent can plant this link in its workdir; the hook runs outside.
    (world.wt / ".agent-boundary-profile").symlink_to(world.aws_config)
    r = claude.session_start(session_id("leak"))
    assert_no_crash(r)
    assert r.returncode == 0
    assert AWS_CONFIG_SECRET not in r.stderr + r.stdout, r.stderr
    assert _status(world, world.sessions / session_id("leak")) == "profile default state on"


@pytest.mark.parametrize("kind", ["directory", "large"])
def test_project_profile_unreadable_falls_back(world, claude, kind):
    f = world.wt / ".agent-boundary-profile"
    if kind == "directory":
        f.mkdir()
    else:
        f.write_text("narrow" + " " * 5000 + "\n")
    r = claude.session_start(session_id("unreadable"))
    assert_no_crash(r)
    assert r.returncode == 0
    assert _status(world, world.sessions / session_id("unreadable")) == "profile default state on"


def test_project_profile_fifo_does_not_hang(world, claude):
    os.mkfifo(world.wt / ".agent-boundary-profile")
    t0 = time.monotonic()
    try:
        r = claude.session_start(session_id("fifo"), timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("SessionStart hung on a FIFO .agent-boundary-profile")
    assert time.monotonic() - t0 < 10
    assert r.returncode == 0
    assert _status(world, world.sessions / session_id("fifo")) == "profile default state on"


# -- workdirs that would cover agent-boundary's own files ------------------------------------------

def test_workdir_covering_the_state_root_is_refused(world, claude):
    sid = session_id("homecwd")
    r = claude.session_start(sid, cwd=world.home)
    assert_no_crash(r)
    assert r.returncode == 0
    assert "[agent-boundary] could not generate a policy" in r.stderr, r.stderr
    assert not (world.sessions / sid).exists()
    h = claude.bash(sid, "cat ~/.ssh/id_rsa", cwd=world.home)
    assert h.rc == 0 and h.decision == "deny", h


@pytest.mark.protects("claude-plugin-read-only")
def test_plugin_root_inside_the_workdir_is_held_read_only(world, claude):
    """Claude runs a directory marketplace's hooks in place: a plugin inside the workdir
    (developing agent-boundary with agent-boundary) is readable inside, never writable."""
    inside = world.wt / "claude-plugin"
    shutil.copytree(claude.plugin_root, inside)
    sid = session_id("pluginwd")
    r = claude.session_start(sid, env={"CLAUDE_PLUGIN_ROOT": str(inside)})
    assert_no_crash(r)
    assert r.returncode == 0
    assert "could not generate a policy" not in r.stderr, r.stderr
    d = world.sessions / sid
    before = (inside / "bin" / "bootstrap").read_bytes()
    w = world.run_in(d, "/bin/sh", "-c", f"cat {inside}/hooks/hooks.json >/dev/null && "
                                         f"echo pwned >> {inside}/bin/bootstrap")
    assert w.returncode != 0, w
    assert (inside / "bin" / "bootstrap").read_bytes() == before
    assert_no_crash(w)
    # The control: the same append outside the boundary lands.
    with open(inside / "bin" / "bootstrap", "ab") as f:
        f.write(b"# host edit\n")
    assert (inside / "bin" / "bootstrap").read_bytes() != before


def test_env_file_fifo_does_not_hang(world, claude):
    fifo = world.root / "env-fifo"
    os.mkfifo(fifo)
    r = claude.session_start(session_id("envfifo"), env={"CLAUDE_ENV_FILE": str(fifo)},
                             timeout=30)
    assert_no_crash(r)
    assert r.returncode == 0
    assert "could not write CLAUDE_ENV_FILE" in r.stderr, r.stderr


def test_session_start_without_plugin_root(world, claude):
    d = world.sessions / session_id("noroot")
    r = claude.session_start(session_id("noroot"), drop=("CLAUDE_PLUGIN_ROOT",),
                             env={"CLAUDE_PLUGIN_ROOT": ""})
    assert_no_crash(r)
    assert r.returncode == 0
    assert _status(world, d) == "profile default state on"


def test_corrupt_session_on_resume_is_reported(world, claude):
    d = claude.start("corrupt")
    (d / "boundary.json").write_text("{not json")
    r = claude.session_start(session_id("corrupt"), source="resume")
    assert_no_crash(r)
    assert r.returncode == 0
    assert "[agent-boundary] could not generate a policy" in r.stderr, r.stderr
    assert "corrupt boundary.json" in r.stderr
    assert (d / "boundary.json").read_text() == "{not json"


# -- self_edit: a soft boundary, but never over what the hooks execute ---------------------------

@pytest.fixture
def self_edit_session(world, claude):
    d = claude.start("selfedit")
    world.profile("self-edit", extra="self_edit: true\n")
    assert_ok(world.ab("--session-dir", d, "use", "self-edit"))
    return d


def test_self_edit_keeps_runtime_and_installation_unwritable(world, claude, self_edit_session):
    d = self_edit_session
    for target in (world.state / "bin" / "planted", world.state / "runtimes" / "planted",
                   world.prefix / "lib" / "agent-boundary" / "plugins" / "planted.so"):
        r = world.run_in(d, "sh", "-c", f"mkdir -p '{target.parent}' && echo x > '{target}'")
        assert r.returncode != 0, target
        assert not target.exists()


def test_self_edit_keeps_the_plugin_root_unwritable(world, claude, self_edit_session):
    d = self_edit_session
    bootstrap = claude.plugin_root / "bin" / "bootstrap"
    before = bootstrap.read_bytes()
    r = world.run_in(d, "sh", "-c", f"echo 'touch /tmp/pwned' >> '{bootstrap}'")
    assert bootstrap.read_bytes() == before
    assert r.returncode != 0
    h = claude.write(session_id("selfedit"), bootstrap)
    assert h.decision == "deny", h


# -- session end -------------------------------------------------------------------------------

def test_session_end_is_quiet_and_keeps_the_session_for_resume(world, claude):
    d = claude.start("ending")
    before = (d / "policy.json").read_bytes()
    t0 = time.monotonic()
    r = claude.session_end(session_id("ending"))
    assert time.monotonic() - t0 < 1.5, "SessionEnd must return inside Claude's ~1.5 s budget"
    assert_no_crash(r)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""
    # nono keeps nothing running; the pinned files stay so `claude --resume` finds them.
    assert (d / "policy.json").read_bytes() == before
    assert _status(world, d) == "profile default state on"


@pytest.mark.parametrize("sid", ["../escape", "", "a/b"])
def test_session_end_with_an_invalid_id_only_notes_it(world, claude, sid):
    r = claude.session_end(sid)
    assert_no_crash(r)
    assert r.returncode == 0
    assert "session end" in r.stderr


def test_plugin_registers_the_session_end_hook(source_dir):
    hooks = json.loads((source_dir / "claude-plugin" / "hooks" / "hooks.json").read_text())
    (entry,) = hooks["hooks"]["SessionEnd"]
    assert entry["hooks"][0]["command"].endswith('agent-boundary" claude hook SessionEnd')
