"""`run` from a plain terminal (no session selected): a throwaway session from `default`."""

import os
import signal
import subprocess
import time

import pytest

from conftest import README_TEXT, SSH_SECRET, assert_error, assert_ok


def _run_dirs(world):
    if not world.sessions.exists():
        return []
    return sorted(n for n in os.listdir(world.sessions) if "run-" in n)


def test_throwaway_run_reads_workdir(world):
    r = world.ab("run", "--", "cat", "README.md", cwd=world.wt)
    assert_ok(r)
    assert r.stdout == README_TEXT
    assert _run_dirs(world) == []


def test_throwaway_run_without_double_dash(world):
    r = world.ab("run", "cat", "README.md", cwd=world.wt)
    assert_ok(r)
    assert r.stdout == README_TEXT


def test_throwaway_run_pwd(world):
    r = world.ab("run", "pwd", cwd=world.wt)
    assert_ok(r)
    assert r.stdout == f"{world.wt}\n"


def test_throwaway_run_from_subdir_keeps_cwd(world):
    sub = world.wt / "sub"
    sub.mkdir()
    r = world.ab("run", "pwd", cwd=sub)
    assert_ok(r)
    assert r.stdout == f"{sub}\n"


def test_throwaway_run_exit_code_passes_through(world):
    r = world.ab("run", "--", "sh", "-c", "exit 7", cwd=world.wt)
    assert r.returncode == 7, r.stderr
    assert _run_dirs(world) == []
    assert world.ab("run", "false", cwd=world.wt).returncode == 1
    assert _run_dirs(world) == []


def test_throwaway_run_signal_exit(world):
    r = world.ab("run", "--", "sh", "-c", "kill -TERM $$", cwd=world.wt)
    assert r.returncode == 128 + signal.SIGTERM, r.stderr
    assert _run_dirs(world) == []


def test_throwaway_run_command_not_found(world):
    r = world.ab("run", "--", "definitely-not-a-command-xyz", cwd=world.wt)
    assert r.returncode != 0
    assert "definitely-not-a-command-xyz" in r.stderr
    assert _run_dirs(world) == []


def test_throwaway_run_denies_secrets(world):
    r = world.ab("run", "--", "cat", world.ssh_key, cwd=world.wt)
    assert r.returncode != 0
    assert SSH_SECRET not in r.stdout
    assert _run_dirs(world) == []


def test_throwaway_run_protects_the_default_state_root(world):
    # No AGENT_BOUNDARY_STATE_DIR, no XDG_*: the state root defaults under the fake HOME,
    # and the throwaway session in it is out of the sandbox's reach.
    default_state = world.home / ".local" / "state" / "agent-boundary"
    r = world.ab("run", "--", world.probe, str(default_state / "sessions"), "read",
                 cwd=world.wt, drop=("AGENT_BOUNDARY_STATE_DIR",))
    assert_ok(r)
    assert r.stdout == "denied|EACCES\n"
    assert default_state.is_dir()
    assert os.listdir(default_state / "sessions") == []


def test_throwaway_run_uses_installed_default_without_user_profiles(world):
    empty = world.root / "no-profiles"
    empty.mkdir()
    r = world.ab("run", "--", "cat", "README.md", cwd=world.wt,
                 env={"AGENT_BOUNDARY_PROFILES_DIR": str(empty)})
    assert_ok(r)
    assert r.stdout == README_TEXT
    r = world.ab("run", "--", "cat", world.ssh_key, cwd=world.wt,
                 env={"AGENT_BOUNDARY_PROFILES_DIR": str(empty)})
    assert r.returncode != 0 and SSH_SECRET not in r.stdout


def test_throwaway_run_from_home_is_refused(world):
    # The default profile grants $WORKDIR read+write; with cwd = HOME that would cover the
    # state root, which must stay out of reach: refused, explained, nothing left behind.
    r = world.ab("run", "--", "cat", world.ssh_key, cwd=world.home)
    assert_error(r, "out of reach", code=1)
    assert SSH_SECRET not in r.stdout
    assert _run_dirs(world) == []


def test_throwaway_run_terminated_cleans_up(world):
    p = subprocess.Popen(
        [world.ab_bin, "run", "--", "sh", "-c", "touch started; sleep 5; echo late > late.txt"],
        cwd=world.wt, env=world.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True)
    try:
        deadline = time.time() + 20
        while time.time() < deadline and not (world.wt / "started").exists():
            time.sleep(0.05)
        assert (world.wt / "started").exists(), "the sandboxed child never started"
        assert _run_dirs(world), "no throwaway session while the child runs"
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
        time.sleep(6)  # long enough for an orphaned child to finish its sleep
        orphan_wrote = (world.wt / "late.txt").exists()
        left = _run_dirs(world)
        assert left == [], f"throwaway session left behind: {left}"
        assert not orphan_wrote, "the sandboxed child outlived `agent-boundary run`"
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # our own process group only
        except ProcessLookupError:
            pass


# -- exec: the launcher harnesses use (replaces itself with the sandboxed command) --------------


def test_exec_runs_in_session(world, session):
    r = world.ab("--session-dir", session, "exec", "--", "cat", "README.md", cwd="/")
    assert_ok(r)
    assert r.stdout == README_TEXT
    r = world.ab("--session-dir", session, "exec", "--", "sh", "-c", "exit 5")
    assert r.returncode == 5
    r = world.ab("--session-dir", session, "exec", "--", "cat", world.ssh_key)
    assert r.returncode != 0 and SSH_SECRET not in r.stdout


def test_exec_needs_a_session(world):
    r = world.ab("exec", "--", "true")
    assert_error(r, "no session selected", code=2)


@pytest.mark.parametrize("relative", [True, False])
def test_exec_cwd(world, session, relative):
    sub = world.wt / "sub"
    sub.mkdir()
    r = world.ab("--session-dir", session, "exec", "--cwd", "sub" if relative else sub, "--",
                 "pwd", cwd="/")
    assert_ok(r)
    assert r.stdout == f"{sub}\n"


def test_empty_session_env_means_no_session(world):
    r = world.ab("status", env={"AGENT_BOUNDARY_SESSION_DIR": ""})
    assert_error(r, "no session selected", code=2)
    r = world.ab("run", "--", "cat", "README.md", env={"AGENT_BOUNDARY_SESSION_DIR": ""})
    assert_ok(r)
    assert r.stdout == README_TEXT


@pytest.mark.parametrize("code", [0, 1, 3, 126, 127, 200, 255])
def test_session_run_exit_codes(world, session, code):
    r = world.run_in(session, "sh", "-c", f"exit {code}")
    assert r.returncode == code, r.stderr


def test_run_stays_sandboxed_when_off(world, session):
    # `off` hands control back to the harness's own permissions; an explicit `run` is still
    # a run inside the pinned boundary, never "allow all".
    assert_ok(world.ab("--session-dir", session, "off"))
    r = world.run_in(session, "cat", world.ssh_key)
    assert r.returncode != 0
    assert SSH_SECRET not in r.stdout
