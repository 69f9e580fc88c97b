"""Bad input: every failure is a clear message and a non-zero exit, never a crash, and
nothing is left half-written."""

import json
import os
import re
import shutil
import uuid
from pathlib import Path

import pytest

from conftest import (SSH_SECRET, assert_error, assert_no_crash, assert_nothing_half_written,
                      assert_ok, leftovers, write_script)

# -- command line --------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["run"], ["run", "--"]])
def test_run_without_command(world, argv):
    r = world.ab(*argv)
    assert_error(r, "usage: agent-boundary run", code=2)


def test_run_without_command_with_session(world, session):
    r = world.ab("--session-dir", session, "run", "--")
    assert_error(r, "usage: agent-boundary run", code=2)


def test_exec_without_command(world, session):
    r = world.ab("--session-dir", session, "exec", "--")
    assert_error(r, "no command to run", code=2)


@pytest.mark.parametrize("argv", [["status"], ["on"], ["off"], ["reload"], ["use", "default"]])
def test_commands_needing_a_session(world, argv):
    r = world.ab(*argv)
    assert_error(r, "no session selected", "--session-dir", code=2)


def test_unknown_subcommand(world):
    assert_error(world.ab("frobnicate"))


def test_use_without_profile_name(world, session):
    assert_error(world.ab("--session-dir", session, "use"))


def test_workdir_not_a_directory(world):
    d = world.session_path("s1")
    r = world.ab("session", "create", d, "--workdir", world.root / "missing")
    assert_error(r, "is not a directory", code=2)
    assert_nothing_half_written(d)


# -- missing and incomplete sessions -------------------------------------------------------


def test_missing_session_dir_status(world):
    nope = world.root / "nope"
    r = world.ab("--session-dir", nope, "status")
    assert_error(r, "no boundary", code=1)
    assert not nope.exists()


def test_missing_session_dir_status_json(world):
    nope = world.root / "nope"
    r = world.ab("--session-dir", nope, "status", "--json")
    assert r.returncode == 1
    assert json.loads(r.stdout) == {"session_dir": str(nope), "complete": False}


@pytest.mark.parametrize("argv", [["run", "true"], ["on"], ["off"], ["reload"], ["use", "default"]])
def test_missing_session_dir(world, argv):
    nope = world.root / "nope"
    r = world.ab("--session-dir", nope, *argv)
    assert_error(r, "no complete session", code=1)
    assert not nope.exists()


def test_missing_session_dir_env(world):
    nope = world.root / "nope"
    r = world.ab("run", "true", env={"AGENT_BOUNDARY_SESSION_DIR": str(nope)})
    assert_error(r, "no complete session", code=1)


# -- corrupt boundary.json ---------------------------------------------------------------------


def _corruptions(session):
    good = json.loads((session / "boundary.json").read_text())
    return {
        "invalid-json": "{not json",
        "banana-state": json.dumps({**good, "state": "banana"}),
        "empty": "",
        "empty-object": "{}",
        "relative-workdir": json.dumps({**good, "workdir": "relative/dir"}),
        "wrong-type": json.dumps({**good, "self_edit": "false"}),
    }


CORRUPTIONS = ["invalid-json", "banana-state", "empty", "empty-object", "relative-workdir",
               "wrong-type"]


@pytest.mark.parametrize("kind", CORRUPTIONS)
@pytest.mark.parametrize("argv", [["status"], ["status", "--json"], ["run", "--", "true"],
                                  ["on"], ["off"], ["use", "default"]])
def test_corrupt_boundary_json(world, session, kind, argv):
    text = _corruptions(session)[kind]
    (session / "boundary.json").write_text(text)
    policy = (session / "policy.json").read_bytes()
    r = world.ab("--session-dir", session, *argv)
    assert_error(r, "corrupt boundary.json", "session create", code=1)
    assert str(session / "boundary.json") in r.stderr
    # Nothing was "repaired" behind the user's back.
    assert (session / "boundary.json").read_text() == text
    assert (session / "policy.json").read_bytes() == policy


