"""Claude Code PreToolUse hook: `agent-boundary claude hook PreToolUse`, its decision tiers.

off -> no opinion (but the toggle still asks); Bash -> toggle escape (ask) or rewrite
through the pinned binary (allow + updatedInput); path and search tools -> the probe;
safe tools -> allow; anything else -> ask; every error -> deny (or exit 2)."""

import json
import shlex

import pytest

from claude_support import allow, ask, blocked, deny, session_id, silent, unwrap
from conftest import assert_ok


@pytest.fixture
def sid(claude):
    claude.start("tiers")
    return session_id("tiers")


@pytest.fixture
def sdir(claude, sid):
    return claude.session_dir("tiers")


# -- state off ---------------------------------------------------------------------------------

def test_off_means_no_opinion(world, claude, sid, sdir):
    assert_ok(world.ab("--session-dir", sdir, "off"))
    silent(claude.bash(sid, "cat ~/.aws/config"))
    silent(claude.read(sid, world.ssh_key))
    silent(claude.write(sid, world.home / "evil.txt"))
    silent(claude.pre(sid, "mcp__x__y", {}))
    silent(claude.pre(sid, "TodoWrite", {"todos": []}))


def test_off_toggle_still_asks_through_the_pinned_binary(world, claude, sid, sdir):
    assert_ok(world.ab("--session-dir", sdir, "off"))
    h = ask(claude.bash(sid, "agent-boundary on"))
    assert shlex.split(h.updated["command"]) == [claude.ab_bin, "--session-dir", str(sdir), "on"]
    # Running what the user approves turns it back on.
    r = claude.run_rewritten(h.updated["command"])
    assert_ok(r)
    assert world.ab("--session-dir", sdir, "status").stdout.startswith("profile default state on")
    unwrap(allow(claude.bash(sid, "ls")).updated["command"])


def test_state_is_per_session(world, claude, sid, sdir):
    claude.start("other")
    assert_ok(world.ab("--session-dir", sdir, "off"))
    silent(claude.bash(sid, "ls"))
    unwrap(allow(claude.bash(session_id("other"), "ls")).updated["command"])


def test_on_again_enforces(world, claude, sid, sdir):
    assert_ok(world.ab("--session-dir", sdir, "off"))
    assert_ok(world.ab("--session-dir", sdir, "on"))
    deny(claude.read(sid, world.ssh_key))
    allow(claude.bash(sid, "ls"))


# -- Bash: the rewrite ----------------------------------------------------------------------------

def test_bash_is_rewritten_through_the_pinned_binary(world, claude, sid, sdir):
    sub = world.wt / "sub"
    sub.mkdir()
    tool_input = {"command": "npm test -- --watch=false", "description": "Run tests",
                  "timeout": 120000, "run_in_background": False}
    h = allow(claude.pre(sid, "Bash", tool_input, cwd=sub))
    assert "sandboxed with nono" in h.reason
    u = h.updated
    assert set(u) == set(tool_input), u
    assert u["description"] == "Run tests"
    assert u["timeout"] == 120000
    assert u["run_in_background"] is False
    w = unwrap(u["command"])
    assert w == {"bin": claude.ab_bin, "session_dir": str(sdir), "cwd": str(sub),
                 "inner": "npm test -- --watch=false"}
    assert w["bin"] == json.loads((sdir / "boundary.json").read_text())["agent_boundary"]
    assert u["command"].startswith(shlex.quote(claude.ab_bin) + " exec --session-dir ")


def test_bash_rewrite_with_awkward_cwd_is_idempotent(world, claude, sid, sdir):
    odd = world.wt / "it's a \"dir\" $(x) `y`"
    odd.mkdir()
    first = allow(claude.bash(sid, "pwd", cwd=odd))
    assert unwrap(first.updated["command"])["cwd"] == str(odd)
    second = allow(claude.pre(sid, "Bash", first.updated, cwd=odd))
    assert second.updated is None, second
    r = claude.run_rewritten(first.updated["command"])
    assert_ok(r)
    assert r.stdout == f"{odd}\n"


