"""Drive the real Claude Code (pinned 2.1.328) against the scripted model server.

Import what a test module needs from here (fixtures included: importing a fixture into a
test module is how pytest sees it; a second conftest.py would shadow the one tests import
helpers from):

    from claude_e2e import claude_code, claude_bin_path, module_world   # fixtures
    from model_server import tool

    def test_x(claude_code):
        run = claude_code.run([tool("Bash", command="cat ~/.ssh/id_rsa"), "done"],
                              mode="bypassPermissions")
        assert SSH_SECRET not in run.result(0).text

API (small on purpose; other modules build on it):

- `claude_bin()` / fixture `claude_bin_path`: the pinned Claude Code installed by
  scripts/install.sh into `<prefix>/lib/agent-boundary-test/claude-code` (prefix
  /usr/local or ~/.local), or `$AB_CLAUDE_CODE` (an absolute path to the `claude` binary).
  Its `--version` must be CLAUDE_CODE_VERSION; a missing one skips (fails under CI=true).
- `make_marketplace(dest, source_dir)`: a marketplace copy of the repository (its
  `.claude-plugin/` and `claude-plugin/`), as `/plugin marketplace add <repo>` would see it.
- `ClaudeCode(world, bin, marketplace=None)`: Claude Code in a test world (conftest's
  `World`: fake HOME with secrets, repo, linked worktree `world.wt` as the project).
    * `env(extra=None, drop=())`: the clean environment every `claude` process gets: the
      world's (HOME, PATH, AGENT_BOUNDARY_PROFILES_DIR/STATE_DIR), AGENT_BOUNDARY_BIN =
      the staged binary, the offline switches, a fake API key.
    * `cli(*args, cwd=None, env=None)`: `claude <args>` (no model), e.g. `cli("plugin",
      "list")`; returns CompletedProcess.
    * `install_plugin(scope="user", enable=True, cwd=None)`: our plugin through Claude's
      own commands: `plugin marketplace add <marketplace>`, `plugin install
      agent-boundary@agent-boundary --scope S`, `plugin enable ... --scope S`.
    * `run(script, prompt=..., mode="default", tools=None, session_id=None, resume=None,
      env=None, drop=(), cwd=None, timeout=240, debug=False, args=())` -> `Run`: one
      `claude -p <prompt> --output-format stream-json --verbose --include-hook-events
      --permission-mode <mode> --session-id <uuid>` (or `--resume <uuid>`) in `cwd`
      (default the worktree) against a fresh ModelServer playing `script`. `tools` is
      passed as `--tools` (e.g. DEFAULT_TOOLS_WITH_SEARCH to get Glob and Grep).
      IS_SANDBOX=1 is set for bypassPermissions (Claude refuses that mode as root without it).
- `Run`: `rc`, `stdout`, `stderr`, `events` (parsed stream-json), `server` (the
  ModelServer, with every request recorded), `session_id`, `debug_file`,
  `result(step, k=0)` (the tool_result Claude sent the model), `final` (the `result`
  event), `hook_events(name=None)` (the `system/hook_*` events), `init` (the
  `system/init` event), `hook_timings()` (with `debug=True`: (hook, status, ms) from the
  debug file), `repr()` for assertion messages.
- Fixtures: `module_world` (one World per test module), `claude_code` (that world with
  our plugin installed and enabled at user scope through a marketplace copy),
  `claude_control` (a second world, same layout, no plugin: the control arm).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from conftest import WORLD_BASE, World, need, need_tool, prefix
from model_server import ModelServer

CLAUDE_CODE_VERSION = "2.1.328"
PLUGIN_ID = "agent-boundary@agent-boundary"
FAKE_API_KEY = "sk-ant-e2e-fake-key"
# Glob and Grep are not in 2.1.328's default set; these turn them on beside the defaults.
DEFAULT_TOOLS_WITH_SEARCH = ("Bash,Read,Edit,Write,NotebookEdit,Glob,Grep,Monitor,"
                             "TaskStop,WebFetch")
PROMPT = "Follow the scripted steps."
_HOOK_TIMING = re.compile(r"Hooks: (\S+) \[.*?\] \(plugin [^)]*\) finished with status "
                          r"(-?\d+) \((\d+)ms\)")


def claude_bin() -> str:
    """The pinned Claude Code binary (see the module docstring)."""
    explicit = os.environ.get("AB_CLAUDE_CODE")
    candidates = [Path(explicit)] if explicit else [
        Path(p) / "lib" / "agent-boundary-test" / "claude-code" / "node_modules" / ".bin" / "claude"
        for p in ("/usr/local", os.path.expanduser("~/.local"))]
    found = next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)
    need(found is not None,
         f"Claude Code {CLAUDE_CODE_VERSION} is not installed (looked at "
         f"{', '.join(map(str, candidates))}); run scripts/install.sh or set AB_CLAUDE_CODE")
    r = subprocess.run([str(found), "--version"], capture_output=True, text=True, timeout=60,
                       env={"HOME": str(WORLD_BASE), "PATH": "/usr/bin:/bin",
                            "DISABLE_AUTOUPDATER": "1"})
    need(r.returncode == 0 and r.stdout.startswith(CLAUDE_CODE_VERSION + " "),
         f"{found} is not Claude Code {CLAUDE_CODE_VERSION}: {r.stdout!r} {r.stderr!r}")
    return str(found)


def make_marketplace(dest: Path, source_dir: Path) -> Path:
    """A copy of the repository's marketplace (`.claude-plugin/`) and plugin dirs."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in (".claude-plugin", "claude-plugin"):
        shutil.copytree(source_dir / name, dest / name, symlinks=True)
    return dest


