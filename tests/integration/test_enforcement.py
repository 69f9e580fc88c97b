"""What a command inside the boundary can and cannot touch, asked of the real kernel."""

import json
import os
import re
import shutil

import pytest

from conftest import (AWS_CONFIG_SECRET, AWS_SECRET, README_TEXT, SSH_SECRET, assert_ok)

SECRETS = {
    "ssh": ("ssh_key", SSH_SECRET),
    "aws-credentials": ("aws_credentials", AWS_SECRET),
    "aws-config": ("aws_config", AWS_CONFIG_SECRET),
}


def _denied(result, *secrets):
    """A denial: non-zero exit, and no secret on any channel the command has (stdout,
    stderr: an error message quoting the content is a leak too)."""
    out = result.stdout + result.stderr
    assert result.returncode != 0, f"expected a denial, got exit 0:\n{out}"
    for s in secrets:
        assert s not in out, f"secret {s!r} leaked:\n{out}"


# -- the workdir -------------------------------------------------------------------------------

def test_read_in_workdir(world, session):
    r = world.run_in(session, "cat", "README.md")
    assert_ok(r)
    assert r.stdout == README_TEXT


def test_write_in_workdir(world, session):
    r = world.run_in(session, "sh", "-c", "echo x > new && cat new")
    assert_ok(r)
    assert r.stdout == "x\n"
    assert (world.wt / "new").read_text() == "x\n"


def test_mkdir_and_delete_in_workdir(world, session):
    r = world.run_in(session, "sh", "-c",
                     "mkdir -p a/b && echo deep > a/b/c.txt && rm README.md && ls")
    assert_ok(r)
    assert (world.wt / "a" / "b" / "c.txt").read_text() == "deep\n"
    assert not (world.wt / "README.md").exists()


def test_run_pwd_is_the_workdir(world, session):
    r = world.ab("--session-dir", session, "run", "pwd")
    assert_ok(r)
    assert r.stdout == f"{world.wt}\n"


def test_run_pwd_is_the_workdir_from_elsewhere(world, session):
    r = world.ab("--session-dir", session, "run", "pwd", cwd="/")
    assert_ok(r)
    assert r.stdout == f"{world.wt}\n"


def test_run_passes_arguments_verbatim(world, session):
    args = ["a b", "--help", "-v", "$HOME", "*", "", "--"]
    r = world.ab("--session-dir", session, "run", "--", "printf", "[%s]", *args)
    assert_ok(r)
    assert r.stdout == "".join(f"[{a}]" for a in args)


def test_run_environment(world, session):
    r = world.run_in(session, "env",
                     env={"AWS_PROFILE": "leaky", "AWS_DEFAULT_PROFILE": "leaky",
                          "KUBECONFIG": "/leaky", "KEEP_ME": "kept"})
    assert_ok(r)
    lines = r.stdout.splitlines()
    assert "NETRC=/dev/null" in lines  # the profile's env
    assert "KEEP_ME=kept" in lines
    for var in ("AWS_PROFILE=", "AWS_DEFAULT_PROFILE=", "KUBECONFIG="):
        assert not any(line.startswith(var) for line in lines), var


# -- secrets ---------------------------------------------------------------------------------

@pytest.mark.protects("landlock")
@pytest.mark.parametrize("which", sorted(SECRETS))
def test_secret_cannot_be_read(world, session, which):
    attr, secret = SECRETS[which]
    path = getattr(world, attr)
    _denied(world.run_in(session, "cat", path), secret)
    _denied(world.run_in(session, "sh", "-c", f"cat < '{path}'"), secret)


@pytest.mark.protects("landlock")
@pytest.mark.parametrize("which", sorted(SECRETS))
def test_secret_cannot_be_written(world, session, which):
    attr, _ = SECRETS[which]
    path = getattr(world, attr)
    before = path.read_bytes()
    _denied(world.run_in(session, "sh", "-c", f"echo PWNED > '{path}'"))
    _denied(world.run_in(session, "sh", "-c", f"echo PWNED >> '{path}'"))
    _denied(world.run_in(session, "rm", "-f", path))
    _denied(world.run_in(session, "mv", path, world.wt / "stolen"))
    assert path.read_bytes() == before
    assert not (world.wt / "stolen").exists()


