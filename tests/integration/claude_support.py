"""Helpers for the Claude Code hook tests (test_claude_hooks_*.py).

The `claude` fixture (conftest.py) wraps a `World` with what Claude Code would give the
hooks: a plugin root inside the world (a copy of the repository's claude-plugin/), a
CLAUDE_ENV_FILE, and the JSON payloads of SessionStart and PreToolUse on stdin.

Sessions are made the way Claude makes them: through the SessionStart hook with the id
`pytest-<name>-0001`, so they live at `<state>/sessions/pytest-<name>-0001`.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from conftest import assert_no_crash

GREEN = "\x1b[32m"
RED = "\x1b[31m"
YELLOW = "\x1b[33m"
RESET = "\x1b[0m"


def session_id(name: str) -> str:
    return f"pytest-{name}-0001"


class Hook:
    """One PreToolUse hook run: exit code, raw output, the parsed decision."""

    def __init__(self, proc: subprocess.CompletedProcess, elapsed: float, payload: str):
        self.proc = proc
        self.elapsed = elapsed
        self.payload = payload
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.json = None
        if self.stdout.strip():
            self.json = json.loads(self.stdout)

    def __repr__(self) -> str:
        return (f"<Hook rc={self.rc} elapsed={self.elapsed:.2f}s\n--- stdout\n{self.stdout}\n"
                f"--- stderr\n{self.stderr}\n--- payload (first 500)\n{self.payload[:500]}>")

    @property
    def output(self) -> dict:
        assert self.json is not None, f"no JSON on stdout: {self!r}"
        out = self.json.get("hookSpecificOutput")
        assert isinstance(out, dict), f"no hookSpecificOutput: {self!r}"
        assert out.get("hookEventName") == "PreToolUse", self
        return out

    @property
    def decision(self) -> str:
        return self.output["permissionDecision"]

    @property
    def reason(self) -> str:
        return self.output["permissionDecisionReason"]

    @property
    def updated(self) -> dict | None:
        return self.output.get("updatedInput")


def expect(h: Hook, decision: str) -> Hook:
    """A clean exit 0 with `decision` as JSON on stdout."""
    assert_no_crash(h.proc)
    assert h.rc == 0, h
    assert h.decision == decision, h
    assert isinstance(h.reason, str) and h.reason, h
    return h


def allow(h: Hook) -> Hook:
    return expect(h, "allow")


def deny(h: Hook) -> Hook:
    return expect(h, "deny")


def ask(h: Hook) -> Hook:
    return expect(h, "ask")


def silent(h: Hook) -> Hook:
    """No opinion: exit 0 and nothing at all on stdout."""
    assert_no_crash(h.proc)
    assert h.rc == 0, h
    assert h.stdout == "", h
    return h


def blocked(h: Hook) -> Hook:
    """Fail closed: a deny JSON (exit 0) or exit 2; never a crash, never silence."""
    assert_no_crash(h.proc)
    assert h.rc >= 0, f"killed by signal: {h!r}"
    if h.rc == 2:
        assert h.stderr.strip(), f"exit 2 without a reason on stderr: {h!r}"
        return h
    assert h.rc == 0, f"neither a deny (exit 0) nor a block (exit 2): {h!r}"
    assert h.stdout.strip(), f"exit 0 with empty stdout lets the tool run: {h!r}"
    assert h.decision == "deny", h
    return h


def unwrap(command: str) -> dict:
    """The parts of a command rewritten by the hook:
    `<bin> exec --session-dir <dir> --cwd <cwd> -- /bin/bash -c <inner>`."""
    words = shlex.split(command)
    assert len(words) == 10, words
    assert os.path.isabs(words[0]), words
    assert words[1:3] == ["exec", "--session-dir"], words
    assert words[4] == "--cwd" and words[6:9] == ["--", "/bin/bash", "-c"], words
    return {"bin": words[0], "session_dir": words[3], "cwd": words[5], "inner": words[9]}


class Claude:
    def __init__(self, world, source_dir: Path):
        self.world = world
        self.source_plugin = source_dir / "claude-plugin"
        self.plugin_root = world.root / "plugin"
        shutil.copytree(self.source_plugin, self.plugin_root, symlinks=True)
        self.plugin_root = Path(os.path.realpath(self.plugin_root))
        self.env_file = world.root / "claude-env"
        self.ab_bin = os.path.realpath(world.ab_bin)

    # -- environment -----------------------------------------------------------------------

    def env(self, extra: dict | None = None) -> dict:
        env = {"CLAUDE_PLUGIN_ROOT": str(self.plugin_root),
               "CLAUDE_ENV_FILE": str(self.env_file)}
        env.update(extra or {})
        return env

    def full_env(self, extra: dict | None = None, drop: tuple = ()) -> dict:
        """The complete environment a hook runs with (for processes started directly)."""
        return self.world.env(self.env(extra), drop)

    def session_dir(self, name: str) -> Path:
        return self.world.sessions / session_id(name)

    # -- SessionStart ----------------------------------------------------------------------

    def session_start(self, sid: str | None, cwd=None, source: str = "startup", env=None,
                      drop=(), payload: dict | None = None, raw: str | None = None, timeout=120):
        if raw is None:
            if payload is None:
                payload = {"session_id": sid, "cwd": str(cwd or self.world.wt),
                           "hook_event_name": "SessionStart", "source": source}
                if sid is None:
                    del payload["session_id"]
            raw = json.dumps(payload)
        return self.world.ab("claude", "hook", "SessionStart", input=raw, env=self.env(env),
                             drop=drop, timeout=timeout)

    def session_end(self, sid: str, reason: str = "exit", env=None, timeout=30):
        payload = {"session_id": sid, "cwd": str(self.world.wt), "hook_event_name": "SessionEnd",
                   "reason": reason}
        return self.world.ab("claude", "hook", "SessionEnd", input=json.dumps(payload),
                             env=self.env(env), timeout=timeout)

    def start(self, name: str = "s1", cwd=None, env=None, source: str = "startup") -> Path:
        """A session made by the SessionStart hook; returns its directory."""
        r = self.session_start(session_id(name), cwd=cwd, env=env, source=source)
        assert_no_crash(r)
        assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
        # A session whose self-test found no enforcement is no session to test against.
        assert "NOT sandboxed" not in r.stderr and "self-test" not in r.stderr, r.stderr
        d = self.session_dir(name)
        assert (d / "boundary.json").is_file(), f"no session made:\n{r.stderr}"
        assert (d / "policy.json").is_file(), r.stderr
        return d

    # -- PreToolUse ------------------------------------------------------------------------

    def payload(self, sid: str, tool: str, tool_input, cwd=None) -> dict:
        return {"session_id": sid, "transcript_path": "/nonexistent/transcript.jsonl",
                "cwd": str(cwd or self.world.wt), "permission_mode": "default",
                "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input,
                "tool_use_id": "toolu_01TEST"}

    def raw(self, text: str | bytes, env=None, timeout=60, event="PreToolUse") -> Hook:
        """Run the `event` hook with `text` (str, or bytes sent as they are) on stdin."""
        data = text if isinstance(text, bytes) else text.encode()
        t0 = time.monotonic()
        r = subprocess.run([self.world.ab_bin, "claude", "hook", event],
                           cwd=str(self.world.wt), env=self.full_env(env), input=data,
                           capture_output=True, timeout=timeout)
        elapsed = time.monotonic() - t0
        r = subprocess.CompletedProcess(r.args, r.returncode,
                                        r.stdout.decode("utf-8", "replace"),
                                        r.stderr.decode("utf-8", "replace"))
        return Hook(r, elapsed, data.decode("utf-8", "replace"))

    def pre(self, sid: str, tool: str, tool_input, cwd=None, env=None, timeout=60) -> Hook:
        return self.raw(json.dumps(self.payload(sid, tool, tool_input, cwd)), env=env,
                        timeout=timeout)

    def bash(self, sid: str, command: str, cwd=None, **extra) -> Hook:
        return self.pre(sid, "Bash", {"command": command, **extra}, cwd=cwd)

    def read(self, sid: str, path, cwd=None) -> Hook:
        return self.pre(sid, "Read", {"file_path": str(path)}, cwd=cwd)

    def write(self, sid: str, path, cwd=None) -> Hook:
        return self.pre(sid, "Write", {"file_path": str(path), "content": "PROBE-CONTENT\n"},
                        cwd=cwd)

    def edit(self, sid: str, path, cwd=None) -> Hook:
        return self.pre(sid, "Edit", {"file_path": str(path), "old_string": "a",
                                      "new_string": "b", "replace_all": False}, cwd=cwd)

    def post(self, sid: str, tool: str, tool_input, cwd=None, event="PostToolUse") -> Hook:
        """The tool's end (PostToolUse, or PostToolUseFailure): what Claude sends after an
        allowed tool ran. It releases the session's processes that the PreToolUse held."""
        payload = {**self.payload(sid, tool, tool_input, cwd), "hook_event_name": event,
                   "tool_response": {}}
        return self.raw(json.dumps(payload), event=event)

    # -- running what the hook returned ----------------------------------------------------

    def run_rewritten(self, command: str, cwd=None, timeout=120) -> subprocess.CompletedProcess:
        """Run a rewritten Bash command the way Claude Code does: `bash -c <command>`, with
        the hook's environment."""
        return subprocess.run(["/bin/bash", "-c", command], cwd=str(cwd or self.world.wt),
                              env=self.full_env(), input="", capture_output=True, text=True,
                              timeout=timeout)

    # -- status line -----------------------------------------------------------------------

    def statusline(self, arg: str, env=None, drop=(), timeout=30) -> subprocess.CompletedProcess:
        return self.world.ab("claude", "statusline", arg, env=self.env(env), drop=drop,
                             timeout=timeout)

    def statusline_payload(self, name: str, cwd=None) -> str:
        cwd = str(cwd or self.world.wt)
        return json.dumps({"session_id": session_id(name), "cwd": cwd,
                           "transcript_path": "/nonexistent/transcript.jsonl",
                           "model": {"id": "claude-test", "display_name": "Test"},
                           "workspace": {"current_dir": cwd, "project_dir": cwd},
                           "version": "2.1.0"})

    def enable_plugin(self, directory: Path, value=True, name="settings.json",
                      key="agent-boundary@agent-boundary") -> Path:
        settings = directory / ".claude" / name
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"enabledPlugins": {key: value}}))
        return settings
