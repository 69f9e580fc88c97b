"""Integration tests: drive the *installed* agent-boundary with the real nono.

Run by scripts/test.sh as

    AB_PREFIX=<stage> AB_BUILD_DIR=<build> AB_SOURCE_DIR=<repo> \
        python3 -m pytest -q -p no:cacheprovider tests/integration

Every test gets a fresh "world" under /var/tmp/agent-boundary-it/ (never /tmp: nono grants
/tmp to every sandbox, so nothing there could be denied):

    <world>/home/                 the fake $HOME, holding fake secrets
        .ssh/id_rsa               FAKE-SSH-SECRET
        .aws/credentials          FAKE-AWS-SECRET
        .aws/config               FAKE-AWS-CONFIG
        .local/state/agent-boundary/   the state root (AGENT_BOUNDARY_STATE_DIR)
    <world>/profiles/             AGENT_BOUNDARY_PROFILES_DIR (the repo's default.yaml)
    <world>/repo/                 a git repo with one commit (the main checkout)
    <world>/wt/                   a linked worktree of it: the agent's workdir

Commands run with a minimal environment (HOME, PATH and the agent-boundary variables):
nothing of the outer environment leaks in. With CI=true nothing may skip itself: a missing
tool is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

# AB_WORLD_BASE lets two checkouts run their suites side by side without sharing worlds.
WORLD_BASE = Path(os.environ.get("AB_WORLD_BASE", "/var/tmp/agent-boundary-it"))
# The mutation stage (tests/mutation/run.sh) hands a mutant's stand-ins to every world as
# variables (JSON object); the product never reads this name.
MUTANT_ENV = json.loads(os.environ.get("AB_MUTANT_ENV") or "{}")
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
HERE = Path(__file__).resolve().parent

SSH_SECRET = "FAKE-SSH-SECRET"
AWS_SECRET = "FAKE-AWS-SECRET"
AWS_CONFIG_SECRET = "FAKE-AWS-CONFIG"
README_TEXT = "WORKTREE-README-CONTENT\n"
# The empty directories a session creates in its workdir to hold them (issue 12).
TOOL_CONFIG_DIRS = {".vscode", ".idea", ".devcontainer", ".codex", ".gemini", ".github",
                    ".opencode", ".cursor"}

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Boundary Tester",
    "GIT_AUTHOR_EMAIL": "tester@example.invalid",
    "GIT_COMMITTER_NAME": "Boundary Tester",
    "GIT_COMMITTER_EMAIL": "tester@example.invalid",
}

# Signs that a failure was not handled: no error path may end like this.
CRASH_MARKERS = ("Traceback", "terminate called", "Aborted", "core dumped",
                 "internal error", "Segmentation fault")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "protects(name, ...): a test of the named protection; the mutation stage "
        "(tests/mutation) expects it to FAIL against that protection's mutant")


def pytest_addoption(parser):
    parser.addoption("--protects", default="",
                     help="run only the tests marked protects(NAME) for one of these "
                          "comma-separated names (the mutation stage's selection)")
    parser.addoption("--protections-out", default="",
                     help="write the name of every protection a collected test is marked "
                          "with to this file, one a line (the mutation stage checks each has "
                          "a mutant)")


def protections_of(item) -> set[str]:
    # A control arm (a test's parameter id `control`, `control-...`) plays the attack without
    # agent-boundary to show it works there: it protects nothing, whatever the test's marks.
    # `protects(..., only=("bypassPermissions",))` applies to the parameter ids holding one
    # of those tokens: the other cases have a second layer (the harness's own) that a mutant
    # of ours cannot switch off.
    spec = getattr(item, "callspec", None)
    tokens = spec.id.split("-") if spec is not None else []
    if "control" in tokens:
        return set()
    return {name for m in item.iter_markers("protects") for name in m.args
            if not m.kwargs.get("only") or set(m.kwargs["only"]) & set(tokens)}


def pytest_collection_modifyitems(config, items):
    out = config.getoption("--protections-out")
    if out:
        names = sorted({n for i in items for n in protections_of(i)})
        Path(out).write_text("".join(f"{n}\n" for n in names))
    wanted = {n for n in config.getoption("--protects").split(",") if n}
    if not wanted:
        return
    keep = [i for i in items if protections_of(i) & wanted]
    config.hook.pytest_deselected(items=[i for i in items if i not in keep])
    items[:] = keep


def need(condition: bool, message: str) -> None:
    """Skip when a prerequisite is missing; under CI=true, fail instead."""
    if condition:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"prerequisite missing (CI=true forbids skipping): {message}")
    pytest.skip(message)


def need_tool(name: str) -> str:
    path = shutil.which(name, path=SAFE_PATH)
    need(path is not None, f"`{name}` is not installed on {SAFE_PATH}")
    return path


def prefix() -> Path:
    value = os.environ.get("AB_PREFIX", "")
    need(bool(value), "AB_PREFIX is not set (point it at an installed agent-boundary prefix; "
                      "scripts/test.sh does this)")
    p = Path(value).resolve()
    need((p / "bin" / "agent-boundary").is_file(),
         f"{p}/bin/agent-boundary does not exist: build and `cmake --install` first")
    return p


def assert_no_crash(result: subprocess.CompletedProcess) -> None:
    out = result.stdout + result.stderr
    for marker in CRASH_MARKERS:
        assert marker not in out, f"unhandled failure ({marker!r}) in output:\n{out}"
    assert result.returncode >= 0, f"killed by signal {-result.returncode}:\n{out}"
    assert result.returncode not in (134, 139), f"crashed (exit {result.returncode}):\n{out}"


def assert_error(result: subprocess.CompletedProcess, *needles: str, code: int | None = None) -> None:
    """A clean, explained failure: non-zero exit (or exactly `code`), every needle in the
    combined output, and no crash markers."""
    out = result.stdout + result.stderr
    if code is None:
        assert result.returncode != 0, f"expected failure, got exit 0:\n{out}"
    else:
        assert result.returncode == code, f"expected exit {code}, got {result.returncode}:\n{out}"
    assert_no_crash(result)
    for needle in needles:
        assert needle in out, f"{needle!r} missing from output:\n{out}"


def assert_ok(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, (
        f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}")


def leftovers(parent: Path, name: str) -> list[str]:
    """Staging dirs a failed write could have left beside `parent/name`."""
    if not parent.is_dir():
        return []
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}.new-"))


def assert_nothing_half_written(session_dir: Path) -> None:
    assert not os.path.lexists(session_dir), (
        f"{session_dir} exists after a failed create: {sorted(os.listdir(session_dir))}")
    assert leftovers(session_dir.parent, session_dir.name) == []


def file_mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


class World:
    """One test's private filesystem world and the commands that act in it."""

    def __init__(self, root: Path, ab_prefix: Path, git: str):
        self.root = root
        self.prefix = ab_prefix
        self.ab_bin = str(ab_prefix / "bin" / "agent-boundary")
        self.probe = str(ab_prefix / "libexec" / "agent-boundary" / "probe")
        self.git_bin = git
        self.home = root / "home"
        self.profiles = root / "profiles"
        self.repo = root / "repo"
        self.wt = root / "wt"
        self.state = self.home / ".local" / "state" / "agent-boundary"
        self.sessions = self.state / "sessions"
        self.ssh_key = self.home / ".ssh" / "id_rsa"
        self.aws_credentials = self.home / ".aws" / "credentials"
        self.aws_config = self.home / ".aws" / "config"
        self.default_profile_text = ""

    # -- setup ---------------------------------------------------------------------------

    def build(self, source_dir: Path) -> None:
        for d in (self.home, self.profiles, self.home / ".ssh", self.home / ".aws"):
            d.mkdir(parents=True, exist_ok=True)
        os.chmod(self.home / ".ssh", 0o700)
        self.ssh_key.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SSH_SECRET}\n")
        os.chmod(self.ssh_key, 0o600)
        self.aws_credentials.write_text(
            f"[default]\naws_access_key_id = AKIAFAKE\naws_secret_access_key = {AWS_SECRET}\n")
        self.aws_config.write_text(f"[default]\nregion = {AWS_CONFIG_SECRET}\n")
        self.default_profile_text = (source_dir / "profiles" / "default.yaml").read_text()
        (self.profiles / "default.yaml").write_text(self.default_profile_text)

        self.repo.mkdir()
        self.git("init", "-q", cwd=self.repo)
        (self.repo / "README.md").write_text(README_TEXT)
        self.git("add", "README.md", cwd=self.repo)
        self.git("commit", "-q", "-m", "initial commit", cwd=self.repo)
        self.git("worktree", "add", "-q", "-b", "agent", str(self.wt), cwd=self.repo)
        assert (self.wt / "README.md").read_text() == README_TEXT
        # Resolved once: the tool reports resolved paths.
        self.wt = Path(os.path.realpath(self.wt))

    # -- environment and processes -------------------------------------------------------

    def env(self, extra: dict | None = None, drop: tuple = ()) -> dict:
        env = {
            "HOME": str(self.home),
            "PATH": SAFE_PATH,
            "AGENT_BOUNDARY_PROFILES_DIR": str(self.profiles),
            "AGENT_BOUNDARY_STATE_DIR": str(self.state),
            **MUTANT_ENV,
        }
        for k in drop:
            env.pop(k, None)
        env.update(extra or {})
        return env

    def ab(self, *args, cwd=None, env=None, drop=(), timeout=120, wrapper=(), input=None,
           binary=None, umask=-1):
        """Run the installed agent-boundary with `args`; returns CompletedProcess (text).
        stdin is empty unless `input` is given."""
        argv = [*wrapper, binary or self.ab_bin, *[str(a) for a in args]]
        return subprocess.run(argv, cwd=str(cwd or self.wt), env=self.env(env, drop),
                              input=input if input is not None else "", umask=umask,
                              capture_output=True, text=True, timeout=timeout)

    def git(self, *args, cwd=None, check=True):
        """git outside the boundary (test setup and inspection)."""
        env = {"HOME": str(self.home), "PATH": SAFE_PATH, "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_CONFIG_GLOBAL": "/dev/null", **GIT_IDENTITY}
        r = subprocess.run([self.git_bin, "-c", "init.defaultBranch=main", *args],
                           cwd=str(cwd or self.wt), env=env, capture_output=True, text=True,
                           timeout=60)
        if check:
            assert r.returncode == 0, f"git {args} failed:\n{r.stdout}{r.stderr}"
        return r

    # -- sessions and profiles -----------------------------------------------------------

    def session_path(self, name: str = "s1") -> Path:
        return self.sessions / name

    def create_session(self, name: str = "s1", profile: str | None = None,
                       workdir: Path | None = None, env=None) -> Path:
        d = self.session_path(name)
        args = ["session", "create", d, "--workdir", workdir or self.wt]
        if profile:
            args += ["--profile", profile]
        r = self.ab(*args, env=env)
        assert_ok(r)
        assert r.stdout.splitlines()[0] == str(d), r.stdout
        return d

    def run_in(self, session: Path, *cmd, **kw):
        return self.ab("--session-dir", session, "run", "--", *cmd, **kw)

    def write_profile(self, name: str, text: str) -> Path:
        p = self.profiles / f"{name}.yaml"
        p.write_text(text)
        return p

    def profile(self, name: str, *, allow=("$WORKDIR",), read=(), write=(), deny=(),
                resolve_symlinks=None, extra: str = "") -> Path:
        """A small profile in the default's style (nono base `default`)."""
        def yaml_list(items):
            return "[" + ", ".join(json.dumps(str(i)) for i in items) + "]"
        text = (f"name: {name}\ndescription: integration test profile {name}\n"
                f"allow: {yaml_list(allow)}\nread: {yaml_list(read)}\nwrite: {yaml_list(write)}\n"
                f"deny: {yaml_list(deny)}\n")
        if resolve_symlinks is not None:
            items = ", ".join(f"{{path: {json.dumps(p)}, access: read}}" for p in resolve_symlinks)
            text += f"resolve_symlinks: [{items}]\n"
        text += extra
        text += "nono:\n  extends: default\n"
        return self.write_profile(name, text)

    def probe_in(self, session: Path, path, access: str) -> str:
        r = self.run_in(session, self.probe, str(path), access)
        assert_ok(r)
        lines = r.stdout.splitlines()
        assert len(lines) == 1, r.stdout
        return lines[0]

    # -- teardown ------------------------------------------------------------------------

    def destroy(self) -> None:
        if not self.root.exists():
            return
        for dirpath, dirnames, filenames in os.walk(self.root):
            for name in dirnames + filenames:
                p = os.path.join(dirpath, name)
                if not os.path.islink(p):
                    try:
                        os.chmod(p, os.lstat(p).st_mode | stat.S_IWUSR | stat.S_IRUSR | (
                            stat.S_IXUSR if os.path.isdir(p) else 0))
                    except OSError:
                        pass
        os.chmod(self.root, 0o700)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def ab_prefix() -> Path:
    return prefix()


