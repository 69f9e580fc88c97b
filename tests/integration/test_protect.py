"""Linux: denies inside writable trees (issue 4). The launcher binds git hooks and config,
the agent settings and the profile's denies read-only in a private mount namespace before
nono applies Landlock; nothing inside can undo that, and git keeps working."""

import hashlib
import json
import os
import shutil
import subprocess

import pytest

from conftest import GIT_IDENTITY, assert_error, assert_ok, need_tool

ENV = {**GIT_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1"}


def snapshot(world, top):
    """Hashes of everything host git and Claude read as configuration or code."""
    out = {}
    git_dir = top / ".git"
    common = world.repo / ".git"
    paths = [common / "config", common / "commondir", git_dir, top / ".claude"]
    paths += sorted((common / "hooks").iterdir()) if (common / "hooks").is_dir() else []
    wt_admin = common / "worktrees"
    if wt_admin.is_dir():
        for d in sorted(wt_admin.iterdir()):
            paths += [d / "commondir", d / "gitdir"]
    for p in paths:
        if p.is_symlink():
            out[str(p)] = "symlink:" + os.readlink(p)
        elif p.is_dir():
            out[str(p)] = "dir:" + ",".join(sorted(os.listdir(p)))
        elif p.is_file():
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[str(p)] = "absent"
    for name in ("settings.json", "settings.local.json"):
        p = top / ".claude" / name
        out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else (
            "symlink" if p.is_symlink() else "absent")
    out["hooksPath"] = world.git("config", "--get", "core.hooksPath", cwd=top, check=False).stdout
    out["common"] = world.git("rev-parse", "--git-common-dir", cwd=top).stdout
    return out


@pytest.fixture
def repo_session(world):
    """A session whose workdir is the main checkout (a plain repo)."""
    (world.repo / ".claude").mkdir()
    (world.repo / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
    return world.create_session("plain", workdir=world.repo)


# An attack on the mounts themselves (umount, remount, exchange) ends with the write it is
# after, run whatever the undoing step did: without the protection the write lands, so each
# case fails against the mount-protection mutant (tests/mutation).
ATTACKS = {
    "write hook": "echo 'touch /tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
    "append config": "printf '[core]\\n\\thooksPath = /tmp\\n' >> .git/config",
    "git config hooksPath": "git config core.hooksPath /x",
    "mv hooks aside": "mv .git/hooks .git/hooks.old && mkdir .git/hooks",
    "rm and recreate config": "rm -f .git/config; echo '[core]' > .git/config",
    "replace config by rename": "cp .git/config c2 && echo '[x]' >> c2 && mv -f c2 .git/config",
    "mv .git aside": "mv .git g2 && mkdir .git",
    "exchange .git": "cp -a .git g3 && echo '[x]' >> g3/config && mv .git g4; mv -T g3 .git",
    "create commondir": "echo /tmp > .git/commondir",
    "create settings.local.json": "echo '{\"hooks\": 1}' > .claude/settings.local.json",
    "symlink settings.local.json": "ln -s /tmp/x .claude/settings.local.json",
    "overwrite settings.json": "echo '{\"hooks\": 1}' > .claude/settings.json",
    "mv .claude aside": "mv .claude .claude.old && mkdir .claude",
    "rm settings.json": "rm -f .claude/settings.json",
    "hardlink config out": "ln .git/config cfg && echo '[x]' >> cfg",
    "hardlink into hooks": "echo x > evil && ln evil .git/hooks/pre-commit",
    "symlink over hooks": "rm -rf .git/hooks; ln -sfn /tmp .git/hooks",
    "umount config": "umount .git/config; echo '[x]' >> .git/config",
    "umount -l hooks": "umount -l .git/hooks; echo x > .git/hooks/pre-commit",
    "remount rw": "mount -o remount,rw .git/config; echo '[x]' >> .git/config",
    "nested userns umount": ("unshare -Urm sh -c 'umount .git/config; echo \"[x]\" >> .git/config'; "
                             "echo '[x]' >> .git/config"),
}


@pytest.mark.protects("mount-protection")
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_inside_a_plain_repo_changes_nothing_on_the_host(world, repo_session, name):
    before = snapshot(world, world.repo)
    r = world.run_in(repo_session, "/bin/bash", "-c", ATTACKS[name], cwd=world.repo, env=ENV)
    assert r.returncode != 0, f"{name} succeeded:\n{r.stdout}{r.stderr}"
    assert snapshot(world, world.repo) == before
    assert not os.path.exists("/tmp/pwned")


@pytest.mark.parametrize("name", ["write hook", "append config", "git config hooksPath",
                                  "create commondir", "overwrite settings.json"])
@pytest.mark.protects("mount-protection")
def test_attack_from_a_linked_worktree_changes_nothing(world, session, name):
    cmd = ATTACKS[name].replace(".git/", f"{world.repo}/.git/")
    (world.wt / ".claude").mkdir(exist_ok=True)
    before = snapshot(world, world.wt)
    r = world.run_in(session, "/bin/bash", "-c", cmd, env=ENV)
    assert r.returncode != 0, f"{name} succeeded:\n{r.stdout}{r.stderr}"
    assert snapshot(world, world.wt) == before


@pytest.mark.protects("mount-protection")
def test_worktree_admin_files_are_read_only(world, session):
    before = snapshot(world, world.wt)
    for cmd in ("echo 'gitdir: /tmp/evil' > .git",
                f"echo /tmp > {world.repo}/.git/worktrees/wt/commondir",
                f"mv {world.repo}/.git/worktrees {world.repo}/.git/w2"):
        r = world.run_in(session, "/bin/bash", "-c", cmd, env=ENV)
        assert r.returncode != 0, cmd
    assert snapshot(world, world.wt) == before


def test_git_still_works_inside(world, repo_session):
    script = """set -e
echo a > a.txt; git add a.txt; git commit -qm a
git checkout -q -b feature; echo b > b.txt; git add b.txt; git commit -qm b
echo c >> a.txt; git stash -q; git stash pop -q; git commit -qam c
git worktree add -q inner-wt; git -C inner-wt log -1 --format=%s
"""
    r = world.run_in(repo_session, "/bin/bash", "-c", script, cwd=world.repo, env=ENV)
    assert_ok(r)
    assert r.stdout == "c\n"
    assert world.git("log", "-1", "--format=%s", "feature", cwd=world.repo).stdout == "c\n"
    assert world.git("fsck", "--no-progress", cwd=world.repo).returncode == 0


def test_git_works_in_the_linked_worktree(world, session):
    r = world.run_in(session, "/bin/bash", "-c",
                     "echo x > x.txt && git add x.txt && git commit -qm x && git stash list",
                     env=ENV)
    assert_ok(r)
    assert world.git("log", "-1", "--format=%s", "agent", cwd=world.repo).stdout == "x\n"


@pytest.mark.protects("mount-protection")
def test_profile_deny_inside_workdir_is_hidden_and_read_only(world):
    (world.wt / "secret.txt").write_text("TOPSECRET\n")
    world.profile("denyin", deny=("$WORKDIR/secret.txt", "$WORKDIR/absent.txt"),
                  extra="git_common_dir: true\n")
    s = world.create_session("denyin", profile="denyin")
    r = world.run_in(s, "/bin/bash", "-c", "cat secret.txt; echo x > secret.txt; "
                     "echo y > absent.txt; rm -f secret.txt absent.txt; true", env=ENV)
    assert "TOPSECRET" not in r.stdout
    assert (world.wt / "secret.txt").read_text() == "TOPSECRET\n"
    assert (world.wt / "absent.txt").read_text() == ""
    st = world.ab("--session-dir", s, "status")
    assert_ok(st)
    assert "DEGRADED" not in st.stdout + st.stderr


def test_status_shows_no_degraded_line_for_protected_denies(world, session):
    r = world.ab("--session-dir", session, "status")
    assert_ok(r)
    assert "DEGRADED" not in r.stdout + r.stderr
    bj = json.loads((session / "boundary.json").read_text())
    states = {d["path"]: d["enforcement"] for d in bj["deny_state"]}
    assert states[str(world.wt / ".claude" / "settings.json")] == "enforced"
    assert states[str(world.wt / ".claude" / "settings.local.json")] == "enforced"


def test_inherited_fd_on_config_is_closed(world, repo_session):
    fd = os.open(world.repo / ".git" / "config", os.O_WRONLY | os.O_APPEND)
    try:
        before = (world.repo / ".git" / "config").read_text()
        subprocess.run([world.ab_bin, "--session-dir", str(repo_session), "run", "--",
                        "/bin/bash", "-c", f"echo '[x]' >&{fd}"], cwd=world.repo,
                       env=world.env(ENV), pass_fds=(fd,), capture_output=True, timeout=60)
        assert (world.repo / ".git" / "config").read_text() == before
    finally:
        os.close(fd)


def test_preexisting_hardlink_refuses_the_session(world):
    os.link(world.repo / ".git" / "config", world.root / "cfg-link")
    r = world.ab("session", "create", world.session_path("hl"), "--workdir", world.repo)
    assert r.returncode != 0
    assert "hard link" in r.stderr


@pytest.mark.protects("mount-protection")
def test_unprivileged_user_is_protected_too(world):
    """The launcher's unprivileged path (a user namespace first). As root the test switches
    to uid 65534; run by anyone else, the suite already is that user, and so is this test."""
    root = os.geteuid() == 0
    # A world 65534 can use: its own workdir repo, home and state.
    base = world.root / "nobody"
    base.mkdir()
    for p in [world.root, *world.root.parents]:
        if p == p.parent:
            break
        os.chmod(p, os.stat(p).st_mode | 0o011)
    home = base / "home"
    repo = base / "repo"
    home.mkdir()
    repo.mkdir()
    (home / "profiles").mkdir()
    (home / "profiles" / "default.yaml").write_text(world.default_profile_text)
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "AGENT_BOUNDARY_PROFILES_DIR": str(home / "profiles"),
           "AGENT_BOUNDARY_STATE_DIR": str(home / "state"), **ENV}
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", str(repo)], check=True,
                   env=env)
    as_nobody = []
    if root:
        for dirpath, dirnames, filenames in os.walk(base):
            for n in [dirpath, *[os.path.join(dirpath, f) for f in dirnames + filenames]]:
                os.lchown(n, 65534, 65534)
        as_nobody = [need_tool("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups"]

    def ab(*args):
        return subprocess.run([*as_nobody, world.ab_bin, *map(str, args)], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=120)

    sdir = home / "state" / "sessions" / "n1"
    assert_ok(ab("session", "create", sdir, "--workdir", repo))
    before = snapshot_plain(repo)
    for cmd in (ATTACKS["write hook"], ATTACKS["append config"], ATTACKS["mv .git aside"],
                ATTACKS["create settings.local.json"], ATTACKS["git config hooksPath"],
                ATTACKS["nested userns umount"], ATTACKS["create commondir"]):
        r = ab("--session-dir", sdir, "run", "--", "/bin/bash", "-c", cmd)
        assert r.returncode != 0, f"{cmd}: {r.stdout}{r.stderr}"
        assert snapshot_plain(repo) == before, cmd
    r = ab("--session-dir", sdir, "run", "--", "/bin/bash", "-c",
           "echo a > a && git add a && git commit -qm a && git log --format=%s")
    assert_ok(r)
    assert r.stdout == "a\n"


def snapshot_plain(repo):
    out = {}
    for p in [repo / ".git" / "config", repo / ".git" / "commondir", repo / ".claude",
              repo / ".git", *sorted((repo / ".git" / "hooks").iterdir())]:
        out[str(p)] = (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file()
                       else ",".join(sorted(os.listdir(p))) if p.is_dir() else "absent")
    return out


@pytest.fixture
def no_user_namespaces():
    """A wrapper that runs agent-boundary in a user namespace whose max_user_namespaces is 0:
    a kernel that lets it create no (further) user namespace."""
    unshare = need_tool("unshare")
    probe = subprocess.run([unshare, "-r", "true"], capture_output=True)
    if probe.returncode != 0:
        # This kernel (or its container) already refuses user namespaces: the condition
        # under test holds as it is, with no wrapper.
        return ()
    return (unshare, "-r", "/bin/sh", "-c",
            'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" "$@"')


def test_kernel_without_user_namespaces_refuses(world, no_user_namespaces):
    r = world.ab("session", "create", world.session_path("nons"), wrapper=no_user_namespaces)
    assert r.returncode != 0
    assert "max_user_namespaces" in r.stderr
    assert "accept_unprotected_denies" in r.stderr


def test_kernel_without_user_namespaces_accepted_by_the_profile_is_degraded(
        world, no_user_namespaces):
    world.write_profile("weak", world.default_profile_text.replace("name: default", "name: weak")
                        + "\naccept_unprotected_denies: true\n")
    s = world.session_path("weak")
    assert_ok(world.ab("session", "create", s, "--profile", "weak", wrapper=no_user_namespaces))
    r = world.ab("--session-dir", s, "status")
    assert_ok(r)
    assert f"DEGRADED: deny {world.wt}/.claude/settings.json is unenforced" in r.stdout
    r = world.ab("--session-dir", s, "run", "--", "/bin/bash", "-c", "echo ok", env=ENV,
                 wrapper=no_user_namespaces)
    assert_ok(r)
    assert r.stdout == "ok\n"
    assert "DEGRADED" in r.stderr
    # A session that accepted nothing refuses to run there.
    plain = world.create_session("strict")
    r = world.ab("--session-dir", plain, "run", "--", "/bin/true", wrapper=no_user_namespaces)
    assert r.returncode != 0
    assert "max_user_namespaces" in r.stderr


def test_profile_keys_open_a_protection_and_say_what_it_costs(world):
    world.write_profile("open", world.default_profile_text.replace("name: default", "name: open")
                        + "\nallow_git_hook_escape: true\n")
    s = world.create_session("open", profile="open", workdir=world.repo)
    r = world.run_in(s, "/bin/bash", "-c", "echo '# planted' > .git/hooks/pre-commit",
                     cwd=world.repo, env=ENV)
    assert_ok(r)
    assert (world.repo / ".git" / "hooks" / "pre-commit").read_text() == "# planted\n"
    # The agent settings stay protected unless their own key opens them too.
    r = world.run_in(s, "/bin/bash", "-c", "echo '{}' > .claude/settings.local.json",
                     cwd=world.repo, env=ENV)
    assert r.returncode != 0
    assert not (world.repo / ".claude" / "settings.local.json").exists()


@pytest.mark.parametrize("name", [
    *(pytest.param(n, marks=pytest.mark.protects("pinned-files"))
      for n in ("protect.json", "mask", "nono-profile.json")),
    "policy.json",  # the launcher's own policy read refuses this one too: no mutant's test
])
def test_a_missing_pinned_file_refuses_every_command(world, repo_session, name):
    """A lost pinned file (corruption, an old session, a bug) must never weaken the boundary:
    the launcher refuses with the fix, status says so, and the hook denies."""
    (repo_session / name).unlink()
    before = snapshot(world, world.repo)
    r = world.run_in(repo_session, "/bin/bash", "-c", ATTACKS["write hook"], cwd=world.repo,
                     env=ENV)
    assert_error(r, name if name != "policy.json" else "no complete session", "reload")
    assert snapshot(world, world.repo) == before
    assert not (world.repo / ".git" / "hooks" / "pre-commit").exists()
    st = world.ab("--session-dir", repo_session, "status")
    assert st.returncode == 1, st.stdout + st.stderr
    # Without policy.json the session is incomplete, and says so in its own words.
    assert (f"REFUSED: pinned file {name}" if name != "policy.json"
            else "no boundary for this session; run:") in st.stdout, st.stdout
    assert "reload" in st.stdout
    j = json.loads(world.ab("--session-dir", repo_session, "status", "--json").stdout)
    assert j["complete"] is False, j
    # `reload` is the fix it names.
    assert_ok(world.ab("--session-dir", repo_session, "reload"))
    assert_ok(world.run_in(repo_session, "/bin/true", cwd=world.repo))


def test_an_unreadable_protect_json_refuses(world, repo_session):
    f = repo_session / "protect.json"
    f.unlink()
    f.mkdir()  # not a regular file: unreadable as a plan
    r = world.run_in(repo_session, "/bin/bash", "-c", ATTACKS["append config"], cwd=world.repo,
                     env=ENV)
    assert_error(r, "protect.json", "reload")
    assert "hooksPath" not in (world.repo / ".git" / "config").read_text()
