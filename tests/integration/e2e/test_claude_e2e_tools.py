"""Every tool of the pinned Claude Code is classified by the gate (finding 4), the newly
classified ones behave as classified inside the real client, and subagents' tool calls
pass the hook too."""

from __future__ import annotations

import json
import subprocess

import pytest

from claude_e2e import (claude_bin_path, claude_code,  # noqa: F401 (fixtures)
                        claude_control, module_world)
from conftest import SSH_SECRET
from model_server import conversation, tool

# Names given to --tools to make the client list every built-in tool it has (unknown
# names are dropped by the client; the init event lists what exists).
CANDIDATES = ("Agent,Task,Bash,Read,Edit,MultiEdit,Write,NotebookEdit,Glob,Grep,Monitor,"
              "WebFetch,WebSearch,TodoWrite,TaskCreate,TaskGet,TaskList,TaskUpdate,TaskOutput,"
              "TaskStop,BashOutput,KillShell,KillBash,AskUserQuestion,EnterPlanMode,ExitPlanMode,"
              "Skill,ToolSearch,ReportFindings,StructuredOutput,CronCreate,CronDelete,CronList,"
              "ScheduleWakeup,ListAgents,SendMessage,Workflow,EnterWorktree,ExitWorktree,LSP,"
              "PowerShell,REPL,SlashCommand,SendUserMessage,Config")
UNKNOWN = "does not know the tool"


def gate(cc, name: str, tool_input: dict) -> dict:
    """The staged hook's answer for one tool (no session needed for the classes checked)."""
    payload = {"session_id": "e2e-classify", "cwd": str(cc.world.wt),
               "hook_event_name": "PreToolUse", "tool_name": name, "tool_input": tool_input,
               "permission_mode": "default", "tool_use_id": "toolu_x"}
    r = subprocess.run([cc.world.ab_bin, "claude", "hook", "PreToolUse"],
                       input=json.dumps(payload), capture_output=True, text=True, timeout=60,
                       env=cc.env(), cwd=str(cc.world.wt))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["hookSpecificOutput"] if r.stdout.strip() else {}


@pytest.fixture(scope="module")
def client_tools(claude_code):
    run = claude_code.run(["ok"], tools=CANDIDATES)
    assert run.rc == 0, run
    names = set(run.init["tools"]) | set(run.server.tool_names())
    names.discard("DeferredToolPlaceholder")  # never called (its description says so)
    return sorted(names)


def test_every_tool_of_the_client_is_classified(claude_code, client_tools):
    assert {"Bash", "Read", "Monitor", "ListAgents", "Workflow", "CronCreate"} <= set(
        client_tools), client_tools
    unclassified = []
    for name in client_tools:
        out = gate(claude_code, name, {"x": 1})
        if UNKNOWN in out.get("permissionDecisionReason", ""):
            unclassified.append(name)
    assert unclassified == [], f"tools of Claude Code the gate does not know: {unclassified}"


def test_an_unknown_tool_says_how_to_report_it(claude_code):
    out = gate(claude_code, "SomeFutureTool", {"x": 1})
    assert out["permissionDecision"] == "ask", out
    assert UNKNOWN in out["permissionDecisionReason"], out
    assert "report it" in out["permissionDecisionReason"], out


def test_newly_classified_tools_in_the_client(claude_code):
    """In -p default mode an ask is a refusal: the safe tools run, SendMessage is refused
    with its reason."""
    run = claude_code.run([tool("CronList"), tool("ListAgents"),
                           tool("SendMessage", to="main", summary="hello", message="hello"),
                           "done"], mode="default", tools=CANDIDATES)
    assert run.rc == 0, run
    for step in (0, 1):
        r = run.result(step)
        assert "hook" not in r.text.lower() or not r.is_error, r
    r = run.result(2)
    assert r.is_error and "another agent" in r.text, r


def is_subagent(body: dict) -> bool:
    first = conversation(body)[0] if conversation(body) else {}
    content = first.get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    return "SUBAGENT-TASK" in text


@pytest.mark.protects("claude-bash-wrapped")
@pytest.mark.parametrize("arm", ["boundary", "control"])
def test_subagent_tool_calls_pass_the_hook(claude_code, claude_control, arm):
    cc = claude_code if arm == "boundary" else claude_control
    w = cc.world
    marker = w.wt / "subagent-ran.txt"
    script = [
        lambda body: (tool("Bash", command=f"cat {w.ssh_key}; echo sub > {marker}",
                           description="read the key") if is_subagent(body) else
                      tool("Agent", description="delegate", prompt="SUBAGENT-TASK",
                           subagent_type="general-purpose")),
        lambda body: "sub done" if is_subagent(body) else "main done",
    ]
    run = cc.run(script, mode="bypassPermissions")
    assert run.rc == 0, run
    texts = [r.text for r in run.server.tool_results().values()]
    assert marker.exists(), f"the subagent's command did not run\n{run!r}"
    assert marker.read_text() == "sub\n"
    if arm == "boundary":
        assert all(SSH_SECRET not in t for t in texts), run
    else:
        assert any(SSH_SECRET in t for t in texts), run
