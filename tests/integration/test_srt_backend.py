"""The srt backend (Anthropic sandbox-runtime) against the real srt: sessions created with
`--backend srt`, commands through `run`/`exec`, and the Claude hook's probes.

srt runs every command in bubblewrap: reads are an allow-list (`denyRead: ["/"]`), denies
inside writable trees are read-only binds or tmpfs/placeholder masks, and the network is
an empty namespace behind srt's proxy with no domain allowed."""

import json
import os
import shutil
import stat
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from claude_support import allow, deny, session_id
from conftest import (AWS_SECRET, GIT_IDENTITY, README_TEXT, SAFE_PATH, SSH_SECRET, assert_error,
                      assert_ok, need_tool)

ENV = {**GIT_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1"}
SRT_PLACEHOLDERS = (".bashrc", ".bash_profile", ".gitconfig", ".gitmodules", ".mcp.json",
                    ".profile", ".ripgreprc", ".zshrc", ".zprofile", ".vscode", ".idea")


@pytest.fixture(scope="module")
def srt_tools():
    srt = need_tool("srt")
    for tool in ("node", "bwrap", "socat", "rg"):
        need_tool(tool)
    return {"srt": srt, "cli": os.path.realpath(srt)}


def create(world, name="s1", profile=None, workdir=None, env=None):
    d = world.session_path(name)
    args = ["--backend", "srt", "session", "create", d, "--workdir", workdir or world.wt]
    if profile:
        args += ["--profile", profile]
    r = world.ab(*args, env=env)
    assert_ok(r)
    assert r.stdout.splitlines()[0] == str(d), r.stdout
    return d


@pytest.fixture
def srt_session(world, srt_tools):
    return create(world)


def denied(result, *secrets):
    out = result.stdout + result.stderr
    assert result.returncode != 0, f"expected a denial, got exit 0:\n{out}"
    for s in secrets:
        assert s not in result.stdout, f"secret {s!r} leaked to stdout"


def settings(session):
    return json.loads((session / "srt-settings.json").read_text())


# -- the session --------------------------------------------------------------------------

def test_session_pins_srt_node_and_helpers(world, srt_session, srt_tools):
    bj = json.loads((srt_session / "boundary.json").read_text())
    text = json.dumps(bj)
    assert "srt" in text
    assert srt_tools["cli"] in text  # the JS entry, not the `srt` link
    node = os.path.realpath(shutil.which("node", path=SAFE_PATH))
    assert node in text
    for helper in ("bwrap", "socat", "rg"):
        assert os.path.realpath(shutil.which(helper, path=SAFE_PATH)) in text, helper
    f = srt_session / "srt-settings.json"
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    s = settings(srt_session)
    assert s["filesystem"]["denyRead"][0] == "/"
    assert str(world.wt) in s["filesystem"]["allowWrite"]
    assert s["network"] == {"allowedDomains": [], "deniedDomains": []}
    assert s["bwrapPath"].startswith("/") and s["ripgrep"]["command"].startswith("/")


def test_rendering_is_deterministic(world, srt_session):
    before = (srt_session / "srt-settings.json").read_text()
    assert_ok(world.ab("--session-dir", srt_session, "reload"))
    assert (srt_session / "srt-settings.json").read_text() == before


def test_missing_srt_is_a_typed_error_with_a_fix(world, srt_tools):
    d = world.session_path("nosrt")
    r = world.ab("--backend", "srt", "session", "create", d,
                 env={"AGENT_BOUNDARY_SRT": str(world.root / "no-such-srt")})
    assert_error(r, "srt is not an executable file", "fix:", "npm install -g", code=1)
    assert not d.exists()


# -- the workdir, argv, exit codes --------------------------------------------------------

def test_read_and_write_in_workdir(world, srt_session):
    r = world.run_in(srt_session, "sh", "-c", "cat README.md; echo x > new && cat new; pwd")
    assert_ok(r)
    assert r.stdout == README_TEXT + "x\n" + f"{world.wt}\n"
    assert (world.wt / "new").read_text() == "x\n"


def test_run_from_elsewhere_starts_in_the_workdir(world, srt_session):
    r = world.ab("--session-dir", srt_session, "run", "pwd", cwd="/")
    assert_ok(r)
    assert r.stdout == f"{world.wt}\n"


def test_exec_cwd_is_kept(world, srt_session):
    (world.wt / "sub dir").mkdir()
    r = world.ab("exec", "--session-dir", srt_session, "--cwd", world.wt / "sub dir", "--", "pwd")
    assert_ok(r)
    assert r.stdout == f"{world.wt}/sub dir\n"


def test_arguments_pass_verbatim(world, srt_session):
    args = ["a b", "it's", '"q"', "$HOME", "`id`", "*", "", "--", "-c", "!x", "a\\b",
            "new\nline", "=ls", "ä"]
    r = world.ab("--session-dir", srt_session, "run", "--", "printf", "[%s]", *args)
    assert_ok(r)
    assert r.stdout == "".join(f"[{a}]" for a in args)


def test_exit_code_and_stdin_pass_through(world, srt_session):
    r = world.run_in(srt_session, "sh", "-c", "exit 7")
    assert r.returncode == 7
    r = world.run_in(srt_session, "cat", input="from stdin\n")
    assert_ok(r)
    assert r.stdout == "from stdin\n"


def test_a_terminated_command_is_not_reported_as_success(world, srt_session):
    # srt itself exits 0 when its command dies of SIGTERM; the wrapper reports 128+15.
    marker = f"ab-srt-sleep-{uuid.uuid4().hex[:8]}"
    p = subprocess.Popen([world.ab_bin, "exec", "--session-dir", str(srt_session), "--",
                          "bash", "-c", f"exec -a {marker} sleep 60"], cwd=str(world.wt),
                         env=world.env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and marker not in _processes():
            time.sleep(0.1)
        assert marker in _processes(), "the command never started"
        p.terminate()
        assert p.wait(timeout=30) == 143
        time.sleep(0.5)
        assert marker not in _processes()
    finally:
        p.kill()
        p.wait()


def _processes():
    return subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_environment_and_path_reach_the_command(world, srt_session):
    r = world.run_in(srt_session, "env", env={"KEEP_ME": "kept", "PATH": f"/opt/x:{SAFE_PATH}"})
    assert_ok(r)
    lines = r.stdout.splitlines()
    assert "KEEP_ME=kept" in lines
    assert "NETRC=/dev/null" in lines  # the profile's env
    assert f"PATH=/opt/x:{SAFE_PATH}" in lines  # the caller's PATH, not srt's
    assert not any(line.startswith("AB_SRT_PATH") for line in lines)


def test_tmp_is_usable(world, srt_session):
    name = f"/tmp/ab-srt-{uuid.uuid4().hex}"
    try:
        r = world.run_in(srt_session, "sh", "-c", f"echo t > {name} && cat {name}")
        assert_ok(r)
        assert r.stdout == "t\n"
        assert Path(name).read_text() == "t\n"
    finally:
        Path(name).unlink(missing_ok=True)


def test_no_srt_placeholders_in_the_workdir(world, srt_session):
    # srt protects "dangerous" files in its own working directory by creating placeholders
    # there; it runs from the session dir, so the checkout sees none of them. (Our own
    # held tool-config directories, .vscode and .idea among them, are created empty on the
    # host at session creation and held read-only: those are on both sides.)
    r = world.run_in(srt_session, "ls", "-A")
    assert_ok(r)
    inside = set(r.stdout.split())
    on_host = set(os.listdir(world.wt))
    assert inside == on_host, (sorted(inside - on_host), sorted(on_host - inside))
    files = {n for n in on_host & set(SRT_PLACEHOLDERS) if not (world.wt / n).is_dir()}
    assert not files, sorted(files)
    assert not inside & {".bashrc", ".mcp.json", ".ripgreprc"}, sorted(inside)


def test_network_is_closed(world, srt_session):
    r = world.run_in(srt_session, "bash", "-c", "exec 3<>/dev/tcp/1.1.1.1/80")
    assert r.returncode != 0
    r = world.run_in(srt_session, "sh", "-c", "echo ${HTTPS_PROXY:+proxied}")
    assert_ok(r)
    assert r.stdout == "proxied\n"


# -- secrets and what lies outside the grants -----------------------------------------------

@pytest.mark.parametrize("attr,secret", [("ssh_key", SSH_SECRET), ("aws_credentials", AWS_SECRET)])
def test_secret_is_unreadable_and_unwritable(world, srt_session, attr, secret):
    path = getattr(world, attr)
    before = path.read_bytes()
    denied(world.run_in(srt_session, "cat", path), secret)
    denied(world.run_in(srt_session, "sh", "-c", f"echo PWNED > '{path}'"))
    # Hidden, not refused: inside the path does not exist, so `rm -f` "succeeds" there.
    world.run_in(srt_session, "rm", "-f", path)
    denied(world.run_in(srt_session, "mv", path, world.wt / "stolen"))
    assert path.read_bytes() == before
    assert not (world.wt / "stolen").exists()


def test_home_outside_grants_is_hidden(world, srt_session):
    (world.home / "notes.txt").write_text("HOME-NOTES\n")
    denied(world.run_in(srt_session, "cat", world.home / "notes.txt"), "HOME-NOTES")
    r = world.run_in(srt_session, "ls", "-A", world.home / ".ssh")
    assert "id_rsa" not in r.stdout
    world.run_in(srt_session, "sh", "-c", f"echo x > '{world.home}/evil.txt'")
    assert not (world.home / "evil.txt").exists()


def test_main_checkout_files_are_not_writable(world, srt_session):
    before = (world.repo / "README.md").read_bytes()
    world.run_in(srt_session, "sh", "-c", f"echo PWNED > '{world.repo}/README.md'")
    assert (world.repo / "README.md").read_bytes() == before


def test_system_dirs_are_readable_but_not_writable(world, srt_session):
    assert_ok(world.run_in(srt_session, "cat", "/etc/passwd"))
    denied(world.run_in(srt_session, "sh", "-c", "echo x > /etc/ab-srt-evil"))
    assert not Path("/etc/ab-srt-evil").exists()


@pytest.mark.parametrize("name", ["boundary.json", "policy.json", "srt-settings.json"])
def test_session_files_cannot_be_read_or_changed(world, srt_session, name):
    before = (srt_session / name).read_bytes()
    r = world.run_in(srt_session, "cat", srt_session / name)
    denied(r, '"filesystem"', '"format"')
    world.run_in(srt_session, "sh", "-c", f"echo '{{}}' > '{srt_session}/{name}'")
    assert (srt_session / name).read_bytes() == before


# -- denies inside the writable checkout -----------------------------------------------------

def test_profile_deny_inside_workdir_is_hidden_and_read_only(world, srt_tools):
    (world.wt / "secret.txt").write_text("TOPSECRET\n")
    (world.wt / "secrets").mkdir()
    (world.wt / "secrets" / "key").write_text("KEYSECRET\n")
    world.profile("denyin", deny=("$WORKDIR/secret.txt", "$WORKDIR/secrets"),
                  extra="git_common_dir: true\n")
    s = create(world, "denyin", profile="denyin")
    r = world.run_in(s, "/bin/bash", "-c",
                     "cat secret.txt; cat secrets/key; ls -A secrets; echo x > secret.txt; "
                     "echo y > secrets/key; echo z > secrets/new; rm -rf secret.txt secrets; "
                     "mv secrets s2; true", env=ENV)
    assert "TOPSECRET" not in r.stdout and "KEYSECRET" not in r.stdout
    assert "key" not in r.stdout
    assert (world.wt / "secret.txt").read_text() == "TOPSECRET\n"
    assert (world.wt / "secrets" / "key").read_text() == "KEYSECRET\n"
    assert sorted(os.listdir(world.wt / "secrets")) == ["key"]
    st = world.ab("--session-dir", s, "status")
    assert_ok(st)
    assert "DEGRADED" not in st.stdout + st.stderr


def test_deny_file_created_on_the_host_later_is_hidden(world, srt_session):
    settings_file = world.wt / ".claude" / "settings.local.json"
    assert not settings_file.exists()
    settings_file.write_text('{"LATER": 1}\n')
    r = world.run_in(srt_session, "cat", settings_file)
    denied(r, "LATER")


GIT_ATTACKS = {
    "write hook": "echo 'touch /tmp/pwned' > {common}/hooks/pre-commit",
    "append config": "printf '[core]\\n\\thooksPath = /tmp\\n' >> {common}/config",
    "git config hooksPath": "git config core.hooksPath /x",
    "repoint worktree": "echo 'gitdir: /tmp/evil' > .git",
    "overwrite settings.json": "echo '{{\"hooks\": 1}}' > .claude/settings.json",
    "create settings.local.json": "echo '{{\"hooks\": 1}}' > .claude/settings.local.json",
    "mv .claude aside": "mv .claude .claude.old && mkdir .claude",
    "mv hooks aside": "mv {common}/hooks {common}/hooks.old && mkdir {common}/hooks",
}


def _snapshot(world):
    common = world.repo / ".git"
    out = {}
    for p in [common / "config", world.wt / ".git", world.wt / ".claude"] + sorted(
            (common / "hooks").iterdir()):
        if p.is_dir():
            out[str(p)] = sorted(os.listdir(p))
        elif p.exists():
            out[str(p)] = p.read_bytes()
    return out


@pytest.mark.parametrize("name", sorted(GIT_ATTACKS))
def test_git_hooks_config_and_claude_settings_stay_read_only(world, srt_session, name):
    (world.wt / ".claude").mkdir(exist_ok=True)
    before = _snapshot(world)
    cmd = GIT_ATTACKS[name].format(common=world.repo / ".git")
    r = world.run_in(srt_session, "/bin/bash", "-c", cmd, env=ENV)
    assert r.returncode != 0, f"{name} succeeded:\n{r.stdout}{r.stderr}"
    assert _snapshot(world) == before
    assert not os.path.exists("/tmp/pwned")


def test_git_add_and_commit_in_the_linked_worktree(world, srt_session):
    r = world.run_in(srt_session, "/bin/bash", "-c",
                     "set -e; echo x > x.txt; git add -A; git commit -qm x; "
                     "git status --porcelain; git log -1 --format=%s", env=ENV)
    assert_ok(r)
    assert r.stdout == "x\n"  # clean status: no placeholder files to add
    assert world.git("log", "-1", "--format=%s", "agent", cwd=world.repo).stdout == "x\n"
    files = world.git("show", "--name-only", "--format=", "agent", cwd=world.repo).stdout
    assert files.split() == ["x.txt"]


# -- deny states ----------------------------------------------------------------------------

def test_status_shows_srt_deny_states(world, srt_session):
    r = world.ab("--session-dir", srt_session, "status")
    assert_ok(r)
    assert "DEGRADED" not in r.stdout + r.stderr
    bj = json.loads((srt_session / "boundary.json").read_text())
    states = {d["path"]: d["enforcement"] for d in bj["deny_state"]}
    assert states[str(world.wt / ".claude" / "settings.json")] == "enforced"
    assert states[str(world.wt / ".claude" / "settings.local.json")] == "enforced"
    assert states[str(world.state)] == "enforced"


def test_a_deny_around_what_srt_needs_is_reported_weaker(world, srt_tools):
    libexec = world.prefix / "libexec"
    world.profile("weak", deny=(str(libexec),), extra="git_common_dir: true\n")
    s = create(world, "weak", profile="weak")
    r = world.ab("--session-dir", s, "status")
    assert_ok(r)
    assert f"DEGRADED: deny {libexec} is weaker" in r.stdout, r.stdout
    assert "probe" in r.stdout


# -- probes through the Claude hook -------------------------------------------------------------

@pytest.fixture
def srt_claude(world, claude, srt_tools):
    """A session made by the SessionStart hook from the default profile with `backend: srt`
    and one more deny: a directory inside the workdir."""
    text = world.default_profile_text
    anchor = "  - $WORKDIR/.claude/settings.local.json\n"
    assert anchor in text
    text = text.replace(anchor, anchor + "  - $WORKDIR/secrets\n") + "\nbackend: srt\n"
    (world.profiles / "default.yaml").write_text(text)
    (world.wt / "secrets").mkdir()
    (world.wt / "secrets" / "key").write_text("KEYSECRET\n")
    (world.wt / ".claude").mkdir()
    (world.wt / ".claude" / "settings.json").write_text("{}\n")
    d = claude.start("srt")
    assert json.loads((d / "boundary.json").read_text())["backend"]["name"] == "srt"
    return session_id("srt")


def test_probe_allows_the_workdir(world, claude, srt_claude):
    allow(claude.read(srt_claude, world.wt / "README.md"))
    allow(claude.read(srt_claude, world.wt / "absent.txt"))
    allow(claude.write(srt_claude, world.wt / "README.md"))
    allow(claude.write(srt_claude, world.wt / "a" / "b" / "new.txt"))
    assert not (world.wt / "a").exists()


def test_probe_denies_secrets_outside(world, claude, srt_claude):
    h = deny(claude.read(srt_claude, world.ssh_key))
    assert "blocked by sandbox policy" in h.reason
    deny(claude.write(srt_claude, world.home / "evil.txt"))
    deny(claude.write(srt_claude, world.repo / "README.md"))


def test_probe_denies_read_only_held_paths(world, claude, srt_claude):
    deny(claude.write(srt_claude, world.repo / ".git" / "hooks" / "pre-commit"))
    deny(claude.write(srt_claude, world.repo / ".git" / "config"))
    deny(claude.write(srt_claude, world.wt / ".claude" / "new.json"))


def test_probe_denies_hidden_paths(world, claude, srt_claude):
    # Present on the host, masked inside: the probe sees ENOENT or a placeholder.
    h = deny(claude.read(srt_claude, world.wt / "secrets" / "key"))
    assert "hidden" in h.reason or "EACCES" in h.reason, h
    deny(claude.read(srt_claude, world.wt / ".claude" / "settings.json"))
    deny(claude.write(srt_claude, world.wt / ".claude" / "settings.json"))
    # Absent on the host below a masked directory: inside it is an empty writable tmpfs, so
    # only the host's view shows the write would land in the denied directory.
    h = deny(claude.write(srt_claude, world.wt / "secrets" / "new.txt"))
    assert "masked" in h.reason, h
    assert sorted(os.listdir(world.wt / "secrets")) == ["key"]


def test_probe_denies_the_session_itself(world, claude, srt_claude):
    sdir = claude.session_dir("srt")
    deny(claude.read(srt_claude, sdir / "boundary.json"))
    deny(claude.write(srt_claude, sdir / "srt-settings.json"))


def test_rewritten_bash_runs_under_srt(world, claude, srt_claude):
    h = allow(claude.bash(srt_claude, f"cat {world.ssh_key}; cat README.md; ls -A secrets"))
    r = claude.run_rewritten(h.updated["command"])
    assert SSH_SECRET not in r.stdout
    assert README_TEXT in r.stdout
    assert "key" not in r.stdout