@pytest.mark.protects("landlock")
def test_secret_dirs_cannot_be_listed_or_extended(world, session):
    _denied(world.run_in(session, "ls", world.home / ".ssh"), "id_rsa")
    _denied(world.run_in(session, "sh", "-c", f"echo key > '{world.home}/.ssh/authorized_keys'"))
    _denied(world.run_in(session, "sh", "-c", f"echo x > '{world.home}/.aws/new'"))
    assert not (world.home / ".ssh" / "authorized_keys").exists()
    assert not (world.home / ".aws" / "new").exists()


@pytest.mark.protects("landlock")
def test_home_outside_grants_is_denied(world, session):
    (world.home / "notes.txt").write_text("HOME-NOTES\n")
    _denied(world.run_in(session, "cat", world.home / "notes.txt"), "HOME-NOTES")
    _denied(world.run_in(session, "sh", "-c", f"echo x > '{world.home}/evil.txt'"))
    assert not (world.home / "evil.txt").exists()


@pytest.mark.protects("landlock")
def test_symlink_from_workdir_to_secret_is_denied(world, session):
    (world.wt / "innocent").symlink_to(world.ssh_key)
    _denied(world.run_in(session, "cat", "innocent"), SSH_SECRET)


@pytest.mark.protects("landlock")
def test_main_checkout_tree_is_not_writable(world, session):
    # Only the main checkout's .git is granted (for worktree commits), not its files.
    before = (world.repo / "README.md").read_bytes()
    _denied(world.run_in(session, "sh", "-c", f"echo PWNED > '{world.repo}/README.md'"))
    assert (world.repo / "README.md").read_bytes() == before


# -- agent-boundary's own state --------------------------------------------------------------

@pytest.mark.protects("landlock")
@pytest.mark.parametrize("name", ["boundary.json", "policy.json", "nono-profile.json"])
def test_session_files_cannot_be_read(world, session, name):
    r = world.run_in(session, "sh", "-c", f"cat '{session}/{name}'")
    _denied(r, '"format"', '"filesystem"')
    assert r.stdout == ""


@pytest.mark.protects("landlock")
def test_boundary_cannot_be_switched_off_from_inside(world, session):
    boundary = session / "boundary.json"
    before = boundary.read_bytes()
    off = json.dumps({**json.loads(before), "state": "off"})
    attempts = [
        f"printf '%s' '{off}' > '{boundary}'",
        f"echo '{{\"state\": \"off\"}}' > '{boundary}'",
        f"rm -f '{boundary}'",
        f"mv '{boundary}' '{boundary}.old'",
        f"printf '%s' '{off}' > '{session}/boundary.json.new' && mv '{session}/boundary.json.new' '{boundary}'",
    ]
    for cmd in attempts:
        _denied(world.run_in(session, "sh", "-c", cmd))
        assert boundary.read_bytes() == before, cmd
    assert sorted(os.listdir(session)) == ["boundary.json", "mask", "nono-profile.json", "policy.json",
                                          "protect.json"]
    r = world.ab("--session-dir", session, "status")
    assert r.stdout.splitlines()[0] == "profile default state on"


@pytest.mark.protects("landlock")
def test_policy_cannot_be_rewritten_from_inside(world, session):
    for name in ("policy.json", "nono-profile.json"):
        f = session / name
        before = f.read_bytes()
        _denied(world.run_in(session, "sh", "-c", f"echo '{{}}' > '{f}'"))
        assert f.read_bytes() == before


@pytest.mark.protects("landlock")
def test_state_root_and_other_sessions_are_out_of_reach(world, session):
    other = world.create_session("other")
    _denied(world.run_in(session, "cat", other / "boundary.json"), '"format"')
    _denied(world.run_in(session, "sh", "-c", f"echo x > '{other}/boundary.json'"))
    r = world.run_in(session, "ls", "-1", world.sessions)
    _denied(r)
    assert "s1" not in (r.stdout + r.stderr).split(), r
    _denied(world.run_in(session, "mkdir", world.sessions / "planted"))
    _denied(world.run_in(session, "sh", "-c", f"echo x > '{world.state}/planted'"))
    assert not (world.sessions / "planted").exists()
    assert not (world.state / "planted").exists()