@pytest.fixture(scope="session")
def source_dir() -> Path:
    value = os.environ.get("AB_SOURCE_DIR")
    p = Path(value).resolve() if value else HERE.parent.parent
    need((p / "profiles" / "default.yaml").is_file(), f"no profiles/default.yaml under {p}")
    return p


@pytest.fixture(scope="session")
def toolchain(ab_prefix) -> dict:
    tools = {"nono": need_tool("nono"), "git": need_tool("git")}
    r = subprocess.run([tools["nono"], "--version"], capture_output=True, text=True, timeout=30)
    need(r.returncode == 0 and r.stdout.startswith("nono "), f"`nono --version` failed: {r.stderr}")
    return tools


@pytest.fixture
def world(request, ab_prefix, source_dir, toolchain) -> World:
    WORLD_BASE.mkdir(mode=0o700, parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)[:60]
    root = Path(tempfile.mkdtemp(prefix=f"{safe}-", dir=WORLD_BASE)).resolve()
    w = World(root, ab_prefix, toolchain["git"])
    try:
        w.build(source_dir)
        yield w
    finally:
        w.destroy()


@pytest.fixture
def session(world) -> Path:
    """A session from the shipped default profile, workdir = the linked worktree."""
    return world.create_session("s1")


@pytest.fixture
def no_landlock(world) -> str:
    """Path of the no_landlock helper, compiled into the world."""
    cc = need_tool("cc")
    out = world.root / "no_landlock"
    r = subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(out),
                        str(HERE / "helpers" / "no_landlock.c")],
                       capture_output=True, text=True, timeout=120,
                       env={"PATH": SAFE_PATH, "HOME": str(world.home)})
    assert r.returncode == 0, f"cannot compile helpers/no_landlock.c:\n{r.stderr}"
    return str(out)


def write_script(path: Path, text: str) -> str:
    path.write_text(text)
    os.chmod(path, 0o755)
    return str(path)


# -- Claude Code hooks (test_claude_hooks_*.py; helpers in claude_support.py) --------------

@pytest.fixture
def claude(world, source_dir):
    """The world as Claude Code's hooks see it: a plugin root inside the world (a copy of
    claude-plugin/), a CLAUDE_ENV_FILE, and helpers that feed hook payloads on stdin."""
    from claude_support import Claude
    return Claude(world, source_dir)

