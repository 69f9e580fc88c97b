"""git inside the boundary, in a linked worktree (objects and refs live in the main .git)."""

import os

import pytest

from conftest import GIT_IDENTITY, assert_ok

# git refuses to run when a config file it must read exists but cannot be read. Isolating
# it from /etc/gitconfig separates "the worktree's common dir is granted" (what these tests
# check) from the system-config question (test_git_with_system_config below).
NO_SYSTEM_CONFIG = {**GIT_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1"}


def test_git_add_and_commit_in_linked_worktree(world, session):
    (world.wt / "f.txt").write_text("from inside\n")
    r = world.run_in(session, "git", "add", "f.txt", env=NO_SYSTEM_CONFIG)
    assert_ok(r)
    r = world.run_in(session, "git", "commit", "-q", "-m", "commit from inside the boundary",
                     env=NO_SYSTEM_CONFIG)
    assert_ok(r)
    # Visible from outside, in the worktree and in the main checkout's branch list.
    log = world.git("log", "-1", "--format=%s%n%an", cwd=world.wt).stdout
    assert log == "commit from inside the boundary\nBoundary Tester\n"
    log = world.git("log", "-1", "--format=%s", "agent", cwd=world.repo).stdout
    assert log == "commit from inside the boundary\n"
    assert world.git("show", "agent:f.txt", cwd=world.repo).stdout == "from inside\n"
    assert world.git("status", "--porcelain", cwd=world.wt).stdout == ""


def test_git_commit_with_identity_from_c_options(world, session):
    (world.wt / "g.txt").write_text("g\n")
    env = {"GIT_CONFIG_NOSYSTEM": "1"}
    assert_ok(world.run_in(session, "git", "add", "g.txt", env=env))
    r = world.run_in(session, "git", "-c", "user.name=Inside Agent",
                     "-c", "user.email=agent@example.invalid", "commit", "-q", "-m", "msg",
                     env=env)
    assert_ok(r)
    assert world.git("log", "-1", "--format=%an %s").stdout == "Inside Agent msg\n"


def test_git_read_only_commands(world, session):
    r = world.run_in(session, "git", "status", "--porcelain", env=NO_SYSTEM_CONFIG)
    assert_ok(r)
    assert r.stdout == ""
    r = world.run_in(session, "git", "log", "--format=%s", env=NO_SYSTEM_CONFIG)
    assert_ok(r)
    assert r.stdout == "initial commit\n"
    r = world.run_in(session, "git", "rev-parse", "--abbrev-ref", "HEAD", env=NO_SYSTEM_CONFIG)
    assert_ok(r)
    assert r.stdout == "agent\n"


def test_git_commit_without_common_dir_grant_fails(world):
    # The profile's git_common_dir is what makes worktree commits possible.
    world.write_profile("nogit", world.default_profile_text
                        .replace("name: default", "name: nogit")
                        .replace("git_common_dir: true", "git_common_dir: false"))
    s = world.create_session("nogit", profile="nogit")
    (world.wt / "f.txt").write_text("x\n")
    r = world.run_in(s, "git", "add", "f.txt", env=NO_SYSTEM_CONFIG)
    assert r.returncode != 0, r.stdout + r.stderr
    assert world.git("status", "--porcelain").stdout == "?? f.txt\n"  # nothing staged


def test_git_hooks_of_main_checkout_stay_runnable(world, session):
    # A pre-commit hook in the common dir runs inside the boundary during commit.
    hook = world.repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho HOOK-RAN > hook-ran.txt\n")
    os.chmod(hook, 0o755)
    (world.wt / "h.txt").write_text("h\n")
    assert_ok(world.run_in(session, "git", "add", "h.txt", env=NO_SYSTEM_CONFIG))
    assert_ok(world.run_in(session, "git", "commit", "-q", "-m", "hooked", env=NO_SYSTEM_CONFIG))
    assert (world.wt / "hook-ran.txt").read_text() == "HOOK-RAN\n"


def test_git_with_system_config(world, session):
    # The user's machine as it is: no GIT_CONFIG_NOSYSTEM. git reads /etc/gitconfig when it
    # exists and refuses to run when it exists but is unreadable.
    (world.wt / "f.txt").write_text("x\n")
    r = world.run_in(session, "git", "status", "--porcelain", env=GIT_IDENTITY)
    assert_ok(r)
    assert_ok(world.run_in(session, "git", "add", "f.txt", env=GIT_IDENTITY))
    assert_ok(world.run_in(session, "git", "commit", "-q", "-m", "sys", env=GIT_IDENTITY))
    assert world.git("log", "-1", "--format=%s").stdout == "sys\n"