def test_corrupt_boundary_json_run_does_not_run(world, session):
    (session / "boundary.json").write_text('{"state": "off"}')
    r = world.run_in(session, "sh", "-c", "echo ran > ran.txt")
    assert_error(r, "corrupt boundary.json", code=1)
    assert not (world.wt / "ran.txt").exists()


def test_corrupt_boundary_json_create_again_repairs(world, session):
    (session / "boundary.json").write_text("{not json")
    r = world.ab("session", "create", session, "--workdir", world.wt)
    assert_ok(r)
    r = world.ab("--session-dir", session, "status")
    assert_ok(r)
    assert r.stdout.splitlines()[0] == "profile default state on"


# -- other session files -----------------------------------------------------------------------


def test_missing_policy_json(world, session):
    (session / "policy.json").unlink()
    r = world.run_in(session, "sh", "-c", "echo ran > ran.txt")
    assert_error(r, "no complete session", code=1)
    assert not (world.wt / "ran.txt").exists()
    r = world.ab("--session-dir", session, "status")
    assert_error(r, "no boundary", "reload", code=1)
    # The advice works: reload regenerates it.
    assert_ok(world.ab("--session-dir", session, "reload"))
    assert_ok(world.run_in(session, "true"))


def test_corrupt_policy_json(world, session):
    (session / "policy.json").write_text("{garbage")
    r = world.run_in(session, "sh", "-c", "echo ran > ran.txt")
    assert_error(r, "policy.json", code=1)
    assert not (world.wt / "ran.txt").exists()


@pytest.mark.parametrize("content", [None, "{garbage", "[]"])
def test_broken_backend_profile_fails_closed(world, session, content):
    f = session / "nono-profile.json"
    if content is None:
        f.unlink()
    else:
        f.write_text(content)
    r = world.run_in(session, "sh", "-c", f"cat '{world.ssh_key}'; echo ran > ran.txt")
    assert r.returncode != 0
    assert_no_crash(r)
    assert SSH_SECRET not in r.stdout
    assert not (world.wt / "ran.txt").exists()
    if content is None:
        assert "nono-profile.json" in r.stderr


# -- profiles ----------------------------------------------------------------------------------


def test_validate_unknown_key(world):
    f = world.write_profile("typo", "name: typo\ndescription: d\nalow: [$WORKDIR]\n")
    r = world.ab("validate", "typo")
    assert_error(r, "did you mean `allow`", code=1)
    assert re.search(re.escape(str(f)) + r":3:1: unknown key `alow`", r.stderr), r.stderr
    r = world.ab("validate", f)
    assert_error(r, f"{f}:3:1", "did you mean `allow`", code=1)


def test_session_create_with_unknown_key(world):
    f = world.write_profile("typo", "name: typo\ndescription: d\nalow: [$WORKDIR]\n")
    d = world.session_path("s1")
    r = world.ab("session", "create", d, "--profile", "typo")
    assert_error(r, f"{f}:3:1", "did you mean `allow`", code=1)
    assert_nothing_half_written(d)


def test_validate_invalid_yaml(world):
    f = world.write_profile("broken", "name: broken\ndescription: d\nallow: [$WORKDIR\n"
                                      "read: []\n")
    r = world.ab("validate", "broken")
    assert_error(r, "not valid YAML", code=1)
    assert re.search(re.escape(str(f)) + r":\d+:\d+: not valid YAML", r.stderr), r.stderr
    d = world.session_path("s1")
    r = world.ab("session", "create", d, "--profile", "broken")
    assert_error(r, "not valid YAML", code=1)
    assert_nothing_half_written(d)


@pytest.mark.parametrize("text,needle", [
    ("- a\n- b\n", "mapping"),
    ("name: x\ndescription: d\nself_edit: \"true\"\n", "self_edit"),
    ("name: x\ndescription: d\nresolve_symlinks: [{access: read}]\n", "path"),
    ("name: x\ndescription: d\nresolve_symlinks: [{path: ~/.x, access: execute}]\n", "access"),
    ("name: x\ndescription: d\nallow: [relative/path]\n", "relative/path"),
    ("name: x\ndescription: d\nallow: [$NOPE/x]\n", "$NOPE"),
    ("name: x\ndescription: d\nallow: [$WORKDIR]\nallow: [$HOME]\n", "allow"),
    ("description: d\n", "name"),
])
def test_validate_rejects(world, text, needle):
    f = world.write_profile("bad", text)
    r = world.ab("validate", "bad")
    assert_error(r, needle, code=1)
    assert str(f) in r.stderr
    assert "ok " not in r.stdout


