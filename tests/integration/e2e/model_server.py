"""A scripted local model server speaking the Anthropic Messages API (Python stdlib only).

The end-to-end tests drive the real Claude Code against it, so every assistant turn is
decided by the test, not by a model:

    from model_server import ModelServer, tool, text

    with ModelServer([tool("Bash", command="cat ~/.ssh/id_rsa"), "done"]) as server:
        ... run `claude -p` with ANTHROPIC_BASE_URL=server.url ...
        r = server.result(0)          # the tool_result Claude sent back for step 0's tool
        assert r.is_error and "denied" in r.text

API (keep it small; other test modules build on it):

- `ModelServer(script=(), model="claude-sonnet-4-5")`: listens on 127.0.0.1, port 0
  (the chosen port is `server.port`, the base URL `server.url`). Use it as a context
  manager, or `start()` / `stop()`.
- A *script* is a list of assistant turns, played in order on the main conversation:
    * a `str`: final text (`stop_reason: end_turn`);
    * a `tool(name, **input)` block, or a list of them (optionally mixed with `str` text
      blocks): one assistant message with those tool_use blocks (`stop_reason: tool_use`);
    * a callable `f(body) -> turn`: called with the request body (a dict) when the turn
      is played, for turns that depend on earlier results.
  When the script is exhausted the server answers `"(script finished)"`.
- `set_script(script)`: replaces the script and restarts it at step 0 (e.g. before a
  `--resume` run; turns played under an older script no longer count).
- Which step is played is derived from the request itself, not from a counter: the number
  of assistant messages in `messages[]` that carry tool_use ids of the current script.
  Retries and side requests therefore never skip a step.
- *Main conversation* requests are those whose `tools` array names `Bash` or `Read`. Every
  other `/v1/messages` request (titles, summaries, background-task notes) is a side request
  and gets short text without advancing the script.
- `messages[]` entries with `"role": "system"` (2.1.328 puts environment notes there) are
  ignored.
- Recorded: `server.requests`, a list of `Request(method, path, headers, body, kind, step)`
  (`kind` is `main`, `side`, `count_tokens`, `models` or `other`). `server.main_requests()`
  returns the main ones. `server.tool_results()` maps tool_use_id -> `ToolResult(id,
  is_error, text, raw)` over every main request; `server.result(step, k=0)` is the result of
  the k-th tool of script step `step` (AssertionError when Claude never sent it back);
  `server.tool_names()` lists the tool names of the last main request's `tools` array.
- Streaming (`"stream": true`) answers with SSE: message_start, content_block_start,
  ping, content_block_delta (text_delta / input_json_delta), content_block_stop,
  message_delta (stop_reason, usage), message_stop. Otherwise one JSON message.
  `POST /v1/messages/count_tokens` and `GET /v1/models` answer too; anything else is a
  JSON 404.
"""

from __future__ import annotations

import gzip
import itertools
import json
import threading
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union

MAIN_TOOL_NAMES = ("Bash", "Read")
FINISHED_TEXT = "(script finished)"
SIDE_TEXT = "Scripted session"

Turn = Union[str, dict, list, Callable[[dict], Any]]


def tool(name: str, **tool_input) -> dict:
    """A tool_use block for a script turn."""
    return {"type": "tool_use", "name": name, "input": tool_input}


def text(value: str) -> dict:
    """A text block (for a turn that mixes text and tool calls)."""
    return {"type": "text", "text": value}


@dataclass
class Request:
    method: str
    path: str
    headers: dict
    body: Any
    kind: str = "other"
    step: int | None = None


@dataclass
class ToolResult:
    id: str
    is_error: bool
    text: str
    raw: dict = field(repr=False, default_factory=dict)


def _block_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(part.get("text", ""))
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return ""


def conversation(body: dict) -> list:
    """messages[] without the `role: system` entries."""
    return [m for m in body.get("messages") or [] if isinstance(m, dict)
            and m.get("role") != "system"]


def _content_blocks(message: dict) -> list:
    content = message.get("content")
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