def test_bash_unknown_input_fields_are_kept(world, claude, sid):
    tool_input = {"command": "ls", "dangerouslyDisableSandbox": False, "future": {"a": [1, 2]}}
    u = allow(claude.pre(sid, "Bash", tool_input)).updated
    assert u["dangerouslyDisableSandbox"] is False
    assert u["future"] == {"a": [1, 2]}


def test_bash_rewrite_is_not_applied_twice(world, claude, sid, sdir):
    first = allow(claude.bash(sid, "echo hi", description="d", timeout=5000))
    second = allow(claude.pre(sid, "Bash", first.updated))
    assert second.updated is None, second
    assert "already sandboxed" in second.reason
    # A lookalike for another session is wrapped again.
    claude.start("other")
    other = allow(claude.bash(session_id("other"), first.updated["command"]))
    w = unwrap(other.updated["command"])
    assert w["session_dir"] == str(claude.session_dir("other"))
    assert w["inner"] == first.updated["command"]


@pytest.mark.parametrize("command", [
    "echo it's",
    "printf '%s\\n' \"$HOME\" `id` $(whoami) && true || false; exit 0",
    "cat <<'EOF'\nline '\\'' two\nEOF",
    "echo \u00e9\u00e8 \U0001f600",
    "   leading and trailing spaces   ",
])
def test_bash_inner_command_is_kept_verbatim(world, claude, sid, command):
    w = unwrap(allow(claude.bash(sid, command)).updated["command"])
    assert w["inner"] == command


def test_monitor_with_a_command_is_wrapped(world, claude, sid):
    h = allow(claude.pre(sid, "Monitor", {"command": "tail -f log", "description": "d",
                                          "timeout_ms": 1000, "persistent": False}))
    assert unwrap(h.updated["command"])["inner"] == "tail -f log"
    assert h.updated["timeout_ms"] == 1000


def test_empty_command_is_denied(world, claude, sid):
    for command in ("", "   ", "\n\t"):
        assert "empty command" in deny(claude.bash(sid, command)).reason


# -- Bash: the toggle escape ------------------------------------------------------------------

TOGGLES = [
    ("agent-boundary", []),
    ("agent-boundary off", ["off"]),
    ("agent-boundary on", ["on"]),
    ("agent-boundary reload", ["reload"]),
    ("agent-boundary list", ["list"]),
    ("agent-boundary use self-edit", ["use", "self-edit"]),
    ("agent-boundary use default", ["use", "default"]),
    ("  agent-boundary off  ", ["off"]),
    ("agent-boundary\toff", ["off"]),
    ("agent-boundary use   self-edit2", ["use", "self-edit2"]),
]


@pytest.mark.parametrize("command,words", TOGGLES)
def test_toggle_asks_with_the_pinned_binary(world, claude, sid, sdir, command, words):
    h = ask(claude.bash(sid, command, description="toggle"))
    assert "sandbox mode change for this session" in h.reason
    cmd = h.updated["command"]
    assert shlex.split(cmd) == [claude.ab_bin, "--session-dir", str(sdir), *words]
    assert cmd.startswith(shlex.quote(claude.ab_bin) + " --session-dir " + shlex.quote(str(sdir)))
    assert h.updated["description"] == "toggle"


def test_toggle_off_runs_and_turns_the_boundary_off(world, claude, sid, sdir):
    h = ask(claude.bash(sid, "agent-boundary off"))
    r = claude.run_rewritten(h.updated["command"])
    assert_ok(r)
    assert "state off" in r.stdout
    silent(claude.bash(sid, "ls"))


LOOKALIKES = [
    "agent-boundary off; cat ~/.aws/config",
    "X=1 agent-boundary off",
    "agent-boundary use ../../etc/passwd",
    "agent-boundary use $(whoami)",
    "agent-boundary use default now",
    "agent-boundary off\ncat ~/.aws/config",
    "agent-boundary use `whoami`",
    "agent-boundary off && cat ~/.aws/config",
    "agent-boundary off | sh",
    "agent-boundary 'off'",
    "agent-boundary OFF",
    "/usr/local/bin/agent-boundary off",
    "agent-boundary off # comment",
    "agent-boundary use default\necho done",
    "agent-boundaryoff",
    "agent-boundary off.",
    "agent-boundary -v off",
    "agent-boundary use Default",
    "agent-boundary use 2x",
    "agent-boundary\u00a0off",
    "agent-boundary use self_edit",
    "sudo agent-boundary off",
    "agent-boundary off > /dev/null",
    "(agent-boundary off)",
]


