"""README.md, as a new user follows it, against the DEFAULT install (what `scripts/install.sh`
put into /usr/local; .ci/run runs it as root just before the tests).

The commands come from README.md itself: the "Install and test" block must be what .ci/run
runs, and every command of the "Using it" block runs as written (through /bin/sh, from the
project directory, with a fresh HOME and nothing of agent-boundary's environment), as root
and as an unprivileged user who uses root's install (agent-boundary and nono in
/usr/local/bin). A README edit that breaks a command fails here. Every command the "Using
it" table names runs too, in the session the walkthrough created.

The oracle, so that it holds for any command the README may show: a command that names one
of the fake secrets must fail without printing it; every other command must succeed; none
may crash.
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import CRASH_MARKERS, SSH_SECRET, AWS_SECRET, WORLD_BASE, need

sys.path.insert(0, str(Path(__file__).resolve().parent / "e2e"))
from claude_e2e import claude_bin, make_marketplace  # noqa: E402  (the pinned Claude Code)
from model_server import ModelServer, tool  # noqa: E402

DEFAULT_PREFIX = Path("/usr/local")
AB = DEFAULT_PREFIX / "bin" / "agent-boundary"
USER = "ab-readme-walker"
# Outside WORLD_BASE (0700 root): the unprivileged user's world must be reachable for it.
WALK_BASE = WORLD_BASE.parent / (WORLD_BASE.name + "-readme")
SECRETS = {"~/.ssh/id_rsa": SSH_SECRET, "~/.aws/credentials": AWS_SECRET}


# -- README parsing ---------------------------------------------------------------------------

def readme(source_dir: Path) -> str:
    return (source_dir / "README.md").read_text()


def section(text: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"README.md has no section `## {title}`"
    return m.group(1)


def sh_commands(section_text: str) -> list[str]:
    """The commands of a section's first ```sh block: one per line, comments dropped."""
    m = re.search(r"^([ \t]*)```sh\n(.*?)^\1```", section_text, re.S | re.M)  # a list's too
    assert m, "no ```sh block in the section"
    out = []
    for line in m.group(2).splitlines():
        line = line.removeprefix(m.group(1))
        words = shlex.split(line, comments=True)
        if not words:
            continue
        command = re.sub(r"(^|\s)#.*$", "", line).strip()  # as written: `~` must stay `~`
        assert shlex.split(command) == words, f"cannot separate the comment of: {line}"
        out.append(command)
    return out


def table_commands(section_text: str) -> list[str]:
    """The command words of the section's command table: `session create DIR [...]` gives
    `session create`, `[--session-dir DIR] status [--json]` gives `status`."""
    out = []
    for row in re.findall(r"^\| (`.*?) \|", section_text, re.M):
        for span in re.findall(r"`([^`]+)`", row):
            span = re.sub(r"^(\[[^\]]*\]\s*)+", "", span)
            words = []
            for w in span.split():
                if w[0] in "[-" or w[0].isupper() or not w[0].isalpha():
                    break
                words.append(w)
            if words:
                out.append(" ".join(words))
    return out


# -- the users and their worlds ---------------------------------------------------------------

class Walker:
    """One user following the README: a fresh HOME with fake secrets and a project."""

    def __init__(self, name: str, uid: int, gid: int, root: Path):
        self.name, self.uid, self.gid = name, uid, gid
        self.home = root / "home"
        self.app = self.home / "src" / "app"
        ssh = self.home / ".ssh"
        aws = self.home / ".aws"
        for d in (self.app, ssh, aws):
            d.mkdir(parents=True)
        (ssh / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SSH_SECRET}\n")
        (aws / "credentials").write_text(f"[default]\naws_secret_access_key = {AWS_SECRET}\n")
        (self.app / "Makefile").write_text("test:\n\t@echo app tests pass > test-result.txt\n")
        os.chmod(ssh, 0o700)
        self.give(root)

    def give(self, tree: Path) -> None:
        """Make everything under `tree` this user's."""
        for dirpath, dirnames, filenames in os.walk(tree):
            for n in [dirpath, *(os.path.join(dirpath, f) for f in dirnames + filenames)]:
                os.lchown(n, self.uid, self.gid)

    def env(self) -> dict:
        # What a login shell of a new user has; no AGENT_BOUNDARY_* variables.
        return {"HOME": str(self.home), "PATH": "/usr/local/bin:/usr/bin:/bin",
                "USER": self.name, "LOGNAME": self.name, "LANG": "C.UTF-8"}

    def sh(self, command: str, timeout: int = 300, env: dict | None = None
           ) -> subprocess.CompletedProcess:
        as_user = {} if self.uid == 0 else {"user": self.uid, "group": self.gid,
                                            "extra_groups": []}
        return subprocess.run(["/bin/sh", "-c", command], cwd=str(self.app),
                              env={**self.env(), **(env or {})},
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                              **as_user)

    def expand(self, text: str) -> str:
        return text.replace("~/", f"{self.home}/")