class ModelServer:
    def __init__(self, script=(), model: str = "claude-sonnet-4-5"):
        self.model = model
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._generation = itertools.count(1)
        self._ids = itertools.count(1)
        self.set_script(script)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> "ModelServer":
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        name="model-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "ModelServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- script ----------------------------------------------------------------------------

    def set_script(self, script) -> None:
        with self._lock:
            self.script = list(script)
            self._prefix = f"toolu_e2e{next(self._generation)}s"

    def _tool_id(self, step: int, k: int) -> str:
        return f"{self._prefix}{step}k{k}"

    def _step_of(self, body: dict) -> int:
        """Assistant messages already played from the current script."""
        played = set()
        for m in conversation(body):
            if m.get("role") != "assistant":
                continue
            for b in _content_blocks(m):
                bid = b.get("id", "")
                if b.get("type") == "tool_use" and bid.startswith(self._prefix):
                    played.add(bid[len(self._prefix):].split("k")[0])
        return len(played)

    def _turn_blocks(self, step: int, body: dict) -> tuple[list, str]:
        if step >= len(self.script):
            return [text(FINISHED_TEXT)], "end_turn"
        turn = self.script[step]
        if callable(turn):
            turn = turn(body)
        if isinstance(turn, (str, dict)):
            turn = [turn]
        blocks, k = [], 0
        for item in turn:
            if isinstance(item, str):
                blocks.append(text(item))
            elif item.get("type") == "tool_use":
                blocks.append({"type": "tool_use", "id": self._tool_id(step, k),
                               "name": item["name"], "input": item.get("input", {})})
                k += 1
            else:
                blocks.append(dict(item))
        stop = "tool_use" if k else "end_turn"
        return blocks, stop

    # -- what was recorded -----------------------------------------------------------------

    def main_requests(self) -> list[Request]:
        return [r for r in list(self.requests) if r.kind == "main"]

    def tool_results(self) -> dict[str, ToolResult]:
        out: dict[str, ToolResult] = {}
        for r in self.main_requests():
            for m in conversation(r.body):
                if m.get("role") != "user":
                    continue
                for b in _content_blocks(m):
                    if b.get("type") == "tool_result":
                        tid = b.get("tool_use_id", "")
                        out[tid] = ToolResult(tid, bool(b.get("is_error", False)),
                                              _block_text(b.get("content")), b)
        return out

    def result(self, step: int, k: int = 0) -> ToolResult:
        tid = self._tool_id(step, k)
        results = self.tool_results()
        assert tid in results, (f"no tool_result for step {step} tool {k} ({tid}); "
                                f"results: {list(results.values())}")
        return results[tid]

    def tool_names(self) -> list[str]:
        main = self.main_requests()
        assert main, "no main-conversation request was recorded"
        return [t.get("name", "") for t in main[-1].body.get("tools") or []]

    # -- request handling ------------------------------------------------------------------

    def _classify(self, body: dict) -> str:
        names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        return "main" if names & set(MAIN_TOOL_NAMES) else "side"

    def answer(self, req: Request) -> tuple[list, str]:
        """The content blocks and stop_reason for a /v1/messages request (and records it)."""
        body = req.body if isinstance(req.body, dict) else {}
        with self._lock:
            req.kind = self._classify(body)
            if req.kind == "main":
                req.step = self._step_of(body)
                blocks, stop = self._turn_blocks(req.step, body)
            else:
                blocks, stop = [text(SIDE_TEXT)], "end_turn"
            self.requests.append(req)
        return blocks, stop

    def message_id(self) -> str:
        return f"msg_e2e{next(self._ids):06d}"


class _Handler(BaseHTTPRequestHandler):
    owner: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet: the tests print what matters
        pass

    def _read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        encoding = (self.headers.get("Content-Encoding") or "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _json(self, status: int, payload) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_e2e")
        self.end_headers()
        self.wfile.write(data)

    def _not_found(self, req: Request) -> None:
        with self.owner._lock:
            self.owner.requests.append(req)
        self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                    "message": f"no route {req.path}"}})

    def _request(self) -> Request:
        body = self._read_body() if self.command in ("POST", "PUT", "PATCH") else None
        return Request(self.command, self.path, dict(self.headers.items()), body)

    def do_GET(self) -> None:
        req = self._request()
        path = self.path.split("?")[0]
        if path.rstrip("/") == "/v1/models":
            req.kind = "models"
            with self.owner._lock:
                self.owner.requests.append(req)
            model = {"type": "model", "id": self.owner.model, "display_name": "Scripted",
                     "created_at": "2026-01-01T00:00:00Z"}
            self._json(200, {"data": [model], "has_more": False, "first_id": model["id"],
                             "last_id": model["id"]})
            return
        self._not_found(req)

    def do_HEAD(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        req = self._request()
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            req.kind = "count_tokens"
            with self.owner._lock:
                self.owner.requests.append(req)
            size = len(json.dumps(req.body)) if req.body is not None else 0
            self._json(200, {"input_tokens": max(1, size // 4)})
            return
        if path != "/v1/messages":
            self._not_found(req)
            return
        blocks, stop = self.owner.answer(req)
        body = req.body if isinstance(req.body, dict) else {}
        model = body.get("model") or self.owner.model
        if body.get("stream"):
            self._stream(blocks, stop, model)
        else:
            self._json(200, {"id": self.owner.message_id(), "type": "message",
                             "role": "assistant", "model": model, "content": blocks,
                             "stop_reason": stop, "stop_sequence": None,
                             "usage": {"input_tokens": 10, "output_tokens": 10}})

    def _stream(self, blocks: list, stop: str, model: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", "req_e2e")
        self.end_headers()
        self.close_connection = True

        def event(name: str, data: dict) -> None:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

        event("message_start", {"type": "message_start", "message": {
            "id": self.owner.message_id(), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}})
        event("ping", {"type": "ping"})
        for index, block in enumerate(blocks):
            if block["type"] == "tool_use":
                start = {"type": "tool_use", "id": block["id"], "name": block["name"],
                         "input": {}}
                event("content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": start})
                payload = json.dumps(block["input"])
                for i in range(0, len(payload), 64):
                    event("content_block_delta", {
                        "type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": payload[i:i + 64]}})
            else:
                event("content_block_start", {"type": "content_block_start", "index": index,
                                              "content_block": {"type": "text", "text": ""}})
                event("content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": block.get("text", "")}})
            event("content_block_stop", {"type": "content_block_stop", "index": index})
        event("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": 10}})
        event("message_stop", {"type": "message_stop"})
        self.wfile.flush()


__all__ = ["ModelServer", "Request", "ToolResult", "tool", "text", "conversation"]
