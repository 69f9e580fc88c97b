"""Sessions: creation, selection, status, pinning, on/off, use, reload."""

import json
import os

from conftest import (assert_error, assert_no_crash, assert_nothing_half_written, assert_ok,
                      file_mode, leftovers, write_script)


def test_session_create_prints_dir_then_describe_line(world):
    d = world.session_path("s1")
    r = world.ab("session", "create", d, "--workdir", world.wt)
    assert_ok(r)
    lines = r.stdout.splitlines()
    assert lines[:2] == [str(d), "profile default state on"], r.stdout
    assert (d / "boundary.json").is_file()
    assert (d / "policy.json").is_file()
    assert (d / "nono-profile.json").is_file()


def test_session_create_defaults_workdir_to_cwd(world):
    d = world.session_path("cwd")
    r = world.ab("session", "create", d, cwd=world.wt)
    assert_ok(r)
    assert json.loads((d / "boundary.json").read_text())["workdir"] == str(world.wt)


def test_session_create_relative_dir_is_made_absolute(world):
    world.sessions.mkdir(parents=True)
    r = world.ab("session", "create", "rel", "--workdir", world.wt, cwd=world.sessions)
    assert_ok(r)
    assert r.stdout.splitlines()[0] == str(world.sessions / "rel")
    assert (world.sessions / "rel" / "boundary.json").is_file()


def test_status_with_session_dir_option(world, session):
    r = world.ab("--session-dir", session, "status")
    assert_ok(r)
    assert r.stdout.splitlines()[0] == "profile default state on"


def test_status_with_session_dir_env(world, session):
    r = world.ab("status", env={"AGENT_BOUNDARY_SESSION_DIR": str(session)})
    assert_ok(r)
    assert r.stdout.splitlines()[0] == "profile default state on"


def test_no_subcommand_means_status(world, session):
    r = world.ab("--session-dir", session)
    assert_ok(r)
    assert r.stdout.splitlines()[0] == "profile default state on"


def test_session_files_are_private(world, session):
    assert file_mode(session) == 0o700
    names = sorted(os.listdir(session))
    assert names == ["boundary.json", "held.json", "mask", "nono-profile.json", "policy.json",
                     "protect.json"], names
    for name in names:
        assert file_mode(session / name) == 0o600, name
    # Directories the tool created on the way are private too.
    assert file_mode(world.sessions) == 0o700
    assert file_mode(world.state) == 0o700


def test_session_files_private_under_permissive_umask(world):
    d = world.session_path("s1")
    r = world.ab("session", "create", d, umask=0)
    assert_ok(r)
    assert file_mode(world.state) == 0o700
    assert file_mode(d) == 0o700
    for name in os.listdir(d):
        assert file_mode(d / name) == 0o600, name
    assert_ok(world.ab("--session-dir", d, "off", umask=0))
    assert file_mode(d / "boundary.json") == 0o600
    assert_ok(world.ab("--session-dir", d, "reload", umask=0))
    for name in os.listdir(d):
        assert file_mode(d / name) == 0o600, name


def test_status_json(world, session):
    r = world.ab("--session-dir", session, "status", "--json")
    assert_ok(r)
    j = json.loads(r.stdout)
    assert j["profile"] == "default"
    assert j["state"] == "on"
    assert j["complete"] is True
    assert j["session_dir"] == str(session)
    assert j["workdir"] == str(world.wt)
    exe = j["backend"]["executable"]
    assert os.path.isabs(exe) and os.access(exe, os.X_OK), exe
    assert j["backend"]["name"] == "nono"
    assert os.path.isabs(j["agent_boundary"])
    assert str(session) in j["protected_paths"]
    assert str(world.state) in j["protected_paths"]
    assert str(world.profiles) in j["protected_paths"]


def test_status_reports_degraded_denies(world):
    # A deny inside the writable workdir below a directory that does not exist: Landlock
    # cannot enforce it and the launcher's mounts have nothing to bind, so status must say
    # so instead of pretending. (The shipped `.claude/settings*.json` denies are protected.)
    world.profile("holes", deny=["$WORKDIR/nodir/settings.json"])
    session = world.create_session("holes", profile="holes")
    r = world.ab("--session-dir", session, "status")
    assert_ok(r)
    assert f"DEGRADED: deny {world.wt}/nodir/settings.json is unenforced" in r.stdout
    j = json.loads(world.ab("--session-dir", session, "status", "--json").stdout)
    assert j["degraded"] is True