@pytest.mark.parametrize("command", LOOKALIKES)
def test_toggle_lookalikes_are_wrapped(world, claude, sid, sdir, command):
    h = allow(claude.bash(sid, command))
    w = unwrap(h.updated["command"])
    assert w["inner"] == command
    assert w["session_dir"] == str(sdir)


def test_toggle_with_invalid_session_is_denied(world, claude):
    deny(claude.bash("../invalid", "agent-boundary off"))


# -- sessions that cannot be used --------------------------------------------------------------

@pytest.mark.parametrize("bad", ["../invalid", "short", "x" * 65, "a/b/c/d/e", "", None])
@pytest.mark.parametrize("tool", ["Bash", "Read", "Write"])
def test_invalid_session_id_is_denied(world, claude, bad, tool):
    claude.start("exists")
    tool_input = {"command": "ls"} if tool == "Bash" else {"file_path": str(world.wt / "README.md")}
    payload = claude.payload(bad, tool, tool_input)
    if bad is None:
        del payload["session_id"]
    h = deny(claude.raw(json.dumps(payload)))
    assert "invalid session id" in h.reason


@pytest.mark.parametrize("tool", ["Bash", "Read", "Edit", "Glob"])
def test_unknown_session_is_denied_with_advice(world, claude, tool):
    tool_input = {"command": "ls"} if tool == "Bash" else (
        {"path": str(world.wt), "pattern": "*"} if tool == "Glob" else
        {"file_path": str(world.wt / "README.md"), "old_string": "a", "new_string": "b"})
    h = deny(claude.pre(session_id("nosuch"), tool, tool_input))
    assert "agent-boundary reload" in h.reason
    assert str(claude.session_dir("nosuch")) in h.reason


CORRUPT = {
    "banana": json.dumps({"state": "banana"}),
    "banana-full": None,  # the real file with state "banana"
    "invalid-json": "{not json",
    "empty": "",
    "off-but-incomplete": json.dumps({"state": "off "}),
    "array": "[]",
}


@pytest.mark.parametrize("kind", sorted(CORRUPT))
def test_corrupt_boundary_json_still_enforces(world, claude, sid, sdir, kind):
    f = sdir / "boundary.json"
    text = CORRUPT[kind]
    if text is None:
        text = json.dumps({**json.loads(f.read_text()), "state": "banana"})
    f.write_text(text)
    for h in (claude.bash(sid, f"cat {world.ssh_key}"), claude.read(sid, world.ssh_key),
              claude.read(sid, world.wt / "README.md"),
              claude.write(sid, world.home / "evil.txt")):
        assert h.rc == 0, h
        assert h.stdout.strip(), f"a corrupt boundary.json disabled the hook: {h!r}"
        if h.decision == "allow":
            assert h.payload and json.loads(h.payload)["tool_name"] == "Bash", h
            unwrap(h.updated["command"])
        else:
            assert h.decision == "deny", h
    assert not (world.home / "evil.txt").exists()


def test_corrupt_boundary_json_saying_off_still_enforces(world, claude, sid, sdir):
    (sdir / "boundary.json").write_text(json.dumps({"state": "off"}))
    r = world.ab("--session-dir", sdir, "status")
    assert r.returncode == 1 and "corrupt boundary.json" in r.stderr  # the CLI's view
    deny(claude.read(sid, world.ssh_key))


def test_missing_policy_json_is_denied(world, claude, sid, sdir):
    (sdir / "policy.json").unlink()
    assert "agent-boundary reload" in deny(claude.bash(sid, "ls")).reason
    assert "agent-boundary reload" in deny(claude.read(sid, world.wt / "README.md")).reason


# -- malformed payloads ----------------------------------------------------------------------------