class Run:
    """One `claude -p` run: its process, parsed stream-json events and the model server."""

    def __init__(self, proc: subprocess.CompletedProcess, server: ModelServer,
                 session_id: str, debug_file: Path | None):
        self.proc = proc
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.server = server
        self.session_id = session_id
        self.debug_file = debug_file
        self.events = []
        for line in proc.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    self.events.append(json.loads(line))
                except ValueError:
                    pass

    def result(self, step: int, k: int = 0):
        try:
            return self.server.result(step, k)
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self!r}") from None

    @property
    def final(self) -> dict:
        found = [e for e in self.events if e.get("type") == "result"]
        assert found, f"no result event\n{self!r}"
        return found[-1]

    @property
    def init(self) -> dict:
        found = [e for e in self.events if e.get("type") == "system"
                 and e.get("subtype") == "init"]
        assert found, f"no system/init event\n{self!r}"
        return found[0]

    def hook_events(self, name: str | None = None) -> list[dict]:
        out = [e for e in self.events if e.get("type") == "system"
               and str(e.get("subtype", "")).startswith("hook")]
        if name is not None:
            out = [e for e in out if e.get("hook_event") == name
                   or e.get("hook_name", "").startswith(name)]
        return out

    def hook_timings(self) -> list[tuple[str, int, int]]:
        """(hook, exit status, milliseconds) of every hook command, from the debug file's
        `Hooks: <Event>:<matcher> [...] (plugin ...) finished with status N (M ms)` lines
        (needs `run(..., debug=True)`)."""
        assert self.debug_file is not None, "run with debug=True to get hook timings"
        text = self.debug_file.read_text(errors="replace") if self.debug_file.exists() else ""
        return [(m.group(1), int(m.group(2)), int(m.group(3))) for m in _HOOK_TIMING.finditer(text)]

    def __repr__(self) -> str:
        lines = [f"<claude run rc={self.rc} session={self.session_id}>"]
        for e in self.events:
            lines.append("  " + json.dumps(e)[:600] + " ... " + json.dumps(e)[-400:])
        lines.append("--- stderr\n" + self.stderr[-3000:])
        return "\n".join(lines)