def unprivileged_user() -> tuple[int, int]:
    try:
        pw = pwd.getpwnam(USER)
    except KeyError:
        r = subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                            "--shell", "/usr/sbin/nologin", USER], capture_output=True, text=True)
        assert r.returncode == 0, f"useradd {USER} failed: {r.stderr}"
        pw = pwd.getpwnam(USER)
    return pw.pw_uid, pw.pw_gid


@pytest.fixture(scope="module")
def default_install():
    need(AB.is_file(), f"{AB} does not exist: run scripts/install.sh as root first (.ci/run does)")
    need(os.geteuid() == 0, "the walkthrough creates an unprivileged user and needs root")
    return AB


@pytest.fixture(params=["root", "user"])
def walker(request, default_install):
    WALK_BASE.mkdir(mode=0o755, parents=True, exist_ok=True)
    os.chmod(WALK_BASE, 0o755)
    root = Path(tempfile.mkdtemp(prefix=f"{request.param}-", dir=WALK_BASE))
    uid, gid = (0, 0) if request.param == "root" else unprivileged_user()
    w = Walker("root" if uid == 0 else USER, uid, gid, root)
    try:
        yield w
    finally:
        shutil.rmtree(root, ignore_errors=True)


def check(w: Walker, command: str, r: subprocess.CompletedProcess) -> None:
    out = r.stdout + r.stderr
    where = f"`{command}` as {w.name} (exit {r.returncode}):\n{out}"
    for marker in CRASH_MARKERS:
        assert marker not in out, where
    for secret in SECRETS.values():
        assert secret not in out, f"a secret leaked: {where}"
    if any(path in command for path in SECRETS):
        assert r.returncode != 0, f"reading a secret succeeded: {where}"
    else:
        assert r.returncode == 0, where


# -- the tests --------------------------------------------------------------------------------

def test_ci_runs_the_readmes_install_and_test_commands(source_dir):
    commands = sh_commands(section(readme(source_dir), "Install and test"))
    assert commands == ["scripts/install.sh", "scripts/test.sh"], commands
    ci = [line.strip() for line in (source_dir / ".ci" / "run").read_text().splitlines()]
    at = [ci.index(c) if c in ci else -1 for c in commands]
    assert -1 not in at and at == sorted(at), (
        f".ci/run must run the README's commands {commands} as written, in order:\n" + "\n".join(ci))


