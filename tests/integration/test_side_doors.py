"""Side doors (issue 14): host Unix sockets, the caller's secrets, the dynamic loader's
variables and root-only host files, attacked on every backend through `run` (a pinned
session) and through the Claude hook path (PreToolUse rewrite, run with bash as Claude
Code does), plus the legitimate uses that must keep working.

Each attack was run once without agent-boundary (see the `*_without_boundary` tests): they
show the attack itself works, so a pass here means the boundary stopped it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import uuid
from pathlib import Path

import pytest

from claude_support import allow, deny, session_id
from conftest import HERE, SAFE_PATH, assert_ok, need, need_tool

BACKENDS = ("nono", "srt", "devcontainer")
HOST_SECRET = "HOST-SOCKET-SECRET"
AGENT_REPLY = "AGENT-REPLY"
ENV_SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-FAKE-SIDE-DOOR",
    "OPENAI_API_KEY": "sk-FAKE-OPENAI-SIDE-DOOR",
    "AWS_SECRET_ACCESS_KEY": "FAKE-AWS-SIDE-DOOR",
    "GITHUB_TOKEN": "ghp_FAKE-SIDE-DOOR",
    "DEPLOY_PASSWORD": "FAKE-PASSWORD-SIDE-DOOR",
}
IMAGE = "localhost/agent-boundary-base:bookworm"
LABEL = "agent-boundary.session"


class SocketServer:
    """A service of the host's: answers every connection with `reply` (think of an
    ssh-agent that signs, or a bus that starts programs)."""

    def __init__(self, path: Path, reply: str):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(8)
        self.reply = reply.encode()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.sendall(self.reply)

    def close(self):
        self.sock.close()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


def compile_c(world, source: str, out: Path, *flags) -> str:
    cc = need_tool("cc")
    r = subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Werror", *flags, "-o", str(out),
                        str(HERE / "helpers" / source)],
                       capture_output=True, text=True, timeout=120,
                       env={"PATH": SAFE_PATH, "HOME": str(world.home)})
    assert r.returncode == 0, f"cannot compile helpers/{source}:\n{r.stderr}"
    return str(out)


class Boundary:
    """One backend's session, reached through `run` or the Claude hook path."""

    def __init__(self, world, claude, backend: str, via: str, extra_profile: str = "",
                 profile_env: str = ""):
        self.world, self.claude, self.backend, self.via = world, claude, backend, via
        text = world.default_profile_text.replace("\nenv:\n", "\nenv:\n" + profile_env, 1)
        if backend == "devcontainer":
            text = text.replace("nono:\n  extends: default\n", "")
        (world.profiles / "default.yaml").write_text(
            text + f"backend: {backend}\n" + extra_profile)
        # The probes: in the workdir, which every backend mounts or grants.
        self.helper = compile_c(world, "side_doors.c", world.wt / "side_doors", "-static")
        env = {"AGENT_BOUNDARY_BACKEND": backend}
        if via == "run":
            self.session = world.create_session("s1", env=env)
        else:
            self.session = claude.start("s1", env=env)

    def sh(self, command: str, env: dict | None = None) -> subprocess.CompletedProcess:
        env = {"AGENT_BOUNDARY_BACKEND": self.backend, **(env or {})}
        if self.via == "run":
            return self.world.run_in(self.session, "/bin/bash", "-c", command, env=env)
        h = allow(self.claude.bash(session_id("s1"), command))
        return subprocess.run(["/bin/bash", "-c", h.updated["command"]], cwd=str(self.world.wt),
                              env=self.claude.full_env(env), input="", capture_output=True,
                              text=True, timeout=180)


def on_backends(protection: str | None = None, held_by=BACKENDS):
    """Run on every backend; `protection` marks the runs where agent-boundary's own code is
    what holds it (elsewhere the backend holds it by design, so those runs cannot fail
    against the protection's mutant, tests/mutation)."""
    return pytest.mark.parametrize("backend", [
        pytest.param(b, marks=[pytest.mark.protects(protection)]
                     if protection and b in held_by else [])
        for b in BACKENDS], indirect=True)


