"""The devcontainer backend with Debian's real podman (as root: runc, cgroupfs, explicit
ulimits) and a locally built base image (scripts/build-base-image.sh).

One container per session, started at creation and reused by every command; it sees the
workdir and the granted paths at their host paths and nothing else of the host. Every test
removes the containers of its world's sessions.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from claude_support import allow, deny, session_id, unwrap
from conftest import (AWS_SECRET, SSH_SECRET, assert_error, assert_nothing_half_written,
                      assert_ok, need, need_tool)

IMAGE = "localhost/agent-boundary-base:bookworm"
LABEL = "agent-boundary.session"
BACKEND = {"AGENT_BOUNDARY_BACKEND": "devcontainer"}


def podman_cmd() -> list[str]:
    return [need_tool("podman"), "--runtime", "runc", "--cgroup-manager", "cgroupfs"]


def podman(*args, check=True) -> subprocess.CompletedProcess:
    r = subprocess.run([*podman_cmd(), *args], capture_output=True, text=True, timeout=120)
    if check:
        assert r.returncode == 0, f"podman {args}: {r.stderr}"
    return r


def containers(session_dir: Path, running_only=False) -> list[dict]:
    """The containers labelled with `session_dir`: [{id, name, state}]."""
    args = ["ps", "--no-trunc", "--filter", f"label={LABEL}={session_dir}", "--format",
            "{{.ID}} {{.Names}} {{.State}}"]
    if not running_only:
        args.insert(1, "-a")
    out = podman(*args).stdout.split("\n")
    rows = [line.split(" ", 2) for line in out if line.strip()]
    return [{"id": r[0], "name": r[1], "state": r[2] if len(r) > 2 else ""} for r in rows]


def wait_gone(session_dir: Path, timeout=20.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    left = containers(session_dir)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = containers(session_dir)
    return left


@pytest.fixture
def dc(world):
    """The world, with podman and the base image required, and every container of its
    sessions removed afterwards (whatever the test did)."""
    need_tool("podman")
    need(podman("image", "exists", IMAGE, check=False).returncode == 0,
         f"the image {IMAGE} is missing: run scripts/build-base-image.sh")
    yield world
    r = podman("ps", "-a", "--format", f'{{{{.Names}}}} {{{{index .Labels "{LABEL}"}}}}',
               check=False)
    mine = [line.split(" ", 1)[0] for line in r.stdout.splitlines()
            if " " in line and line.split(" ", 1)[1].startswith(str(world.root) + "/")]
    if mine:
        podman("rm", "-f", "-t", "0", *mine, check=False)


def create(world, name="s1", profile=None, env=None) -> Path:
    return world.create_session(name, profile=profile, env={**BACKEND, **(env or {})})


def devcontainer_profile(world, name="dc", *, read=(), deny=(), env_yaml="",
                         extra="") -> Path:
    """A small profile for the devcontainer backend (no nono block)."""
    def yaml_list(items):
        return "[" + ", ".join(json.dumps(str(i)) for i in items) + "]"
    text = (f"name: {name}\ndescription: devcontainer test profile\nbackend: devcontainer\n"
            f"allow: [\"$WORKDIR\"]\nread: {yaml_list(read)}\ndeny: {yaml_list(deny)}\n"
            f"{env_yaml}{extra}")
    return world.write_profile(name, text)


def test_one_container_per_session_reused_by_every_command(dc):
    s = create(dc)
    started = containers(s)
    assert len(started) == 1 and started[0]["state"].startswith("Up"), started
    cid = started[0]["id"]
    created_at = podman("inspect", cid, "--format", "{{.State.StartedAt}}").stdout
    first = dc.run_in(s, "hostname")
    second = dc.ab("exec", "--session-dir", s, "--cwd", dc.wt, "--", "/bin/sh", "-c",
                   "hostname; pwd")
    assert_ok(first)
    assert_ok(second)
    # A container's hostname is its short id: both commands ran in the same container.
    assert first.stdout.strip() == cid[:12], (first.stdout, cid)
    assert second.stdout.split() == [cid[:12], str(dc.wt)]
    assert [c["id"] for c in containers(s)] == [cid]
    assert podman("inspect", cid, "--format", "{{.State.StartedAt}}").stdout == created_at
    # Exit codes and stdin pass through.
    assert dc.run_in(s, "/bin/sh", "-c", "exit 7").returncode == 7
    r = dc.run_in(s, "cat", input="through stdin\n")
    assert_ok(r)
    assert r.stdout == "through stdin\n"


def test_host_secrets_and_state_are_absent(dc):
    s = create(dc)
    for path in (dc.ssh_key, dc.aws_credentials, dc.home, s / "boundary.json", dc.state):
        r = dc.run_in(s, "cat", path)
        assert r.returncode != 0, f"{path} readable inside:\n{r.stdout}"
        assert "No such file or directory" in r.stderr, r.stderr
    r = dc.run_in(s, "/bin/sh", "-c", "grep -rs FAKE- / --exclude-dir=proc --exclude-dir=sys "
                                      "-l | head; ls /root /home")
    assert SSH_SECRET not in r.stdout and AWS_SECRET not in r.stdout, r.stdout
    assert str(dc.home) not in r.stdout
    # The image's own system, not the host's.
    r = dc.run_in(s, "cat", "/etc/os-release")
    assert_ok(r)
    assert "bookworm" in r.stdout


def test_read_grant_is_read_only_and_workdir_writable(dc):
    ref = dc.root / "ref"
    ref.mkdir()
    (ref / "doc.txt").write_text("REFERENCE\n")
    devcontainer_profile(dc, read=[ref])
    s = create(dc, profile="dc")
    r = dc.run_in(s, "cat", ref / "doc.txt")
    assert_ok(r)
    assert r.stdout == "REFERENCE\n"
    r = dc.run_in(s, "/bin/sh", "-c", f"echo x >> {ref}/doc.txt")
    assert r.returncode != 0 and "Read-only file system" in r.stderr, r.stderr
    r = dc.run_in(s, "touch", ref / "new")
    assert r.returncode != 0 and "Read-only file system" in r.stderr, r.stderr
    assert (ref / "doc.txt").read_text() == "REFERENCE\n"
    assert not (ref / "new").exists()
    r = dc.run_in(s, "/bin/sh", "-c", "echo made-inside > made.txt")
    assert_ok(r)
    assert (dc.wt / "made.txt").read_text() == "made-inside\n"


def test_held_paths_are_not_writable(dc):
    s = create(dc)
    hooks = dc.repo / ".git" / "hooks"
    config = dc.repo / ".git" / "config"
    before = config.read_text()
    for cmd in (f"echo evil > {hooks}/pre-commit",
                f"echo '[core]' >> {config}",
                f"mkdir -p {dc.wt}/.claude && echo '{{}}' > {dc.wt}/.claude/settings.json",
                f"echo 'gitdir: /elsewhere' > {dc.wt}/.git",
                f"mv {hooks} {hooks}.moved",
                f"mv {dc.repo / '.git' / 'worktrees'} {dc.root}/moved"):
        r = dc.run_in(s, "/bin/sh", "-c", cmd)
        assert r.returncode != 0, f"`{cmd}` succeeded inside"
        assert ("Read-only file system" in r.stderr or "Device or resource busy" in r.stderr), (
            cmd, r.stderr)
    assert not (hooks / "pre-commit").exists()
    assert config.read_text() == before
    assert not (dc.wt / ".claude" / "settings.json").exists()


def test_profile_deny_is_hidden(dc):
    (dc.wt / "private").mkdir()
    (dc.wt / "private" / "key.pem").write_text("PRIVATE-DIR-SECRET\n")
    (dc.wt / "secret.txt").write_text("PRIVATE-FILE-SECRET\n")
    devcontainer_profile(dc, deny=["$WORKDIR/secret.txt", "$WORKDIR/private"])
    s = create(dc, profile="dc")
    r = dc.run_in(s, "/bin/sh", "-c", "cat secret.txt; ls -A private; cat private/key.pem")
    assert "SECRET" not in r.stdout, r.stdout
    r = dc.run_in(s, "/bin/sh", "-c", "echo overwritten > secret.txt")
    assert r.returncode != 0 and "Read-only file system" in r.stderr, r.stderr
    r = dc.run_in(s, "touch", "private/new")
    assert r.returncode != 0 and "Read-only file system" in r.stderr, r.stderr
    assert (dc.wt / "secret.txt").read_text() == "PRIVATE-FILE-SECRET\n"
    status = json.loads(dc.ab("--session-dir", s, "status", "--json").stdout)
    states = {d["path"]: d["enforcement"] for d in status["deny_state"]}
    assert states[str(dc.wt / "secret.txt")] == "enforced", states
    assert states[str(dc.wt / "private")] == "enforced", states


def test_git_add_and_commit_in_the_linked_worktree(dc):
    s = create(dc)
    (dc.wt / "feature.txt").write_text("from the container\n")
    r = dc.run_in(s, "/bin/sh", "-c",
                  "git add feature.txt && git -c user.name=Inside -c user.email=in@example.invalid "
                  "commit -q -m 'commit inside the container' && git log --oneline -1")
    assert_ok(r)
    log = dc.git("log", "--format=%an %s", "-1", cwd=dc.wt).stdout
    assert log.strip() == "Inside commit inside the container", log
    assert dc.git("status", "--porcelain", cwd=dc.wt).stdout == ""


def test_environment_passes_by_name_never_in_argv(dc):
    value = "profile-env-value-8c1f5e"
    devcontainer_profile(dc, env_yaml=f"env:\n  AB_DC_TEST_VALUE: {value}\n")
    s = create(dc, profile="dc")
    r = dc.run_in(s, "/bin/sh", "-c", "echo \"[$AB_DC_TEST_VALUE]\"; echo \"[$HOME]\"")
    assert_ok(r)
    assert r.stdout.splitlines() == [f"[{value}]", "[/root]"], r.stdout
    # A variable the launcher did not set stays outside.
    r = dc.run_in(s, "/bin/sh", "-c", "echo \"[$AB_OUTER_ONLY]\"",
                  env={"AB_OUTER_ONLY": "outer-secret"})
    assert r.stdout.strip() == "[]", r.stdout
    # While a command runs, no process on the host carries the value in its argv.
    proc = subprocess.Popen([dc.ab_bin, "--session-dir", str(s), "run", "--", "sleep", "3"],
                            cwd=str(dc.wt), env=dc.env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        seen_exec = False
        for _ in range(30):
            time.sleep(0.1)
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                assert value.encode() not in b" ".join(argv), argv
                if b"exec" in argv and b"AB_DC_TEST_VALUE" in argv:
                    seen_exec = True
            if seen_exec:
                break
        assert seen_exec, "never saw the engine's exec with the variable's name"
    finally:
        proc.wait(timeout=30)


def test_probe_verdicts_inside_the_container(dc):
    s = create(dc)
    assert dc.probe_in(s, dc.wt / "README.md", "read") == "allowed"
    assert dc.probe_in(s, dc.wt / "README.md", "write") == "allowed"
    assert dc.probe_in(s, dc.wt / "absent" / "new.txt", "write") == "allowed|target absent"
    assert not (dc.wt / "absent").exists()
    assert dc.probe_in(s, dc.repo / ".git" / "hooks" / "pre-commit", "write") == "denied|EROFS"
    assert dc.probe_in(s, dc.repo / ".git" / "config", "write") == "denied|EROFS"
    # Inside, the host's key is simply not there (the helper sees an absent target in the
    # image's own /var/tmp); the gate's probe denies it without asking (see the hook test).
    assert dc.probe_in(s, dc.ssh_key, "read") == "allowed|target absent"


def test_claude_hooks_gate_and_wrap_through_the_container(dc, claude):
    (dc.profiles / "default.yaml").write_text(
        dc.default_profile_text.replace("nono:\n  extends: default\n", "")
        + "backend: devcontainer\n")
    (dc.wt / "secret.txt").write_text("HOOK-SECRET\n")
    text = (dc.profiles / "default.yaml").read_text()
    (dc.profiles / "default.yaml").write_text(
        text.replace("deny:\n", "deny:\n  - $WORKDIR/secret.txt\n"))
    d = claude.start("s1")
    [c] = containers(d)
    sid = session_id("s1")
    # Read/Write gate: the backend's probe answers about the host's file.
    # Each allowed tool holds the session's processes until its end (PostToolUse): a Bash
    # command would wait for it.
    for h in (allow(claude.read(sid, dc.wt / "README.md")),
              allow(claude.write(sid, dc.wt / "new.txt"))):
        payload = json.loads(h.payload)
        done = claude.post(sid, payload["tool_name"], payload["tool_input"])
        assert done.rc == 0, done
    assert "not mounted" in deny(claude.read(sid, dc.ssh_key)).reason
    assert "not mounted" in deny(claude.read(sid, "/etc/shadow")).reason
    assert "hidden" in deny(claude.read(sid, dc.wt / "secret.txt")).reason
    deny(claude.write(sid, dc.repo / ".git" / "hooks" / "pre-commit"))
    deny(claude.edit(sid, dc.repo / ".git" / "config"))
    # Bash: rewritten through the launcher, run in the session's container.
    h = allow(claude.bash(sid, "hostname; cat secret.txt; cat " + str(dc.ssh_key)))
    parts = unwrap(h.updated["command"])
    assert parts["session_dir"] == str(d)
    r = claude.run_rewritten(h.updated["command"])
    assert r.stdout.splitlines()[:1] == [c["id"][:12]], (r.returncode, r.stdout, r.stderr)
    assert "HOOK-SECRET" not in r.stdout and SSH_SECRET not in r.stdout
    # SessionEnd releases the container, inside Claude's ~1.5 s SessionEnd budget (the
    # removal itself is detached).
    t0 = time.monotonic()
    end = dc.ab("claude", "hook", "SessionEnd",
                input=json.dumps({"session_id": sid, "cwd": str(dc.wt),
                                  "hook_event_name": "SessionEnd", "reason": "exit"}),
                env=claude.env())
    assert end.returncode == 0, end.stderr
    assert time.monotonic() - t0 < 1.5, "SessionEnd must return inside Claude's budget"
    assert wait_gone(d) == []


def test_session_stop_removes_the_container_and_a_later_command_restarts_it(dc):
    s = create(dc)
    [first] = containers(s)
    t0 = time.monotonic()
    r = dc.ab("session", "stop", s)
    assert_ok(r)
    assert time.monotonic() - t0 < 1.0, "session stop must return within a hook's budget"
    assert wait_gone(s) == []
    # Stopping again, with nothing running, succeeds.
    assert_ok(dc.ab("session", "stop", s))
    # The pinned session still works: its next command starts the container again.
    r = dc.run_in(s, "hostname")
    assert_ok(r)
    [again] = containers(s)
    assert again["id"] != first["id"]
    assert r.stdout.strip() == again["id"][:12]


def test_recreating_a_session_replaces_its_container(dc):
    s = create(dc)
    [first] = containers(s)
    devcontainer_profile(dc, read=[dc.repo])
    assert_ok(dc.ab("--session-dir", s, "use", "dc"))
    left = containers(s)
    assert len(left) == 1 and left[0]["id"] != first["id"], left
    assert_ok(dc.run_in(s, "cat", dc.repo / "README.md"))


def test_run_without_a_session_leaves_no_container(dc):
    r = dc.ab("--backend", "devcontainer", "run", "--", "/bin/sh", "-c", "echo ran; exit 3")
    assert r.returncode == 3, r.stderr
    assert r.stdout == "ran\n"
    sessions = dc.sessions
    deadline = time.monotonic() + 20
    left = ["?"]
    while left and time.monotonic() < deadline:
        r = podman("ps", "-a", "--format", f'{{{{index .Labels "{LABEL}"}}}}')
        left = [x for x in r.stdout.split() if x.startswith(str(sessions) + "/")]
        time.sleep(0.2)
    assert left == []


def test_network_default_and_none(dc):
    s = create(dc)
    r = dc.run_in(s, "ls", "/sys/class/net")
    assert_ok(r)
    assert set(r.stdout.split()) - {"lo"}, f"no network interface: {r.stdout}"
    s2 = create(dc, "s2", env={"AGENT_BOUNDARY_DEVCONTAINER_NETWORK": "none"})
    r = dc.run_in(s2, "ls", "/sys/class/net")
    assert_ok(r)
    assert r.stdout.split() == ["lo"], r.stdout


# -- the project's devcontainer.json -------------------------------------------------------

def write_devcontainer_json(world, text: str) -> Path:
    d = world.wt / ".devcontainer"
    d.mkdir(exist_ok=True)
    f = d / "devcontainer.json"
    f.write_text(text)
    return f


@pytest.fixture
def project_image(dc):
    name = "localhost/agent-boundary-test:project"
    podman("tag", IMAGE, name)
    yield name
    podman("rmi", name, check=False)


def test_project_devcontainer_json_image_is_used(dc, project_image):
    write_devcontainer_json(dc, f"""// JSONC, as editors write it
    {{
      "name": "project",
      "image": "{project_image}",
      "containerEnv": {{"FROM_PROJECT": "yes", "HOST_LEAK": "${{localEnv:AB_HOST_ONLY}}"}},
      "customizations": {{"vscode": {{"extensions": []}}}},
      "postCreateCommand": "touch {dc.root}/POST-CREATE-RAN",
    }}
    """)
    s = create(dc, env={"AB_HOST_ONLY": "host-only-secret"})
    [c] = containers(s)
    assert podman("inspect", c["id"], "--format", "{{.ImageName}}").stdout.strip() == project_image
    r = dc.run_in(s, "/bin/sh", "-c", "echo \"[$FROM_PROJECT][$HOST_LEAK]\"")
    assert_ok(r)
    # ${localEnv:...} is resolved in an empty environment: no host value reaches inside.
    assert r.stdout.strip() == "[yes][]", r.stdout
    assert not (dc.root / "POST-CREATE-RAN").exists()
    spec = json.loads((s / "devcontainer-spec.json").read_text())
    assert spec["image_origin"] == str(dc.wt / ".devcontainer" / "devcontainer.json")
    assert "postCreateCommand" in spec["ignored_keys"]


def test_project_devcontainer_json_that_widens_the_boundary_is_refused(dc):
    marker = dc.root / "INITIALIZE-RAN"
    f = write_devcontainer_json(dc, json.dumps({
        "image": IMAGE,
        "initializeCommand": f"touch {marker}",
        "runArgs": ["--privileged", "-v", "/:/host"],
    }))
    s = dc.session_path("s1")
    r = dc.ab("session", "create", s, "--workdir", dc.wt, env=BACKEND)
    assert_error(r, "`initializeCommand`", "`runArgs`", "runs a command on the host",
                 "remove `", str(f))
    assert not marker.exists(), "initializeCommand ran on the host"
    assert_nothing_half_written(s)
    assert containers(s) == []
    # The opt-out uses the configured base image instead.
    s = create(dc, env={"AGENT_BOUNDARY_DEVCONTAINER_PROJECT_CONFIG": "0"})
    assert_ok(dc.run_in(s, "true"))
    assert not marker.exists()


def test_project_image_that_is_not_local_is_refused(dc):
    write_devcontainer_json(dc, '{"image": "registry.invalid/nothing/here:1"}')
    s = dc.session_path("s1")
    r = dc.ab("session", "create", s, "--workdir", dc.wt, env=BACKEND)
    assert_error(r, "registry.invalid/nothing/here:1", "never pulls")
    assert_nothing_half_written(s)


def test_pruning_an_idle_session_removes_its_container(dc, claude):
    (dc.profiles / "default.yaml").write_text(
        dc.default_profile_text.replace("nono:\n  extends: default\n", "")
        + "backend: devcontainer\n")
    old = claude.start("idle")
    assert len(containers(old)) == 1
    t = time.time() - 45 * 24 * 3600
    for name in os.listdir(old):
        os.utime(old / name, (t, t), follow_symlinks=False)
    os.utime(old, (t, t))
    new = claude.start("fresh")
    assert not old.exists()
    assert wait_gone(old) == []
    assert len(containers(new)) == 1