@pytest.mark.protects("landlock")
def test_profiles_cannot_be_read_or_edited(world, session):
    f = world.profiles / "default.yaml"
    before = f.read_bytes()
    _denied(world.run_in(session, "cat", f), "Workdir-scoped starter boundary")
    _denied(world.run_in(session, "sh", "-c", f"echo 'allow: [/]' >> '{f}'"))
    _denied(world.run_in(session, "sh", "-c", f"echo x > '{world.profiles}/evil.yaml'"))
    assert f.read_bytes() == before
    assert not (world.profiles / "evil.yaml").exists()


@pytest.mark.protects("landlock")
def test_installation_cannot_be_modified(world, session):
    binary = world.prefix / "bin" / "agent-boundary"
    plugin_dir = world.prefix / "lib" / "agent-boundary" / "plugins"
    before = binary.read_bytes()
    _denied(world.run_in(session, "sh", "-c", f"echo x >> '{binary}'"))
    _denied(world.run_in(session, "sh", "-c", f"echo x > '{plugin_dir}/backend-evil.so'"))
    assert binary.read_bytes() == before
    assert not (plugin_dir / "backend-evil.so").exists()


# -- globs -------------------------------------------------------------------------------------

@pytest.fixture
def pkg_cache(world):
    pkg = world.home / ".cache" / "pkg"
    for name in ("alpha", "beta"):
        (pkg / name / "lib").mkdir(parents=True)
        (pkg / name / "lib" / "mod.js").write_text(f"LIB-{name}\n")
        (pkg / name / "src").mkdir()
        (pkg / name / "src" / "secret.js").write_text(f"SRC-{name}\n")
    (pkg / "gamma" / "libx").mkdir(parents=True)  # no `lib`: does not match */lib
    (pkg / "gamma" / "libx" / "mod.js").write_text("LIBX-gamma\n")
    notes = world.home / "notes"
    notes.mkdir()
    for name in ("a.txt", "b.txt", "c.md", "d.txt.bak"):
        (notes / name).write_text(f"NOTE-{name}\n")
    world.profile("globs", read=["$HOME/.cache/pkg/*/lib", "$HOME/notes/*.txt"])
    return pkg


def test_glob_grants_matching_dirs_only(world, pkg_cache):
    s = world.create_session("g", profile="globs")
    for name in ("alpha", "beta"):
        r = world.run_in(s, "cat", pkg_cache / name / "lib" / "mod.js")
        assert_ok(r)
        assert r.stdout == f"LIB-{name}\n"
        _denied(world.run_in(s, "cat", pkg_cache / name / "src" / "secret.js"), f"SRC-{name}")
    _denied(world.run_in(s, "cat", pkg_cache / "gamma" / "libx" / "mod.js"), "LIBX-gamma")
    # read, not write
    _denied(world.run_in(s, "sh", "-c", f"echo x > '{pkg_cache}/alpha/lib/mod.js'"))
    _denied(world.run_in(s, "sh", "-c", f"echo x > '{pkg_cache}/alpha/lib/new.js'"))
    assert (pkg_cache / "alpha" / "lib" / "mod.js").read_text() == "LIB-alpha\n"
    assert not (pkg_cache / "alpha" / "lib" / "new.js").exists()


def test_file_glob_grants_matching_files_only(world, pkg_cache):
    s = world.create_session("g", profile="globs")
    notes = world.home / "notes"
    for name in ("a.txt", "b.txt"):
        r = world.run_in(s, "cat", notes / name)
        assert_ok(r)
        assert r.stdout == f"NOTE-{name}\n"
    for name in ("c.md", "d.txt.bak"):
        _denied(world.run_in(s, "cat", notes / name), f"NOTE-{name}")
    # A .txt created after the session was created was not there to be matched.
    (notes / "later.txt").write_text("NOTE-later\n")
    _denied(world.run_in(s, "cat", notes / "later.txt"), "NOTE-later")
    _denied(world.run_in(s, "sh", "-c", f"echo x > '{notes}/a.txt'"))
    assert (notes / "a.txt").read_text() == "NOTE-a.txt\n"


def test_glob_is_expanded_at_creation_and_reload(world, pkg_cache):
    s = world.create_session("g", profile="globs")
    (pkg_cache / "delta" / "lib").mkdir(parents=True)
    (pkg_cache / "delta" / "lib" / "mod.js").write_text("LIB-delta\n")
    _denied(world.run_in(s, "cat", pkg_cache / "delta" / "lib" / "mod.js"), "LIB-delta")
    assert_ok(world.ab("--session-dir", s, "reload"))
    r = world.run_in(s, "cat", pkg_cache / "delta" / "lib" / "mod.js")
    assert_ok(r)
    assert r.stdout == "LIB-delta\n"


