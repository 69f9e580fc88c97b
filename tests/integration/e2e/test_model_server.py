"""The scripted model server on its own (no Claude Code): the contract the e2e tests rely on."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from model_server import ModelServer, tool


def post(url: str, body: dict) -> tuple[int, str, str]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def sse(text: str) -> list[tuple[str, dict]]:
    out = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


MAIN_TOOLS = [{"name": "Bash", "input_schema": {}}, {"name": "Read", "input_schema": {}}]


def test_streams_the_script_and_records_tool_results():
    with ModelServer([tool("Bash", command="echo hi"), "finished"]) as s:
        body = {"model": "m", "stream": True, "tools": MAIN_TOOLS,
                "messages": [{"role": "system", "content": "env notes"},
                             {"role": "user", "content": "go"}]}
        status, ctype, text = post(s.url + "/v1/messages", body)
        assert status == 200 and ctype.startswith("text/event-stream")
        events = sse(text)
        names = [e for e, _ in events]
        assert names[0] == "message_start" and names[-1] == "message_stop"
        assert "content_block_stop" in names and "message_delta" in names
        start = next(d for e, d in events if e == "content_block_start")
        assert start["content_block"]["name"] == "Bash"
        partial = "".join(d["delta"]["partial_json"] for e, d in events
                          if e == "content_block_delta")
        assert json.loads(partial) == {"command": "echo hi"}
        delta = next(d for e, d in events if e == "message_delta")
        assert delta["delta"]["stop_reason"] == "tool_use"

        # A side request (no tools) gets text and does not advance the script.
        status, _, text = post(s.url + "/v1/messages", {"model": "m", "messages": [
            {"role": "user", "content": "title?"}]})
        assert status == 200 and json.loads(text)["content"][0]["type"] == "text"

        tool_id = start["content_block"]["id"]
        body["messages"] += [
            {"role": "assistant", "content": [start["content_block"]]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                          "is_error": True, "content": [
                                              {"type": "text", "text": "denied"}]}]}]
        body["stream"] = False
        status, _, text = post(s.url + "/v1/messages", body)
        reply = json.loads(text)
        assert reply["content"] == [{"type": "text", "text": "finished"}]
        assert reply["stop_reason"] == "end_turn"
        r = s.result(0)
        assert r.is_error and r.text == "denied"
        assert [q.kind for q in s.requests] == ["main", "side", "main"]
        assert s.tool_names() == ["Bash", "Read"]


def test_other_routes():
    with ModelServer() as s:
        status, _, text = post(s.url + "/v1/messages/count_tokens", {"messages": []})
        assert status == 200 and json.loads(text)["input_tokens"] >= 1
        with urllib.request.urlopen(s.url + "/v1/models", timeout=10) as r:
            assert json.loads(r.read())["data"][0]["id"]
        status, ctype, text = post(s.url + "/api/other", {})
        assert status == 404 and ctype == "application/json"
        assert json.loads(text)["type"] == "error"