def test_list_profiles(world, session):
    world.profile("other")
    r = world.ab("list")
    assert_ok(r)
    assert r.stdout.split() == ["default", "other"]
    r = world.ab("--session-dir", session, "list")
    assert_ok(r)
    assert r.stdout.split() == ["default", "other"]


# -- pinning -------------------------------------------------------------------------------

def _grant_home_data(world):
    data = world.home / "data"
    data.mkdir()
    (data / "info.txt").write_text("PINNED-DATA\n")
    text = world.default_profile_text
    assert "\nread: []\n" in text, "the shipped default profile changed shape"
    (world.profiles / "default.yaml").write_text(
        text.replace("\nread: []\n", "\nread:\n  - $HOME/data\n"))
    return data / "info.txt"


def test_profile_edits_need_reload(world, session):
    policy_before = (session / "policy.json").read_bytes()
    info = _grant_home_data(world)
    r = world.run_in(session, "cat", info)
    assert r.returncode != 0, "an edited profile leaked into a pinned session"
    assert "PINNED-DATA" not in r.stdout
    assert (session / "policy.json").read_bytes() == policy_before

    r = world.ab("--session-dir", session, "reload")
    assert_ok(r)
    assert r.stdout.splitlines()[0] == "profile default state on"
    assert (session / "policy.json").read_bytes() != policy_before
    r = world.run_in(session, "cat", info)
    assert_ok(r)
    assert r.stdout == "PINNED-DATA\n"


def test_off_and_on_change_only_the_state(world, session):
    def snapshot():
        return {n: (session / n).read_bytes() for n in ("policy.json", "nono-profile.json")}

    before = snapshot()
    boundary_before = json.loads((session / "boundary.json").read_text())
    # An edited profile on disk must not be re-pinned by a state toggle.
    _grant_home_data(world)

    r = world.ab("--session-dir", session, "off")
    assert_ok(r)
    assert r.stdout.splitlines()[0] == "profile default state off"
    assert "boundary OFF" in r.stdout
    after_off = json.loads((session / "boundary.json").read_text())
    assert after_off["state"] == "off"
    assert {**after_off, "state": "on"} == boundary_before
    assert snapshot() == before
    assert file_mode(session / "boundary.json") == 0o600
    r = world.ab("--session-dir", session, "status")
    assert r.stdout.splitlines()[0] == "profile default state off"

    r = world.ab("--session-dir", session, "on")
    assert_ok(r)
    assert r.stdout.splitlines()[0] == "profile default state on"
    assert json.loads((session / "boundary.json").read_text()) == boundary_before
    assert snapshot() == before
    assert sorted(os.listdir(session)) == ["boundary.json", "held.json", "mask",
                                           "nono-profile.json", "policy.json", "protect.json"]


def test_reload_keeps_state(world, session):
    assert_ok(world.ab("--session-dir", session, "off"))
    r = world.ab("--session-dir", session, "reload")
    assert_ok(r)
    assert r.stdout.splitlines()[0] == "profile default state off"


def test_use_switches_profile(world, session):
    data = world.home / "data"
    data.mkdir()
    (data / "x.txt").write_text("OTHER-PROFILE-DATA\n")
    world.profile("other", read=["$HOME/data"])
    assert world.run_in(session, "cat", data / "x.txt").returncode != 0

    r = world.ab("--session-dir", session, "use", "other")
    assert_ok(r)
    assert r.stdout.splitlines()[0] == "profile other state on"
    r = world.ab("--session-dir", session, "status")
    assert r.stdout.splitlines()[0] == "profile other state on"
    j = json.loads(world.ab("--session-dir", session, "status", "--json").stdout)
    assert j["profile"] == "other"
    assert j["profile_file"] == str(world.profiles / "other.yaml")
    r = world.run_in(session, "cat", data / "x.txt")
    assert_ok(r)
    assert r.stdout == "OTHER-PROFILE-DATA\n"
    # Secrets stay denied under the other profile too.
    assert world.run_in(session, "cat", world.ssh_key).returncode != 0

    r = world.ab("--session-dir", session, "use", "default")
    assert_ok(r)
    assert world.run_in(session, "cat", data / "x.txt").returncode != 0


