"""The rewritten Bash command, run the way Claude Code runs it (`bash -c <command>` with the
hook's environment), really runs inside the boundary; nothing in the original command can
get out of the single quoted word it becomes."""

import os
import subprocess

import pytest

from claude_support import allow, session_id, unwrap
from conftest import AWS_CONFIG_SECRET, README_TEXT, SSH_SECRET, assert_ok


@pytest.fixture
def sid(claude):
    claude.start("wrapped")
    return session_id("wrapped")


def _rewrite(claude, sid, command, cwd=None):
    h = allow(claude.bash(sid, command, cwd=cwd))
    rewritten = h.updated["command"]
    assert unwrap(rewritten)["inner"] == command
    return rewritten


def _run(claude, sid, command, cwd=None):
    rewritten = _rewrite(claude, sid, command, cwd)
    for secret in (SSH_SECRET, AWS_CONFIG_SECRET):
        assert secret not in rewritten
    return claude.run_rewritten(rewritten, cwd=cwd)


def _no_secret(r):
    for secret in (SSH_SECRET, AWS_CONFIG_SECRET):
        assert secret not in r.stdout, f"secret leaked to stdout:\n{r.stdout}"
        assert secret not in r.stderr, f"secret leaked to stderr:\n{r.stderr}"


def test_control_the_secret_is_readable_outside(world, claude):
    # Without the boundary the same command prints the secret: the checks below can fail.
    r = claude.run_rewritten("cat ~/.ssh/id_rsa")
    assert SSH_SECRET in r.stdout


@pytest.mark.protects("landlock")
def test_secret_cannot_be_read(world, claude, sid):
    r = _run(claude, sid, "cat ~/.ssh/id_rsa")
    assert r.returncode != 0
    _no_secret(r)
    assert "Permission denied" in r.stderr


def test_workdir_file_can_be_read(world, claude, sid):
    r = _run(claude, sid, "cat README.md")
    assert_ok(r)
    assert r.stdout == README_TEXT


def test_workdir_file_can_be_written(world, claude, sid):
    r = _run(claude, sid, "echo made > made.txt && mkdir -p d/e && echo deep > d/e/f.txt")
    assert_ok(r)
    assert (world.wt / "made.txt").read_text() == "made\n"
    assert (world.wt / "d" / "e" / "f.txt").read_text() == "deep\n"


def test_pwd_is_the_payload_cwd(world, claude, sid):
    sub = world.wt / "sub" / "dir"
    sub.mkdir(parents=True)
    r = _run(claude, sid, "pwd", cwd=sub)
    assert_ok(r)
    assert r.stdout == f"{sub}\n"
    r = _run(claude, sid, "cat ../../README.md", cwd=sub)
    assert_ok(r)
    assert r.stdout == README_TEXT


def test_pwd_when_claude_runs_from_elsewhere(world, claude, sid):
    # Claude's own shell may sit anywhere; the rewritten command carries the cwd itself.
    sub = world.wt / "sub"
    sub.mkdir()
    rewritten = _rewrite(claude, sid, "pwd", cwd=sub)
    r = claude.run_rewritten(rewritten, cwd="/")
    assert_ok(r)
    assert r.stdout == f"{sub}\n"


def test_exit_status_is_passed_through(world, claude, sid):
    r = _run(claude, sid, "exit 7")
    assert r.returncode == 7


def test_stdout_and_stderr_are_passed_through(world, claude, sid):
    r = _run(claude, sid, "echo out; echo err >&2")
    assert_ok(r)
    assert r.stdout == "out\n"
    assert "err\n" in r.stderr


def test_profile_env_applies(world, claude, sid):
    r = _run(claude, sid, 'printf %s "$NETRC"')
    assert_ok(r)
    assert r.stdout == "/dev/null"


def test_main_checkout_and_git_work(world, claude, sid):
    r = _run(claude, sid, "git -c user.name=t -c user.email=t@e.invalid commit -q "
                          "--allow-empty -m inside && git log --oneline | wc -l")
    assert_ok(r)
    assert r.stdout.strip() == "2"


INJECTIONS = {
    "close-quote": "'; cat ~/.ssh/id_rsa; '",
    "close-quote-escaped": "\\'; cat ~/.ssh/id_rsa; echo \\'",
    "double-quote": "\"; cat ~/.ssh/id_rsa; \"",
    "command-substitution": "echo $(cat ~/.ssh/id_rsa)",
    "backticks": "echo `cat ~/.ssh/id_rsa`",
    "heredoc": "cat <<EOF\n$(cat ~/.ssh/id_rsa)\nEOF",
    "quoted-heredoc": "bash <<'EOF'\ncat ~/.ssh/id_rsa\nEOF",
    "newline": "true\ncat ~/.ssh/id_rsa",
    "carriage-return": "true\r\ncat ~/.ssh/id_rsa",
    "semicolon": "true; cat ~/.ssh/id_rsa",
    "and": "true && cat ~/.ssh/id_rsa",
    "background": "cat ~/.ssh/id_rsa & wait",
    "subshell": "(cat ~/.ssh/id_rsa)",
    "process-substitution": "cat <(cat ~/.ssh/id_rsa)",
    "eval": "eval 'cat ~/.ssh/id_rsa'",
    "nested-bash": "bash -c 'cat ~/.ssh/id_rsa'",
    "redirect": "cat < ~/.ssh/id_rsa",
    "aws-config": "cat ~/.aws/config",
    "copy-out": "cp ~/.ssh/id_rsa ./stolen; cat stolen",
    "symlink-in": "ln -s ~/.ssh/id_rsa link && cat link",
    "exec-replace": "exec cat ~/.ssh/id_rsa",
    "env-trick": "env -i /bin/cat ~/.ssh/id_rsa",
    "trailing-backslash": "cat ~/.ssh/id_rsa \\",
    "unbalanced-quote": "cat ~/.ssh/id_rsa\necho '",
    "fake-wrapper": "/bin/bash -c 'cat ~/.ssh/id_rsa'",
    "toggle-chained": "agent-boundary off; cat ~/.ssh/id_rsa",
}