def _malformed_payloads(claude, sid):
    good = claude.payload(sid, "Bash", {"command": "cat ~/.ssh/id_rsa"})
    no_tool = dict(good)
    del no_tool["tool_name"]
    return {
        "not-json": "this is not json",
        "truncated": json.dumps(good)[:-5],
        "array": json.dumps([good]),
        "string": json.dumps("Bash"),
        "null": "null",
        "empty": "",
        "missing-tool-name": json.dumps(no_tool),
        "empty-tool-name": json.dumps({**good, "tool_name": ""}),
        "tool-name-number": json.dumps({**good, "tool_name": 7}),
        "command-number": json.dumps({**good, "tool_input": {"command": 42}}),
        "command-list": json.dumps({**good, "tool_input": {"command": ["cat", "x"]}}),
        "command-missing": json.dumps({**good, "tool_input": {"description": "x"}}),
        "tool-input-string": json.dumps({**good, "tool_input": "cat ~/.ssh/id_rsa"}),
        "read-path-number": json.dumps({**good, "tool_name": "Read",
                                        "tool_input": {"file_path": 1}}),
        "read-no-path": json.dumps({**good, "tool_name": "Read", "tool_input": {}}),
        "write-no-path": json.dumps({**good, "tool_name": "Write", "tool_input": None}),
        "nul-in-command": json.dumps({**good, "tool_input": {"command": "ls\u0000; cat x"}}),
        "nul-in-path": json.dumps({**good, "tool_name": "Read",
                                   "tool_input": {"file_path": f"{claude.world.wt}/a\u0000b"}}),
        "relative-cwd": json.dumps({**good, "cwd": "relative"}),
        "cwd-number": json.dumps({**good, "cwd": 3}),
        "deep-nesting": '{"a":' * 100000 + "1" + "}" * 100000,
        "bad-utf8-command": json.dumps(good).encode().replace(b"cat ~", b"cat \xff~"),
        "bad-utf8-path": json.dumps({**good, "tool_name": "Read", "tool_input": {
            "file_path": f"{claude.world.wt}/PLACEHOLDER"}}).encode().replace(
                b"PLACEHOLDER", b"\xc3\x28"),
        "bad-utf8-cwd": json.dumps({**good, "cwd": "/PLACEHOLDER"}).encode().replace(
            b"PLACEHOLDER", b"\xed\xa0\x80"),
        "5-MiB": json.dumps({**good, "tool_input": {"command": "x" * (5 << 20)}}),
        "9-MiB": json.dumps({**good, "tool_input": {"command": "x" * (9 << 20)}}),
    }


MALFORMED = ["not-json", "truncated", "array", "string", "null", "empty", "missing-tool-name",
             "empty-tool-name", "tool-name-number", "command-number", "command-list",
             "command-missing", "tool-input-string", "read-path-number", "read-no-path",
             "write-no-path", "nul-in-command", "nul-in-path", "relative-cwd", "cwd-number",
             "deep-nesting", "bad-utf8-command", "bad-utf8-path", "bad-utf8-cwd", "5-MiB",
             "9-MiB"]


@pytest.mark.parametrize("kind", MALFORMED)
def test_malformed_payload_fails_closed(world, claude, sid, kind):
    text = _malformed_payloads(claude, sid)[kind]
    h = blocked(claude.raw(text))
    assert len(h.stdout) < 20000


def test_unknown_event_fails_closed(world, claude, sid):
    r = world.ab("claude", "hook", "SubagentStop", env=claude.env(),
                 input=json.dumps(claude.payload(sid, "Bash", {"command": "ls"})))
    assert r.returncode == 2
    assert "unknown hook event" in r.stderr


# -- other tools ---------------------------------------------------------------------------------

@pytest.mark.parametrize("tool,tool_input", [
    ("mcp__x__y", {"anything": 1}),
    ("mcp__plugin_p_s__t", {}),
    ("PowerShell", {"command": "Get-Content ~/.ssh/id_rsa"}),
    ("LSP", {"operation": "hover", "filePath": "/etc/passwd"}),
    ("REPL", {"code": "open('/x')"}),
    ("Monitor", {"ws": {"url": "wss://example.invalid"}}),
    ("SomeFutureTool", None),
])
def test_unsandboxed_tools_ask(world, claude, sid, tool, tool_input):
    h = ask(claude.pre(sid, tool, tool_input))
    assert f"'{tool}' is not sandboxed by this hook" in h.reason
    assert h.updated is None