def test_use_keeps_state(world, session):
    world.profile("other")
    assert_ok(world.ab("--session-dir", session, "off"))
    r = world.ab("--session-dir", session, "use", "other")
    assert_ok(r)
    assert r.stdout.splitlines()[0] == "profile other state off"


def test_use_unknown_profile_leaves_session_untouched(world, session):
    world.profile("other")
    before = {n: (session / n).read_bytes() for n in os.listdir(session)}
    r = world.ab("--session-dir", session, "use", "nosuch")
    assert_error(r, "unknown profile 'nosuch'", "default", "other", code=1)
    assert {n: (session / n).read_bytes() for n in os.listdir(session)} == before
    assert leftovers(session.parent, session.name) == []


def test_use_reads_the_pinned_profiles_dir(world, session):
    # `use` loads from the profiles dir pinned at creation, not a later environment's.
    other_dir = world.root / "other-profiles"
    other_dir.mkdir()
    (other_dir / "elsewhere.yaml").write_text(
        "name: elsewhere\ndescription: d\nallow: [$WORKDIR]\nnono: {extends: default}\n")
    r = world.ab("--session-dir", session, "use", "elsewhere",
                 env={"AGENT_BOUNDARY_PROFILES_DIR": str(other_dir)})
    assert_error(r, "unknown profile 'elsewhere'", code=1)
    assert world.ab("--session-dir", session, "status").stdout.startswith(
        "profile default state on")


# -- nothing half-written --------------------------------------------------------------------

def _fake_nono_failing_wrap(world):
    """A nono that is real for everything but `wrap`, which fails (the self-test fails)."""
    return write_script(world.root / "fake-nono",
                        "#!/bin/sh\n"
                        "if [ \"$1\" = wrap ]; then echo 'fake nono: wrap refused' >&2; exit 3; fi\n"
                        "exec /usr/local/bin/nono \"$@\"\n")


def test_failed_self_test_leaves_nothing(world):
    fake = _fake_nono_failing_wrap(world)
    d = world.session_path("s1")
    r = world.ab("session", "create", d, env={"AGENT_BOUNDARY_NONO": fake})
    assert_error(r, "could not run a command inside this boundary", "wrap refused", code=1)
    assert_nothing_half_written(d)


def test_failed_reload_keeps_old_files(world, session):
    before = {n: (session / n).read_bytes() for n in os.listdir(session)}
    fake = _fake_nono_failing_wrap(world)
    r = world.ab("--session-dir", session, "reload", env={"AGENT_BOUNDARY_NONO": fake})
    assert_error(r, "could not run a command inside this boundary", code=1)
    assert {n: (session / n).read_bytes() for n in os.listdir(session)} == before
    assert leftovers(session.parent, session.name) == []
    r = world.run_in(session, "cat", "README.md")
    assert_ok(r)


def test_failed_reload_after_bad_edit_keeps_old_files(world, session):
    before = {n: (session / n).read_bytes() for n in os.listdir(session)}
    (world.profiles / "default.yaml").write_text(
        world.default_profile_text.replace("\nallow:\n", "\nalow:\n"))
    r = world.ab("--session-dir", session, "reload")
    assert_error(r, "unknown key `alow`", "did you mean `allow`", code=1)
    assert {n: (session / n).read_bytes() for n in os.listdir(session)} == before
    assert leftovers(session.parent, session.name) == []


def test_failed_create_over_existing_session_keeps_it(world, session):
    before = {n: (session / n).read_bytes() for n in os.listdir(session)}
    world.profile("wide", allow=["$WORKDIR", "$HOME"])
    r = world.ab("session", "create", session, "--profile", "wide")
    assert_error(r, code=1)
    assert {n: (session / n).read_bytes() for n in os.listdir(session)} == before
    assert leftovers(session.parent, session.name) == []


def test_session_path_that_is_a_file(world):
    world.sessions.mkdir(parents=True)
    target = world.sessions / "afile"
    target.write_text("not a session\n")
    r = world.ab("session", "create", target)
    assert_error(r, code=1)
    assert target.read_text() == "not a session\n"
    assert leftovers(world.sessions, "afile") == []
    assert_no_crash(r)