# These leak only through a broken quoting of the rewritten word (a bare `'` or `"` around
# it), not when run as they are: the sandbox is not what stops them.
QUOTING_ONLY = {"close-quote", "double-quote"}


def _leaks_unwrapped(world, command: str) -> list[str]:
    """How `command` gets a secret out with no agent-boundary at all: run as it is, or inside
    a naively quoted `bash -c` (what a broken rewrite would produce)."""
    cwd = world.root / "control"
    cwd.mkdir(exist_ok=True)
    ways = {"as is": command, "naive single quotes": f"/bin/bash -c '{command}'",
            "naive double quotes": f'/bin/bash -c "{command}"'}
    leaked = []
    for way, text in ways.items():
        r = subprocess.run(["/bin/bash", "-c", text], cwd=str(cwd), env=world.env(), input="",
                           capture_output=True, text=True, timeout=30)
        if SSH_SECRET in r.stdout + r.stderr or AWS_CONFIG_SECRET in r.stdout + r.stderr:
            leaked.append(way)
    return leaked


@pytest.mark.parametrize("kind", sorted(INJECTIONS))
def test_control_each_injection_leaks_without_the_boundary(world, kind):
    # A case that cannot leak even without agent-boundary proves nothing about it.
    leaked = _leaks_unwrapped(world, INJECTIONS[kind])
    assert leaked, f"{kind}: leaks no secret even unwrapped; make it a real attack"
    assert ("as is" in leaked) == (kind not in QUOTING_ONLY), (kind, leaked)


@pytest.mark.parametrize("kind", [
    pytest.param(k, marks=() if k in QUOTING_ONLY else pytest.mark.protects("landlock"))
    for k in sorted(INJECTIONS)])
def test_injection_stays_inside(world, claude, sid, kind):
    command = INJECTIONS[kind]
    r = _run(claude, sid, command)
    _no_secret(r)
    assert not (world.wt / "stolen").exists() or SSH_SECRET not in (world.wt / "stolen").read_text()


@pytest.mark.parametrize("kind", ["command-substitution", "backticks", "newline", "semicolon",
                                  "heredoc", "quoted-heredoc", "redirect", "eval"])
@pytest.mark.protects("landlock")
def test_injection_ran_and_was_denied(world, claude, sid, kind):
    # Not merely a syntax error: the cat really ran, inside, and the kernel said no.
    r = _run(claude, sid, INJECTIONS[kind])
    _no_secret(r)
    assert "Permission denied" in r.stderr, r.stderr


@pytest.mark.protects("landlock")
def test_toggle_off_from_inside_does_not_work(world, claude, sid):
    # Chained after another command, the toggle runs inside the boundary (denied state dir).
    # Claude sources CLAUDE_ENV_FILE first, so `agent-boundary` is found inside: the toggle
    # really runs and is refused, rather than failing as "command not found".
    d = claude.session_dir("wrapped")
    rewritten = _rewrite(claude, sid, "true; agent-boundary off")
    r = claude.run_rewritten(f". '{claude.env_file}' && {rewritten}")
    assert r.returncode != 0
    assert "not found" not in r.stderr, r.stderr
    assert world.ab("--session-dir", d, "status").stdout.startswith("profile default state on")
    r = _run(claude, sid, f"'{claude.ab_bin}' --session-dir '{d}' off")
    assert r.returncode != 0
    assert world.ab("--session-dir", d, "status").stdout.startswith("profile default state on")


def test_env_file_path_export_reaches_wrapped_commands(world, claude, sid):
    # Claude sources CLAUDE_ENV_FILE before a Bash command: agent-boundary is on PATH inside.
    rewritten = _rewrite(claude, sid, "command -v agent-boundary")
    r = claude.run_rewritten(f". '{claude.env_file}' && {rewritten}")
    assert_ok(r)
    assert os.path.realpath(r.stdout.strip()) == claude.ab_bin


@pytest.mark.parametrize("where", ["main-checkout", "home"])
def test_cwd_outside_the_boundary_never_runs_elsewhere(world, claude, sid, where):
    cwd = world.repo if where == "main-checkout" else world.home
    r = _run(claude, sid, "pwd", cwd=cwd)
    _no_secret(r)
    # Refused, not run: nono would silently start it in `/` instead.
    assert r.returncode != 0 and r.stdout == "", (
        f"asked for {cwd}, ran in {r.stdout.strip()!r} (exit {r.returncode})")
    assert "outside the boundary" in r.stderr, r.stderr