def test_glob_matching_nothing_warns(world):
    world.profile("empty-glob", read=["$HOME/.cache/nothing/*/lib"])
    r = world.ab("session", "create", world.session_path("e"), "--profile", "empty-glob")
    assert_ok(r)
    assert "matched nothing" in r.stderr


# -- symlink chains ----------------------------------------------------------------------------

@pytest.fixture
def dotfiles(world):
    """~/.gitconfig -> dotfiles/gitconfig, ~/dotfiles -> <world>/store/dotfiles (a dir link)."""
    store = world.root / "store" / "dotfiles"
    store.mkdir(parents=True)
    (store / "gitconfig").write_text("[user]\n\tname = Dot Files\n\temail = dot@example.invalid\n")
    (world.home / "dotfiles").symlink_to(store)
    (world.home / ".gitconfig").symlink_to("dotfiles/gitconfig")
    assert (world.home / ".gitconfig").read_text().startswith("[user]")
    return store


def test_symlink_chain_is_followed(world, dotfiles):
    s = world.create_session("dot")  # the shipped default resolves ~/.gitconfig
    r = world.run_in(s, "cat", world.home / ".gitconfig")
    assert_ok(r)
    assert "name = Dot Files" in r.stdout
    r = world.run_in(s, "git", "config", "--global", "--get", "user.name")
    assert_ok(r)
    assert r.stdout == "Dot Files\n"
    # read, not write
    _denied(world.run_in(s, "sh", "-c", f"echo '[alias]' >> '{world.home}/.gitconfig'"))
    assert "alias" not in (dotfiles / "gitconfig").read_text()


def test_symlink_chain_without_resolve_entry_is_denied(world, dotfiles):
    world.profile("nolinks", resolve_symlinks=[])
    s = world.create_session("dot", profile="nolinks")
    _denied(world.run_in(s, "cat", world.home / ".gitconfig"), "Dot Files")


def test_symlink_chain_string_form(world, dotfiles):
    # A plain string item means {path: ..., access: read}.
    world.write_profile("strform", "name: strform\ndescription: d\nallow: [$WORKDIR]\n"
                        "resolve_symlinks: [~/.gitconfig]\nnono: {extends: default}\n")
    s = world.create_session("dot", profile="strform")
    r = world.run_in(s, "cat", world.home / ".gitconfig")
    assert_ok(r)
    assert "Dot Files" in r.stdout


# -- the probe helper ----------------------------------------------------------------------

@pytest.mark.protects("landlock", "probe")
def test_probe_secret_denied(world, session):
    assert world.probe_in(session, world.ssh_key, "read") == "denied|EACCES"
    assert world.probe_in(session, world.aws_credentials, "write").startswith("denied|")


def test_probe_workdir_allowed(world, session):
    assert world.probe_in(session, world.wt / "README.md", "read") == "allowed"
    assert world.probe_in(session, world.wt / "README.md", "readwrite") == "allowed"
    assert (world.wt / "README.md").read_text() == README_TEXT


@pytest.mark.protects("landlock", "probe")
def test_probe_absent_file_in_denied_dir(world, session):
    assert world.probe_in(session, world.home / ".aws" / "new", "readwrite").startswith("denied|")
    assert not (world.home / ".aws" / "new").exists()


def test_probe_absent_file_in_workdir(world, session):
    target = world.wt / "newdir" / "new.txt"
    assert world.probe_in(session, target, "readwrite") == "allowed|target absent"
    assert not (world.wt / "newdir").exists()
    # `.claude` is the session's own (the agent settings dir, created to be protected).
    assert sorted(os.listdir(world.wt)) == [".claude", ".git", "README.md"]


@pytest.mark.protects("landlock", "probe")
def test_probe_state_denied(world, session):
    assert world.probe_in(session, session / "boundary.json", "read") == "denied|EACCES"
    assert world.probe_in(session, session / "new.json", "write").startswith("denied|")
    assert not (session / "new.json").exists()


def test_probe_usage_error(world, session):
    assert world.probe_in(session, "relative/path", "read").startswith("error|")
    assert world.probe_in(session, world.wt / "README.md", "execute").startswith("error|")


