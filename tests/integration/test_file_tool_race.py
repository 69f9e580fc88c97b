"""Claude Code's in-process file tools cannot be raced out of the boundary (issue 13).

Claude runs Read, Write, Edit, MultiEdit and NotebookEdit in its own process, outside the
sandbox: the PreToolUse gate probes the path inside the boundary, allows it (rewritten to
the canonical path) and Claude then opens that path itself. The attacker is a background
process started by an earlier Bash call (`nohup ... &`, exactly what the gate wraps), living
inside the boundary: tests/integration/helpers/race_swapper.c swaps a component of the path
for a symlink to a secret (read) or to ~/.bashrc (write) right after the probe (inotify) or
blindly in a tight loop.

One attempt is what Claude does, without Claude: the PreToolUse hook with the tool's
payload, then, if it allowed, the tool's own file operation from this (host) process on the
path the hook handed back, then the PostToolUse hook. A hit is a read that returned the
secret, or a write that landed in ~/.bashrc. Without the freeze (today's main) the
attacker wins; with it every attempt must be a miss.

AB_RACE_ATTEMPTS sets the attempts per case (default: DEFAULT_ATTEMPTS, per backend).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from claude_support import allow, session_id
from conftest import HERE, SSH_SECRET, need, need_tool

# Attempts per case. Every probe on srt starts Node and bubblewrap (~0.5 s) and on
# devcontainer runs `podman exec` twice, so the default per backend keeps the whole matrix
# inside CI's time; AB_RACE_ATTEMPTS=1000 runs the full count everywhere.
DEFAULT_ATTEMPTS = {"nono": 200, "srt": 10, "devcontainer": 20}


def attempts_for(backend: str) -> int:
    return int(os.environ.get("AB_RACE_ATTEMPTS", DEFAULT_ATTEMPTS[backend]))
BACKENDS = ["nono", "srt", "devcontainer"]
# The mutation stage's file-tool-race mutant (nothing held) runs the nono cases and srt's
# inotify cases: with their attempts the attacker wins every one of them against it (two
# runs). Not marked (not shown able to fail; they run in every integration run): the blind
# swap on srt and devcontainer, and devcontainer's inotify cases: with their few default
# attempts the attacker does not win every case against the mutant (two runs lost 2 and 3
# different cases of the ten).
MATRIX = [pytest.param(backend, mode, id=f"{backend}-{mode}",
                       marks=[pytest.mark.protects("file-tool-race")]
                       if backend == "nono" or (backend == "srt" and mode == "inotify") else [])
          for backend in BACKENDS for mode in ("inotify", "blind")]


DC_IMAGE = "localhost/agent-boundary-base:bookworm"
BASHRC = "# the user's own shell startup file\n"
BENIGN = "BENIGN-WORKTREE-FILE\n"
MARK = "WRITTEN-BY-THE-TOOL"

# tool -> (path field, what the tool does to the file)
TOOLS = {
    "Read": ("file_path", "read"),
    "Write": ("file_path", "write"),
    "Edit": ("file_path", "readwrite"),
    "MultiEdit": ("file_path", "readwrite"),
    "NotebookEdit": ("notebook_path", "readwrite"),
}


def tool_input(tool: str, path: str) -> dict:
    field = TOOLS[tool][0]
    extra = {
        "Read": {},
        "Write": {"content": MARK},
        "Edit": {"old_string": "BENIGN", "new_string": MARK},
        "MultiEdit": {"edits": [{"old_string": "BENIGN", "new_string": MARK}]},
        "NotebookEdit": {"new_source": MARK, "cell_id": "c1", "edit_mode": "replace"},
    }[tool]
    return {field: path, **extra}


@pytest.fixture(scope="module")
def swapper_bin(tmp_path_factory) -> Path:
    cc = need_tool("cc")
    out = Path(os.environ.get("AB_WORLD_BASE", "/var/tmp/agent-boundary-it")) / "race_swapper"
    out.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    r = subprocess.run([cc, "-O2", "-static", "-Wall", "-Wextra", "-Werror", "-o", str(out),
                        str(HERE / "helpers" / "race_swapper.c")],
                       capture_output=True, text=True, timeout=120,
                       env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, f"cannot compile helpers/race_swapper.c:\n{r.stderr}"
    return out


def need_backend(backend: str) -> None:
    if backend == "srt":
        need_tool("srt")
    elif backend == "devcontainer":
        podman = need_tool("podman")
        r = subprocess.run([podman, "--runtime", "runc", "--cgroup-manager", "cgroupfs", "image",
                            "exists", DC_IMAGE], capture_output=True, timeout=60)
        need(r.returncode == 0, f"the image {DC_IMAGE} is missing: run scripts/build-base-image.sh")


class Race:
    """One session of `backend` with the attacker running inside it."""

    def __init__(self, claude, backend: str, swapper: Path, name: str):
        self.claude = claude
        self.world = claude.world
        self.sid = session_id(name)
        self.env = claude.full_env({"AGENT_BOUNDARY_BACKEND": backend})
        self.session = claude.start(name, env={"AGENT_BOUNDARY_BACKEND": backend})
        self.dir = self.world.wt / "race"
        self.dir.mkdir()
        # The attacker's binary lives in the checkout, where every backend can run it.
        self.swapper = self.world.wt / "race-swapper"
        shutil.copy(swapper, self.swapper)
        os.chmod(self.swapper, 0o755)
        self.bashrc = self.world.home / ".bashrc"
        self.bashrc.write_text(BASHRC)
        self.stop = self.dir / ".race-stop"
        self.backend = backend
        self.running: subprocess.Popen | None = None  # the attacker's command, when it runs

    def hook(self, event: str, payload: dict) -> subprocess.CompletedProcess:
        return subprocess.run([self.world.ab_bin, "claude", "hook", event],
                              input=json.dumps(payload).encode(), cwd=str(self.world.wt),
                              env=self.env, capture_output=True, timeout=60)

    def payload(self, event: str, tool: str, tool_in: dict) -> dict:
        return {"session_id": self.sid, "transcript_path": "/nonexistent/t.jsonl",
                "cwd": str(self.world.wt), "permission_mode": "default",
                "hook_event_name": event, "tool_name": tool, "tool_input": tool_in,
                "tool_use_id": "toolu_race"}

    def start_attacker(self, mode: str, kind: str, name: str, target: Path) -> None:
        swap = f"{self.swapper} {mode} {kind} {self.dir} {name} {target} {self.stop}"
        if self.backend == "srt":
            # srt's bubblewrap ends every process of the command with it (its own PID
            # namespace), so nothing outlives a command there: the attacker is a command that
            # keeps running, as Claude's background Bash (`run_in_background`) runs it.
            h = allow(self.claude.bash(self.sid, f"exec {swap} >/dev/null 2>&1",
                                       run_in_background=True))
            self.running = subprocess.Popen(["/bin/bash", "-c", h.updated["command"]],
                                            cwd=str(self.world.wt), env=self.env,
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.PIPE)
        else:
            # Elsewhere it outlives the command that started it (`nohup ... &`).
            h = allow(self.claude.bash(self.sid, f"nohup {swap} >/dev/null 2>&1 &"))
            r = subprocess.run(["/bin/bash", "-c", h.updated["command"]], cwd=str(self.world.wt),
                               env=self.env, input="", capture_output=True, text=True,
                               timeout=120)
            assert r.returncode == 0, r.stderr
        ready = self.dir / ".race-ready"
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert time.monotonic() < deadline, "the attacker did not start"
            assert self.running is None or self.running.poll() is None, \
                self.running.stderr.read().decode("utf-8", "replace")
            time.sleep(0.05)

    def stop_attacker(self) -> None:
        self.stop.write_text("")
        self.hook("Stop", {"session_id": self.sid, "cwd": str(self.world.wt),
                           "hook_event_name": "Stop", "stop_hook_active": False})
        ready = self.dir / ".race-ready"
        deadline = time.monotonic() + 20
        while ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.running is not None:
            try:
                self.running.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.running.kill()
                self.running.wait()
            self.running.stderr.close()
            self.running = None

    def end(self) -> None:
        self.claude.session_end(self.sid)
        # Whatever the test left running inside: killing a reaper ends its PID namespace.
        tracked = self.session / "tracked"
        for entry in tracked.iterdir() if tracked.is_dir() else []:
            if not entry.name.isdigit():
                continue
            with open(entry) as f:
                try:  # unlocked: that reaper is gone and its pid may be someone else's
                    fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    continue
                except OSError:
                    pass
            try:
                os.kill(int(entry.name), 9)
            except OSError:
                pass


def tool_operation(op: str, path: str) -> str | None:
    """What Claude does with the path the gate handed back, on the host. Returns what a read
    returned (None when the open failed)."""
    data = None
    try:
        if op in ("read", "readwrite"):
            with open(path, encoding="utf-8", errors="replace") as f:
                data = f.read()
        if op in ("write", "readwrite"):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(MARK)
    except OSError:
        pass
    return data


def run_race(race: Race, tool: str, kind: str, mode: str, attempts: int) -> dict:
    op = TOOLS[tool][1]
    reads_secret = op == "read"
    if kind == "file":
        victim = race.dir / ("f.ipynb" if tool == "NotebookEdit" else "f")
        victim.write_text(BENIGN)
        target = race.world.ssh_key if reads_secret else race.bashrc
        asked = victim
    else:
        victim = race.dir / "sub"
        target = race.world.ssh_key.parent if reads_secret else race.world.home
        asked = victim / (race.world.ssh_key.name if reads_secret else ".bashrc")
    race.start_attacker(mode, kind, victim.name, target)
    allowed = hits = 0
    refused: dict[str, int] = {}  # why the others were not allowed, for the report
    try:
        for _ in range(attempts):
            if mode == "inotify":  # let the attacker undo its last swap first
                deadline = time.monotonic() + 1
                while time.monotonic() < deadline and (
                        victim.is_symlink() if kind == "file" else os.path.lexists(victim)):
                    time.sleep(0.001)
            tin = tool_input(tool, str(asked))
            r = race.hook("PreToolUse", race.payload("PreToolUse", tool, tin))
            out = json.loads(r.stdout or b"{}").get("hookSpecificOutput", {})
            if r.returncode != 0 or out.get("permissionDecision") != "allow":
                why = out.get("permissionDecisionReason") or r.stderr.decode("utf-8", "replace")
                refused[why[:120]] = refused.get(why[:120], 0) + 1
                continue
            allowed += 1
            path = out.get("updatedInput", {}).get(TOOLS[tool][0], str(asked))
            data = tool_operation(op, path)
            race.hook("PostToolUse", {**race.payload("PostToolUse", tool, tin),
                                      "tool_response": {}})
            if data is not None and SSH_SECRET in data:
                hits += 1
            if race.bashrc.read_text() != BASHRC:
                hits += 1
                race.bashrc.write_text(BASHRC)
            if hits:
                break  # one is enough to fail, and keeps a broken build's run short
            if kind == "dir" and victim.is_dir() and not victim.is_symlink():
                shutil.rmtree(victim, ignore_errors=True)
    finally:
        race.stop_attacker()
    return {"attempts": attempts, "allowed": allowed, "hits": hits, "refused": refused}


@pytest.mark.parametrize("kind", ["file", "dir"], ids=["existing", "new"])
@pytest.mark.parametrize("tool", list(TOOLS))
@pytest.mark.parametrize("backend,mode", MATRIX)
def test_in_process_tool_cannot_be_raced(claude, swapper_bin, backend, tool, kind, mode):
    need_backend(backend)
    race = Race(claude, backend, swapper_bin, "race")
    try:
        result = run_race(race, tool, kind, mode, attempts_for(backend))
    finally:
        race.end()
    print(f"{backend} {tool} {kind} {mode}: {result}")
    assert result["hits"] == 0, result
    # The attacker must not simply have made every call fail: most attempts ran the tool.
    assert result["allowed"] >= attempts_floor(mode, attempts_for(backend)), result


def attempts_floor(mode: str, attempts: int) -> int:
    # The blind loop is often stopped with its symlink in place (or mid-swap): the path then
    # resolves outside and the probe denies it, a miss, not an attempt that ran (about one
    # attempt in five runs the tool; against main one in ten to fifty does).
    return attempts // (10 if mode == "blind" else 2)


# -- the freeze itself: what a user sees -------------------------------------------------------

def proc_state(pid: int) -> str:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2]


def background_pid(race: Race, name: str) -> int:
    """Start a shell waiting on `sleep 300` in the background through the gate; its host pid."""
    marker = f"race-bg-{name}-{race.world.root.name}"
    h = allow(race.claude.bash(race.sid, f"nohup sh -c 'sleep 300; :' {marker} >/dev/null 2>&1 &"))
    r = subprocess.run(["/bin/bash", "-c", h.updated["command"]], cwd=str(race.world.wt),
                       env=race.env, input="", capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for p in Path("/proc").iterdir():
            if p.name.isdigit():
                try:
                    argv = (p / "cmdline").read_bytes().split(b"\0")
                    if argv[:4] == [b"sh", b"-c", b"sleep 300; :", marker.encode()]:
                        return int(p.name)
                except OSError:
                    pass
        time.sleep(0.05)
    raise AssertionError("the background process did not start")


@pytest.mark.protects("file-tool-race")
@pytest.mark.parametrize("backend", ["nono", "devcontainer"])  # on srt nothing outlives a command
def test_background_processes_stop_for_a_file_tool_and_resume_after(claude, swapper_bin, backend):
    need_backend(backend)
    race = Race(claude, backend, swapper_bin, "hold")
    try:
        pid = background_pid(race, "hold")
        deadline = time.monotonic() + 10  # it may still be running up to its `sleep`
        while proc_state(pid) == "R" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc_state(pid) == "S"
        f = race.dir / "f"
        f.write_text(BENIGN)
        tin = tool_input("Read", str(f))
        r = race.hook("PreToolUse", race.payload("PreToolUse", "Read", tin))
        assert json.loads(r.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
        assert proc_state(pid) == "T", "a sandboxed process ran while the tool was in flight"
        # A second tool in flight (parallel Reads): the first one's end must not resume them.
        r = race.hook("PreToolUse", race.payload("PreToolUse", "Read", tin))
        assert json.loads(r.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
        assert race.hook("PostToolUse", race.payload("PostToolUse", "Read", tin)).returncode == 0
        assert proc_state(pid) == "T"
        assert race.hook("PostToolUseFailure",
                         race.payload("PostToolUseFailure", "Read", tin)).returncode == 0
        assert proc_state(pid) != "T", "still stopped"  # resumed: S, or R for a moment
        # A denied call resumes at once: nothing stays stopped for a tool that never runs.
        r = race.hook("PreToolUse", race.payload("PreToolUse", "Read",
                                                 tool_input("Read", str(race.world.ssh_key))))
        assert json.loads(r.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert proc_state(pid) != "T", "still stopped"  # resumed: S, or R for a moment
        # A tool whose end never came (Claude interrupted): the turn's end resumes everything.
        race.hook("PreToolUse", race.payload("PreToolUse", "Read", tin))
        assert proc_state(pid) == "T"
        assert race.hook("UserPromptSubmit", {"session_id": race.sid, "prompt": "go on",
                                              "hook_event_name": "UserPromptSubmit",
                                              "cwd": str(race.world.wt)}).returncode == 0
        assert proc_state(pid) != "T", "still stopped"  # resumed: S, or R for a moment
    finally:
        race.stop_attacker()
        race.end()


@pytest.mark.protects("file-tool-race")
def test_a_new_command_waits_while_a_file_tool_is_in_flight(claude, swapper_bin):
    race = Race(claude, "nono", swapper_bin, "wait")
    try:
        f = race.dir / "f"
        f.write_text(BENIGN)
        tin = tool_input("Read", str(f))
        race.hook("PreToolUse", race.payload("PreToolUse", "Read", tin))
        h = allow(race.claude.bash(race.sid, "echo ran > race/ran"))
        cmd = subprocess.Popen(["/bin/bash", "-c", h.updated["command"]], cwd=str(race.world.wt),
                               env=race.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
        time.sleep(1.5)
        assert not (race.dir / "ran").exists(), "a command started while a tool was in flight"
        race.hook("PostToolUse", race.payload("PostToolUse", "Read", tin))
        assert cmd.wait(timeout=60) == 0, cmd.stderr.read()
        assert (race.dir / "ran").read_text() == "ran\n"
    finally:
        race.stop_attacker()
        race.end()


def test_commands_keep_their_exit_codes_signals_and_proc(world, session):
    assert world.run_in(session, "sh", "-c", "exit 7").returncode == 7
    r = world.run_in(session, "sh", "-c", "kill -TERM $$")
    assert r.returncode in (143, -15), r
    # /proc/self is the command's own, and a background child outlives the command without
    # keeping it waiting.
    r = world.run_in(session, "sh", "-c", "readlink /proc/self >/dev/null && echo proc-ok; "
                                          "(sleep 2 >/dev/null 2>&1 &) ; echo done")
    assert r.returncode == 0 and "done" in r.stdout, r