@pytest.mark.parametrize("tool,tool_input", [
    ("TodoWrite", {"todos": []}),
    ("WebFetch", {"url": "https://example.invalid", "prompt": "p"}),
    ("WebSearch", {"query": "q"}),
    ("Task", {"prompt": "p", "description": "d"}),
    ("Agent", {"prompt": "p"}),
    ("ExitPlanMode", {}),
])
def test_safe_tools_are_allowed(world, claude, sid, tool, tool_input):
    h = allow(claude.pre(sid, tool, tool_input))
    assert h.reason == "ok"
    assert h.updated is None


def test_safe_tools_need_no_session(world, claude):
    assert allow(claude.pre(session_id("nosuch"), "TodoWrite", {"todos": []})).reason == "ok"


# -- search tools: probed for read -------------------------------------------------------------

def test_glob_without_path_probes_the_cwd(world, claude, sid):
    h = allow(claude.pre(sid, "Glob", {"pattern": "**/*.md"}))
    assert str(world.wt) in h.reason
    assert h.updated is None
    h = deny(claude.pre(sid, "Glob", {"pattern": "*"}, cwd=world.home / ".ssh"))


@pytest.mark.parametrize("tool", ["Glob", "Grep"])
def test_search_tools_with_a_path(world, claude, sid, tool):
    allow(claude.pre(sid, tool, {"pattern": "x", "path": str(world.wt)}))
    allow(claude.pre(sid, tool, {"pattern": "x", "path": str(world.wt / "README.md")}))
    deny(claude.pre(sid, tool, {"pattern": "x", "path": str(world.home / ".ssh")}))
    deny(claude.pre(sid, tool, {"pattern": "x", "path": str(world.home)}))
    deny(claude.pre(sid, tool, {"pattern": "x", "path": str(world.profiles)}))


def test_grep_without_path_in_the_workdir(world, claude, sid):
    allow(claude.pre(sid, "Grep", {"pattern": "x", "output_mode": "content"}))


def test_notebook_edit_is_probed(world, claude, sid):
    allow(claude.pre(sid, "NotebookEdit", {"notebook_path": str(world.wt / "n.ipynb"),
                                           "new_source": "x"}))
    deny(claude.pre(sid, "NotebookEdit", {"notebook_path": str(world.home / "n.ipynb"),
                                          "new_source": "x"}))
    assert not (world.wt / "n.ipynb").exists()


def test_multiedit_is_probed(world, claude, sid):
    allow(claude.pre(sid, "MultiEdit", {"file_path": str(world.wt / "README.md"), "edits": []}))
    deny(claude.pre(sid, "MultiEdit", {"file_path": str(world.aws_config), "edits": []}))


def test_reasons_fit_claudes_limit(world, claude, sid):
    long_name = "d" * 200
    path = world.home / "/".join([long_name] * 40)
    h = deny(claude.read(sid, path))
    assert len(h.reason) <= 10000


def test_hook_ends_itself_with_exit_2_after_20_seconds(world, claude):
    """README: the hook process ends itself with exit 2 (block) after 20 s, inside Claude's
    30 s hook timeout. A payload that never ends (stdin left open) holds it until then. The
    deadline is a constant of the installed binary: nothing outside can shorten or lengthen
    it, so this test spends the 20 s once."""
    import subprocess as sp
    import time as t
    p = sp.Popen([world.ab_bin, "claude", "hook", "PreToolUse"], cwd=str(world.wt),
                 env=claude.full_env(), stdin=sp.PIPE, stdout=sp.PIPE, stderr=sp.PIPE, text=True)
    t0 = t.monotonic()
    try:
        p.stdin.write('{"session_id": "pytest-deadline-0001", "tool_name": "Bash", ')
        p.stdin.flush()
        p.wait(timeout=28)  # stdin stays open: the payload never ends
        out, err = p.stdout.read(), p.stderr.read()
    finally:
        p.stdin.close()
        if p.poll() is None:
            p.kill()
            p.wait()
    elapsed = t.monotonic() - t0
    assert p.returncode == 2, (p.returncode, out, err)
    assert 19.0 <= elapsed < 25.0, elapsed
    assert out == ""
    assert "deadline exceeded, failing closed: tool call blocked" in err