# -- grant kinds ---------------------------------------------------------------------------


@pytest.fixture
def grant_kinds(world):
    drop = world.home / "drop"
    drop.mkdir()
    (drop / "old.txt").write_text("DROP-OLD\n")
    single = world.home / "single"
    single.mkdir()
    (single / "one.txt").write_text("ONE\n")
    (single / "two.txt").write_text("TWO\n")
    world.profile("kinds", allow=["$WORKDIR", "$HOME/single/one.txt"], write=["$HOME/drop"],
                  read=["$HOME/not-there-yet"])
    return drop, single


def test_write_only_dir(world, grant_kinds):
    drop, _ = grant_kinds
    s = world.create_session("k", profile="kinds")
    assert_ok(world.run_in(s, "sh", "-c", f"echo NEW > '{drop}/new.txt'"))
    assert (drop / "new.txt").read_text() == "NEW\n"
    _denied(world.run_in(s, "cat", drop / "old.txt"), "DROP-OLD")


def test_single_file_grant(world, grant_kinds):
    _, single = grant_kinds
    s = world.create_session("k", profile="kinds")
    r = world.run_in(s, "cat", single / "one.txt")
    assert_ok(r)
    assert r.stdout == "ONE\n"
    assert_ok(world.run_in(s, "sh", "-c", f"echo MORE >> '{single}/one.txt'"))
    assert (single / "one.txt").read_text() == "ONE\nMORE\n"
    _denied(world.run_in(s, "cat", single / "two.txt"), "TWO")
    _denied(world.run_in(s, "sh", "-c", f"echo x > '{single}/three.txt'"))
    assert not (single / "three.txt").exists()


def test_absent_grant_warns_and_needs_reload(world, grant_kinds):
    d = world.session_path("k")
    r = world.ab("session", "create", d, "--profile", "kinds")
    assert_ok(r)
    later = world.home / "not-there-yet"
    assert f"`{later}` does not exist; no grant made" in r.stderr
    assert re.search(r"kinds\.yaml:\d+:\d+: ", r.stderr), r.stderr
    later.mkdir()
    (later / "f").write_text("LATER\n")
    _denied(world.run_in(d, "cat", later / "f"), "LATER")
    assert_ok(world.ab("--session-dir", d, "reload"))
    r = world.run_in(d, "cat", later / "f")
    assert_ok(r)
    assert r.stdout == "LATER\n"


def test_deny_outside_grants_is_enforced_quietly(world):
    world.profile("denyaws", deny=["$HOME/.aws"])
    d = world.session_path("d")
    r = world.ab("session", "create", d, "--profile", "denyaws")
    assert_ok(r)
    assert "/.aws" not in r.stderr
    _denied(world.run_in(d, "cat", world.aws_config), AWS_CONFIG_SECRET)
    j = json.loads(world.ab("--session-dir", d, "status", "--json").stdout)
    states = {x["path"]: x["enforcement"] for x in j["deny_state"]}
    assert states[str(world.home / ".aws")] == "enforced"


def test_deny_inside_a_grant_is_reported_not_hidden(world):
    # Landlock cannot carve a deny out of a granted dir; the launcher's mounts do (issue 4),
    # and what they cannot cover (a deny below a directory that does not exist) the session
    # says (warning at creation, DEGRADED in status) rather than pretend it is protected.
    (world.wt / "secret.env").write_text("WT-SECRET\n")
    world.profile("leaky", deny=["$WORKDIR/secret.env", "$WORKDIR/nodir/x.env"])
    d = world.session_path("l")
    r = world.ab("session", "create", d, "--profile", "leaky")
    assert_ok(r)
    assert f"deny of {world.wt}/secret.env" not in r.stderr
    assert f"deny of {world.wt}/nodir/x.env is unenforced" in r.stderr
    r = world.ab("--session-dir", d, "status")
    assert f"DEGRADED: deny {world.wt}/nodir/x.env is unenforced" in r.stdout
    assert "secret.env" not in r.stdout
    # And that report is the truth: the content is hidden inside and stays unchanged.
    r = world.run_in(d, "/bin/bash", "-c", "cat secret.env; echo x > secret.env")
    assert r.returncode != 0
    assert "WT-SECRET" not in r.stdout
    assert (world.wt / "secret.env").read_text() == "WT-SECRET\n"
    (world.wt / "nodir").mkdir()
    assert world.probe_in(d, world.wt / "nodir" / "x.env", "write").startswith("allowed")