def test_default_install_is_where_the_readme_says(default_install):
    r = subprocess.run([str(AB), "plugins"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == "plugin dir: /usr/local/lib/agent-boundary/plugins", r.stdout
    for name in ("backend nono", "backend srt", "backend devcontainer", "harness claude"):
        assert name in r.stdout, r.stdout
    assert os.stat(AB).st_uid == 0 and not os.stat(AB).st_mode & 0o022


def test_help_names_the_program(default_install):
    r = subprocess.run([str(AB), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    assert "Usage: agent-boundary [OPTIONS] [SUBCOMMAND]" in r.stdout, r.stdout


def test_using_it_as_written(walker, source_dir):
    commands = sh_commands(section(readme(source_dir), "Using it"))
    assert commands, "README's `Using it` shows no commands"
    for command in commands:
        check(walker, command, walker.sh(command))
    # The walkthrough's `make test` really ran, inside the project.
    if any("make test" in c for c in commands):
        assert (walker.app / "test-result.txt").read_text() == "app tests pass\n"


def test_every_command_of_the_table_works(walker, source_dir):
    text = section(readme(source_dir), "Using it")
    s = "$HOME/.local/state/agent-boundary/sessions/table"
    s2 = "$HOME/.local/state/agent-boundary/sessions/table2"
    examples = {
        "session create": [f"agent-boundary session create {s} --workdir $HOME/src/app",
                           f"agent-boundary session create {s2} --profile default"],
        "status": [f"agent-boundary --session-dir {s} status",
                   f"agent-boundary --session-dir {s} status --json",
                   f"AGENT_BOUNDARY_SESSION_DIR={s} agent-boundary"],  # bare: status
        "off": [f"agent-boundary --session-dir {s} off"],
        "on": [f"agent-boundary --session-dir {s} on"],
        "use": [f"agent-boundary --session-dir {s} use default"],
        "reload": [f"agent-boundary --session-dir {s} reload"],
        "run": [f"agent-boundary --session-dir {s} run -- make test", "agent-boundary run -- ls"],
        "exec": [f"agent-boundary exec --session-dir {s} --cwd $HOME/src/app -- true"],
        "list": ["agent-boundary list"],
        "validate": ["agent-boundary validate", "agent-boundary validate default"],
        "schema": ["agent-boundary schema > profile.schema.json"],
        "plugins": ["agent-boundary plugins"],
        "checkpoint": [f"agent-boundary --session-dir {s} checkpoint"],
        "session stop": [f"agent-boundary session stop {s}"],
        "compare": ["agent-boundary compare --backend nono --runs 1"],
    }
    shown = table_commands(text)
    missing = sorted(set(shown) - set(examples))
    assert not missing, f"README's table shows commands this test does not run: {missing}"
    for word in (w for w in examples if w in shown):  # in this order: `off` before `on`
        for command in examples[word]:
            check(walker, command, walker.sh(command))
    # What they did is visible: the session exists, `status` reflects `on`.
    r = walker.sh(f"agent-boundary --session-dir {s} status")
    assert r.stdout.startswith("profile default state on"), r.stdout
    assert (walker.app / "profile.schema.json").stat().st_size > 0


def test_claude_plugin_steps_as_written(walker, source_dir):
    """README's Claude Code steps as written (the marketplace path is the one placeholder),
    as root and as an unprivileged user, against the default install: the plugin ends up
    enabled, and that user's next real `claude -p` session (driven by the local scripted
    model server) runs Bash inside the boundary: the secret stays out, a harmless command
    runs in the project."""
    commands = sh_commands(section(readme(source_dir), "Claude Code"))
    assert any(c.startswith("claude plugin enable ") for c in commands), commands
    claude_dir = Path(claude_bin()).parent
    # The user's own copy of the repository's marketplace, as a clone of theirs would be.
    market = make_marketplace(walker.home / "src" / "agent-boundary", source_dir)
    walker.give(market)
    env = {"PATH": f"{claude_dir}:/usr/local/bin:/usr/bin:/bin", "DISABLE_AUTOUPDATER": "1",
           "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_ERROR_REPORTING": "1"}
    for command in commands:
        written = command.replace("/path/to/agent-boundary", str(market))
        r = walker.sh(written, env=env, timeout=120)
        assert r.returncode == 0, f"`{written}` as {walker.name}:\n{r.stdout}{r.stderr}"
    r = walker.sh("claude plugin list", env=env, timeout=120)
    assert "agent-boundary@agent-boundary" in r.stdout and "enabled" in r.stdout.lower(), r.stdout
    script = [tool("Bash", command="cat ~/.ssh/id_rsa"),
              tool("Bash", command="echo walked > walked.txt"), "done"]
    with ModelServer(script) as server:
        # bypassPermissions: Claude's own permission checks out of the way (without the
        # plugin the `cat` would print the key), so the boundary alone keeps the secret out.
        r = walker.sh("claude -p 'follow the script' --output-format stream-json --verbose "
                      "--permission-mode bypassPermissions",
                      env={**env, "ANTHROPIC_BASE_URL": server.url, "IS_SANDBOX": "1",
                           "ANTHROPIC_API_KEY": "sk-ant-walkthrough-fake"}, timeout=240)
        out = r.stdout + r.stderr
        assert r.returncode == 0, out[-3000:]
        assert SSH_SECRET not in out
        stolen = server.result(0)
        assert SSH_SECRET not in stolen.text and stolen.is_error, stolen
        assert not server.result(1).is_error, server.result(1)
    # It ran inside the user's project, through the boundary the plugin created.
    assert (walker.app / "walked.txt").read_text() == "walked\n"
    sessions = walker.home / ".local" / "state" / "agent-boundary" / "sessions"
    assert sessions.is_dir() and any(sessions.iterdir()), "SessionStart created no session"