@pytest.fixture
def backend(request, world):
    name = request.param
    if name == "srt":
        for tool in ("srt", "node", "bwrap", "socat", "rg"):
            need_tool(tool)
    if name == "devcontainer":
        podman = need_tool("podman")
        need(subprocess.run([podman, "image", "exists", IMAGE]).returncode == 0,
             f"the image {IMAGE} is missing: run scripts/build-base-image.sh")
    yield name
    if name == "devcontainer":
        r = subprocess.run(["podman", "ps", "-a", "--format",
                            f'{{{{.Names}}}} {{{{index .Labels "{LABEL}"}}}}'],
                           capture_output=True, text=True)
        mine = [line.split(" ", 1)[0] for line in r.stdout.splitlines()
                if " " in line and line.split(" ", 1)[1].startswith(str(world.root) + "/")]
        if mine:
            subprocess.run(["podman", "rm", "-f", "-t", "0", *mine], capture_output=True)


@pytest.fixture(params=("run", "hook"))
def via(request):
    return request.param


@pytest.fixture
def host_services(world):
    """A host service in /tmp (granted to every sandbox), one beside the fake HOME and a
    fake ssh-agent named by SSH_AUTH_SOCK."""
    servers = [SocketServer(Path(f"/tmp/ab-side-door-{uuid.uuid4().hex[:8]}.sock"), HOST_SECRET),
               SocketServer(world.home / "ide.sock", HOST_SECRET),
               SocketServer(world.home / "agent.sock", AGENT_REPLY)]
    yield servers
    for s in servers:
        s.close()


# -- host sockets ----------------------------------------------------------------------------

def attack_sockets(helper: str, servers) -> str:
    return "; ".join(f"{helper} connect {s.path}" for s in servers) + \
        '; echo "SSH_AUTH_SOCK=${SSH_AUTH_SOCK-unset}"'


def test_host_sockets_reachable_without_boundary(world, host_services):
    helper = compile_c(world, "side_doors.c", world.root / "side_doors", "-static")
    r = subprocess.run(["/bin/bash", "-c", attack_sockets(helper, host_services)],
                       env={"PATH": SAFE_PATH, "SSH_AUTH_SOCK": str(host_services[2].path)},
                       capture_output=True, text=True, timeout=30)
    assert r.stdout.count(HOST_SECRET) == 2 and AGENT_REPLY in r.stdout, r.stdout


@on_backends("host-sockets", held_by=("nono", "srt"))
def test_host_sockets_are_unreachable(world, claude, backend, via, host_services):
    b = Boundary(world, claude, backend, via)
    r = b.sh(attack_sockets(b.helper, host_services),
             env={"SSH_AUTH_SOCK": str(host_services[2].path)})
    out = r.stdout + r.stderr
    assert HOST_SECRET not in out and AGENT_REPLY not in out, out
    assert "SSH_AUTH_SOCK=unset" in r.stdout, out


@on_backends()
def test_allowed_ssh_agent_socket_works(world, claude, backend, via, host_services):
    if backend != "nono":
        pytest.xfail(f"{backend}: allowed host sockets are not passed through yet (README)")
    b = Boundary(world, claude, backend, via, "allow_host_sockets: [SSH_AUTH_SOCK]\n")
    agent = host_services[2].path
    r = b.sh(f'{b.helper} connect "$SSH_AUTH_SOCK"; {b.helper} connect {host_services[0].path}',
             env={"SSH_AUTH_SOCK": str(agent)})
    assert AGENT_REPLY in r.stdout, r.stdout + r.stderr
    assert HOST_SECRET not in r.stdout, "only the allowed socket may be reachable"


@on_backends()
def test_own_socket_server_and_socketpair_work(world, claude, backend, via):
    if backend == "srt":
        pytest.xfail("srt's seccomp filter refuses every AF_UNIX socket (srt's own design)")
    b = Boundary(world, claude, backend, via)
    r = b.sh(f"{b.helper} local {world.wt}")
    assert_ok(r)
    assert "LOCAL-OK" in r.stdout


# -- the caller's secrets --------------------------------------------------------------------

def test_env_secrets_visible_without_boundary():
    r = subprocess.run(["/usr/bin/env"], env={"PATH": SAFE_PATH, **ENV_SECRETS},
                       capture_output=True, text=True)
    assert all(v in r.stdout for v in ENV_SECRETS.values())


@on_backends("env-secrets", held_by=("nono", "srt"))
def test_env_secrets_are_removed(world, claude, backend, via):
    b = Boundary(world, claude, backend, via)
    r = b.sh("env", env={**ENV_SECRETS, "HARMLESS_SETTING": "kept"})
    assert_ok(r)
    for name, value in ENV_SECRETS.items():
        assert value not in r.stdout and f"{name}=" not in r.stdout, r.stdout
    if backend != "devcontainer":  # the container gets variables by name only
        assert "HARMLESS_SETTING=kept" in r.stdout