def test_profile_env_values_are_expanded(world):
    world.profile("envp", extra="env:\n  MY_VAR: $WORKDIR/x\n  MY_HOME: $HOME/y\n")
    d = world.create_session("e", profile="envp")
    r = world.run_in(d, "env")
    assert_ok(r)
    lines = r.stdout.splitlines()
    assert f"MY_VAR={world.wt}/x" in lines
    assert f"MY_HOME={world.home}/y" in lines


def test_profile_env_literal_values(world):
    world.profile("envp", extra="env:\n  PLAIN: 'hello world'\n  NETRC: /dev/null\n")
    d = world.create_session("e", profile="envp")
    r = world.run_in(d, "env", env={"PLAIN": "outer"})
    assert_ok(r)
    lines = r.stdout.splitlines()
    assert "PLAIN=hello world" in lines  # the profile wins over the outer env
    assert "PLAIN=outer" not in lines
    assert "NETRC=/dev/null" in lines


def test_stdin_passes_through(world, session):
    r = world.ab("--session-dir", session, "run", "--", "cat", input="piped input\n")
    assert_ok(r)
    assert r.stdout == "piped input\n"


def test_script_in_workdir_runs(world, session):
    script = world.wt / "build.sh"
    script.write_text("#!/bin/sh\necho built > out.txt\necho \"args: $*\"\n")
    os.chmod(script, 0o755)
    r = world.run_in(session, "./build.sh", "a", "b")
    assert_ok(r)
    assert r.stdout == "args: a b\n"
    assert (world.wt / "out.txt").read_text() == "built\n"


def test_profiles_dir_inside_workdir_is_refused(world):
    inside = world.wt / "my-profiles"
    inside.mkdir()
    shutil.copy(world.profiles / "default.yaml", inside / "default.yaml")
    d = world.session_path("s1")
    r = world.ab("session", "create", d, env={"AGENT_BOUNDARY_PROFILES_DIR": str(inside)})
    assert r.returncode == 1
    assert "out of reach" in r.stderr
    assert str(inside) in r.stderr
    assert not d.exists()


def test_xdg_default_profiles_dir(world):
    xdg = world.home / ".config" / "agent-boundary" / "profiles"
    xdg.mkdir(parents=True)
    (xdg / "mine.yaml").write_text(
        "name: mine\ndescription: d\nallow: [$WORKDIR]\nnono: {extends: default}\n")
    r = world.ab("list", drop=("AGENT_BOUNDARY_PROFILES_DIR",))
    assert_ok(r)
    assert r.stdout == "mine\n"
    d = world.session_path("x")
    r = world.ab("session", "create", d, "--profile", "mine", drop=("AGENT_BOUNDARY_PROFILES_DIR",))
    assert_ok(r)
    assert str(xdg) in json.loads((d / "boundary.json").read_text())["protected_paths"]
    _denied(world.run_in(d, "cat", xdg / "mine.yaml", drop=("AGENT_BOUNDARY_PROFILES_DIR",)),
            "description")


def test_home_with_glob_characters(world):
    home = world.root / "ho[me]"
    (home / ".cache" / "pkg" / "a" / "lib").mkdir(parents=True)
    (home / ".cache" / "pkg" / "a" / "lib" / "f").write_text("BRACKET-LIB\n")
    (home / "data").mkdir()
    (home / "data" / "f").write_text("BRACKET-DATA\n")
    world.profile("bracket", read=["$HOME/.cache/pkg/*/lib", "$HOME/data"])
    env = {"HOME": str(home), "AGENT_BOUNDARY_STATE_DIR": str(home / ".state")}
    d = home / ".state" / "sessions" / "b"
    r = world.ab("session", "create", d, "--profile", "bracket", env=env)
    assert_ok(r)
    assert "matched nothing" not in r.stderr
    for f, text in (("home/.cache/pkg/a/lib/f", "BRACKET-LIB\n"), ("home/data/f", "BRACKET-DATA\n")):
        path = home / f.split("/", 1)[1]
        r = world.run_in(d, "cat", path, env=env)
        assert_ok(r)
        assert r.stdout == text