def test_validate_all_reports_each_bad_file(world):
    world.write_profile("typo", "name: typo\ndescription: d\nalow: []\n")
    world.profile("fine")
    r = world.ab("validate")
    assert r.returncode == 1
    assert f"ok {world.profiles}/default.yaml" in r.stdout
    assert f"ok {world.profiles}/fine.yaml" in r.stdout
    assert f"{world.profiles}/typo.yaml:3:1" in r.stderr
    assert_no_crash(r)


def test_session_create_unknown_profile_lists_known(world):
    world.profile("other")
    d = world.session_path("s1")
    r = world.ab("session", "create", d, "--profile", "nosuch")
    assert_error(r, "unknown profile 'nosuch'", "have: default, other", code=1)
    assert_nothing_half_written(d)


@pytest.mark.parametrize("name", ["../default", "a/b", ".hidden"])
def test_session_create_bad_profile_name(world, name):
    d = world.session_path("s1")
    r = world.ab("session", "create", d, "--profile", name)
    assert_error(r, code=1)
    assert_nothing_half_written(d)


# -- the backend ---------------------------------------------------------------------------------


def test_nono_missing_via_env(world):
    d = world.session_path("s1")
    r = world.ab("session", "create", d, env={"AGENT_BOUNDARY_NONO": "/nonexistent/nono"})
    assert_error(r, "nono", "/nonexistent/nono", "install nono", "AGENT_BOUNDARY_NONO", code=1)
    assert_nothing_half_written(d)


def test_nono_found_without_path(world):
    # nono is looked up beside agent-boundary and in the system locations before PATH, so an
    # empty (or agent-controlled) PATH neither hides nor replaces it; the result is pinned.
    empty_bin = world.root / "empty-bin"
    empty_bin.mkdir()
    d = world.session_path("s1")
    r = world.ab("session", "create", d, env={"PATH": str(empty_bin)})
    assert_ok(r)
    pinned = json.loads((d / "boundary.json").read_text())["backend"]["executable"]
    assert pinned.startswith("/") and pinned.endswith("/nono")
    assert not pinned.startswith(str(empty_bin))


def test_nono_missing(world):
    d = world.session_path("s1")
    r = world.ab("session", "create", d, env={"AGENT_BOUNDARY_NONO": str(world.root / "no/nono")})
    assert_error(r, "nono is not an executable file", "install nono", code=1)
    assert_nothing_half_written(d)


def test_nono_relative_path(world):
    r = world.ab("session", "create", world.session_path("s1"), env={"AGENT_BOUNDARY_NONO": "nono"})
    assert_error(r, "not absolute", code=1)


def test_nono_too_old(world):
    fake = write_script(world.root / "old-nono", "#!/bin/sh\necho 'nono 0.1.0'\n")
    d = world.session_path("s1")
    r = world.ab("session", "create", d, env={"AGENT_BOUNDARY_NONO": fake})
    assert_error(r, "too old", "0.1.0", "0.80.0", "install nono", code=1)
    assert_nothing_half_written(d)


def test_nono_impostor(world):
    fake = write_script(world.root / "not-nono", "#!/bin/sh\necho 'hello world'\n")
    d = world.session_path("s1")
    r = world.ab("session", "create", d, env={"AGENT_BOUNDARY_NONO": fake})
    assert_error(r, "did not identify nono", code=1)
    assert_nothing_half_written(d)


def test_landlock_unavailable_create(world, no_landlock):
    d = world.session_path("s1")
    r = world.ab("session", "create", d, wrapper=(no_landlock,))
    assert_error(r, "Landlock", "CONFIG_SECURITY_LANDLOCK", "lsm=", code=1)
    assert_nothing_half_written(d)