class ClaudeCode:
    def __init__(self, world: World, bin_path: str, marketplace: Path | None = None):
        self.world = world
        self.bin = bin_path
        self.marketplace = marketplace
        self.runs = 0

    def env(self, extra: dict | None = None, drop: tuple = ()) -> dict:
        env = self.world.env({
            "AGENT_BOUNDARY_BIN": os.path.realpath(self.world.ab_bin),
            "ANTHROPIC_API_KEY": FAKE_API_KEY,
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "LANG": "C.UTF-8",
        })
        for k in drop:
            env.pop(k, None)
        env.update(extra or {})
        return env

    def cli(self, *args, cwd=None, env=None, timeout=120) -> subprocess.CompletedProcess:
        return subprocess.run([self.bin, *[str(a) for a in args]], cwd=str(cwd or self.world.wt),
                              env=self.env(env), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)

    def _ok(self, r: subprocess.CompletedProcess, what: str) -> None:
        assert r.returncode == 0, f"{what} failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}"

    def install_plugin(self, scope: str = "user", enable: bool = True, cwd=None) -> None:
        assert self.marketplace is not None, "no marketplace to install from"
        self._ok(self.cli("plugin", "marketplace", "add", self.marketplace, cwd=cwd),
                 "claude plugin marketplace add")
        r = self.cli("plugin", "install", PLUGIN_ID, "--scope", scope, cwd=cwd)
        self._ok(r, "claude plugin install")
        if enable:
            self._ok(self.cli("plugin", "enable", PLUGIN_ID, "--scope", scope, cwd=cwd),
                     "claude plugin enable")

    def run(self, script, prompt: str = PROMPT, *, mode: str = "default", tools=None,
            session_id: str | None = None, resume: str | None = None, env=None, drop=(),
            cwd=None, timeout: float = 240, debug: bool = False, args=()) -> Run:
        self.runs += 1
        sid = resume or session_id or str(uuid.uuid4())
        argv = [self.bin, "-p", prompt, "--output-format", "stream-json", "--verbose",
                "--include-hook-events", "--permission-mode", mode]
        argv += ["--resume", sid] if resume else ["--session-id", sid]
        if tools:
            argv += ["--tools", tools]
        debug_file = None
        if debug:
            debug_file = self.world.root / f"claude-debug-{self.runs}-{sid}.log"
            argv += ["--debug-file", str(debug_file)]
        argv += [str(a) for a in args]
        extra = {"IS_SANDBOX": "1"} if mode == "bypassPermissions" else {}
        extra.update(env or {})
        server = ModelServer(script).start()
        try:
            extra["ANTHROPIC_BASE_URL"] = server.url
            proc = subprocess.run(argv, cwd=str(cwd or self.world.wt),
                                  env=self.env(extra, drop), stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=timeout)
        finally:
            server.stop()
        return Run(proc, server, sid, debug_file)


# -- fixtures --------------------------------------------------------------------------------

def new_world(name: str, ab_prefix: Path, source_dir: Path, git: str) -> World:
    WORLD_BASE.mkdir(mode=0o700, parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60]
    root = Path(tempfile.mkdtemp(prefix=f"{safe}-", dir=WORLD_BASE)).resolve()
    w = World(root, ab_prefix, git)
    w.build(source_dir)
    return w


@pytest.fixture(scope="session")
def claude_bin_path() -> str:
    return claude_bin()


def _module_world(request, name: str):
    src = os.environ.get("AB_SOURCE_DIR")
    source_dir = Path(src).resolve() if src else Path(__file__).resolve().parents[3]
    need_tool("nono")
    w = new_world(f"{request.module.__name__}-{name}", prefix(), source_dir, need_tool("git"))
    return w, source_dir


@pytest.fixture(scope="module")
def module_world(request):
    w, _ = _module_world(request, "world")
    try:
        yield w
    finally:
        w.destroy()


@pytest.fixture(scope="module")
def claude_code(request, module_world, claude_bin_path) -> ClaudeCode:
    src = os.environ.get("AB_SOURCE_DIR")
    source_dir = Path(src).resolve() if src else Path(__file__).resolve().parents[3]
    market = make_marketplace(module_world.root / "marketplace", source_dir)
    cc = ClaudeCode(module_world, claude_bin_path, market)
    cc.install_plugin()
    return cc


@pytest.fixture(scope="module")
def claude_control(request, claude_bin_path):
    w, _ = _module_world(request, "control")
    try:
        yield ClaudeCode(w, claude_bin_path)
    finally:
        w.destroy()


__all__ = ["CLAUDE_CODE_VERSION", "DEFAULT_TOOLS_WITH_SEARCH", "PLUGIN_ID", "ClaudeCode", "Run",
           "claude_bin", "claude_bin_path", "claude_code", "claude_control", "make_marketplace",
           "module_world", "new_world"]