@on_backends()
def test_kept_secret_and_profile_env_pass(world, claude, backend, via):
    b = Boundary(world, claude, backend, via, "keep_secret_env: [DEPLOY_PASSWORD]\n",
                 profile_env="  PROFILE_TOKEN: from-profile\n")
    r = b.sh("env", env=ENV_SECRETS)
    assert_ok(r)
    assert f"DEPLOY_PASSWORD={ENV_SECRETS['DEPLOY_PASSWORD']}" in r.stdout, r.stdout
    assert "PROFILE_TOKEN=from-profile" in r.stdout, r.stdout
    assert ENV_SECRETS["ANTHROPIC_API_KEY"] not in r.stdout


# -- the dynamic loader ----------------------------------------------------------------------

@pytest.fixture
def preload(world):
    marker = world.wt / "preload-marker"
    lib = compile_c(world, "preload_marker.c", world.root / "marker.so", "-shared", "-fPIC",
                    f'-DMARKER="{marker}"')
    return lib, marker


def loaders(marker: Path) -> list[tuple[str, str]]:
    """(executable, parent's executable) of every process that loaded the library."""
    if not marker.exists():
        return []
    return [tuple(line.split("\t", 1)) for line in marker.read_text().splitlines()]


def test_ld_preload_loads_without_boundary(world, preload):
    lib, marker = preload
    subprocess.run(["/bin/true"], env={"PATH": SAFE_PATH, "LD_PRELOAD": lib}, check=True)
    assert [exe for exe, _ in loaders(marker)] == ["/usr/bin/true"]


@on_backends("loader-env")
def test_ld_preload_reaches_neither_backend_nor_command(world, claude, backend, via, preload):
    lib, marker = preload
    b = Boundary(world, claude, backend, via)
    if marker.exists():
        marker.unlink()
    r = b.sh("/bin/true; env", env={"LD_PRELOAD": lib, "LD_LIBRARY_PATH": str(world.root)})
    assert_ok(r)
    assert "LD_PRELOAD" not in r.stdout and "LD_LIBRARY_PATH" not in r.stdout
    # Only agent-boundary's first process loads it (before main, which re-executes itself
    # without the variable), and on the hook path the shell Claude Code runs the rewritten
    # command with (started by this test): never the backend, the command or its children.
    for exe, parent in loaders(marker):
        outer_shell = via == "hook" and os.path.basename(parent).startswith("python")
        assert os.path.basename(exe) == "agent-boundary" or outer_shell, (exe, parent)


# -- root-only host files --------------------------------------------------------------------

ROOT_SECRETS = [p for p in ("/etc/shadow", "/etc/gshadow", "/etc/sudoers")
                if os.path.exists(p)]


def test_root_secrets_readable_without_boundary():
    need(os.geteuid() == 0, "needs root: the attack is srt run as root")
    for p in ROOT_SECRETS:
        assert Path(p).read_text()


@on_backends("root-secrets", held_by=("srt",))
def test_root_secrets_are_unreadable(world, claude, backend, via):
    b = Boundary(world, claude, backend, via)
    r = b.sh("; ".join(f"cat {p}" for p in ROOT_SECRETS) + "; true")
    for p in ROOT_SECRETS:
        try:
            host = Path(p).read_text()
        except PermissionError:
            continue
        assert host.strip() not in r.stdout, f"{p} leaked with {backend}"
    if via == "hook":
        for p in ROOT_SECRETS:
            deny(claude.read(session_id("s1"), p))


@on_backends("host-sockets", held_by=("nono",))
def test_host_socket_inside_the_checkout_is_unreachable(world, claude, backend, via):
    """A service of the host's listening inside the writable checkout (an IDE's or a language
    server's socket)."""
    if backend == "devcontainer":
        pytest.xfail("devcontainer: the workdir is bind-mounted, host sockets in it are "
                     "reachable (README)")
    b = Boundary(world, claude, backend, via)
    # The world's path is longer than a socket address holds: bind through a short link.
    short = Path(f"/var/tmp/ab-sd-{uuid.uuid4().hex[:8]}")
    short.symlink_to(world.wt)
    server = SocketServer(short / "ide.sock", HOST_SECRET)
    try:
        r = b.sh(f"cd {world.wt} && {b.helper} connect ide.sock")
    finally:
        server.close()
        short.unlink()
    assert HOST_SECRET not in r.stdout + r.stderr, r.stdout