def test_landlock_unavailable_throwaway_run(world, no_landlock):
    r = world.ab("run", "--", "cat", world.ssh_key, wrapper=(no_landlock,))
    assert_error(r, "Landlock", code=1)
    assert SSH_SECRET not in r.stdout
    assert not world.sessions.exists() or [n for n in os.listdir(world.sessions)] == []


def test_landlock_unavailable_existing_session_fails_closed(world, session, no_landlock):
    r = world.run_in(session, "sh", "-c", f"cat '{world.ssh_key}'; echo ran > ran.txt",
                     wrapper=(no_landlock,))
    assert r.returncode != 0
    assert_no_crash(r)
    assert SSH_SECRET not in r.stdout
    assert "Landlock" in r.stderr
    assert not (world.wt / "ran.txt").exists()


# -- grants that would expose agent-boundary's own state ---------------------------------------


@pytest.mark.parametrize("grant", ["allow", "read"])
def test_profile_covering_state_root_is_refused(world, grant):
    world.profile("wide", allow=["$WORKDIR", "$HOME"] if grant == "allow" else ["$WORKDIR"],
                  read=["$HOME"] if grant == "read" else [])
    d = world.session_path("s1")
    r = world.ab("session", "create", d, "--profile", "wide")
    assert_error(r, "own state must stay out of reach", code=1)
    assert_nothing_half_written(d)


def test_use_of_profile_covering_state_root_keeps_session(world, session):
    world.profile("wide", allow=["$WORKDIR", "$HOME"])
    before = {n: (session / n).read_bytes() for n in os.listdir(session)}
    r = world.ab("--session-dir", session, "use", "wide")
    assert_error(r, "own state must stay out of reach", code=1)
    assert {n: (session / n).read_bytes() for n in os.listdir(session)} == before
    assert leftovers(session.parent, session.name) == []


def test_session_dir_inside_workdir_is_refused(world):
    d = world.wt / ".boundary-session"
    r = world.ab("session", "create", d)
    assert_error(r, "out of reach", code=1)
    assert_nothing_half_written(d)


def test_session_dir_under_tmp_is_refused(world):
    base = Path("/tmp") / f"agent-boundary-it-{uuid.uuid4().hex}"
    d = base / "session"
    try:
        r = world.ab("session", "create", d)
        assert_error(r, "/tmp", code=1)
        assert_nothing_half_written(d)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_self_edit_profile(world):
    world.profile("soft", extra="self_edit: true\n")
    d = world.session_path("s1")
    r = world.ab("session", "create", d, "--profile", "soft")
    assert_ok(r)
    assert r.stdout.splitlines()[1].startswith("profile soft state on SELF-EDIT")
    # A soft boundary: the agent can reach its own session and profiles...
    r = world.run_in(d, "cat", d / "boundary.json")
    assert_ok(r)
    assert '"self_edit": true' in r.stdout
    # ...but never the trusted code that runs outside the boundary, nor the secrets.
    plugin_dir = world.prefix / "lib" / "agent-boundary" / "plugins"
    r = world.run_in(d, "sh", "-c", f"echo x > '{plugin_dir}/backend-evil.so'")
    assert r.returncode != 0
    assert not (plugin_dir / "backend-evil.so").exists()
    assert world.run_in(d, "cat", world.ssh_key).returncode != 0


def test_run_with_deleted_workdir(world):
    gone = world.root / "gone"
    gone.mkdir()
    d = world.create_session("g", workdir=gone)
    shutil.rmtree(gone)
    r = world.run_in(d, "true")
    assert_error(r, str(gone))
    assert "No such file or directory" in r.stderr


def test_reload_with_deleted_workdir_names_the_workdir(world):
    gone = world.root / "gone"
    gone.mkdir()
    d = world.create_session("g", workdir=gone)
    shutil.rmtree(gone)
    before = {n: (d / n).read_bytes() for n in os.listdir(d)}
    r = world.ab("--session-dir", d, "reload")
    assert {n: (d / n).read_bytes() for n in os.listdir(d)} == before
    assert_error(r, str(gone), code=1)
    assert "cannot start" not in r.stderr
