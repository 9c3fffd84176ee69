"""A local HTTP server that behaves like the OpenAI and Anthropic APIs, for tests.

.. code-block:: python

    from abridged.testing import ProviderServer, Reply

    with ProviderServer(context_window=16_384, max_output=4_096, replies=[Reply("hi")]) as server:
        client = openai.OpenAI(base_url=server.base_url + "/v1", api_key="test")
        client.chat.completions.create(model="gpt-test", messages=[...])
        server.requests[-1].prompt_tokens

It binds ``127.0.0.1`` on a free port (a ``ThreadingHTTPServer`` in a daemon thread) and never
touches the network beyond that. Endpoints: ``POST /v1/chat/completions``, ``POST
/v1/responses``, ``POST /v1/messages``, ``POST /v1/messages/count_tokens`` and ``GET
/v1/models`` (``/v1/models/{id}``), JSON or server-sent events as each API streams them. Every
request:

1. is parsed with abridged's converters into core ``messages`` and checked: format, then tool
   pairing on the wire (the provider's real 400) and with ``abridged.core.validate``;
2. is counted with a real tokenizer (``abridged.testing.counting`` documents the formula) and
   checked against the window and the output ceiling (the provider's real overflow error:
   ``abridged.testing.errors``);
3. gets its prompt-cache numbers (``abridged.testing.cache``: OpenAI's last-four-requests prefix
   rule, Anthropic's ``cache_control`` breakpoints);
4. is answered with the next scripted ``Reply`` and recorded in ``requests``.

**Replies.** ``replies`` is ``None`` (every request gets the default reply), a list (consumed in
order, each item a ``Reply``, a string or a callable), or a callable ``RecordedRequest ->
Reply | str`` called for every request. When the list runs out, the default reply is a short
text echoing the number of core messages received (``"Received 3 messages."``). Requests
rejected before the model (format, pairing, overflow) and ``count_tokens`` consume no reply. A
reply with ``error=(status, body)`` is sent as that HTTP error (body: JSON, or text when a
string), after ``latency`` like any reply; the prompt cache is not updated by it.

**Ids** are deterministic: derived from the request's index in ``requests`` and the number of
``reset`` calls before it (``call_...`` and ``chatcmpl-...`` for Chat Completions,
``resp_``/``msg_``/``fc_``/``rs_`` for Responses, ``msg_01...``/``toolu_01...`` for
Anthropic). Thinking replies for Anthropic are signed by the server
(``abridged-test-sig:...`` unless the reply gives a ``signature``), and a thinking block carrying
such a signature must come back unchanged, or the request gets Anthropic's
``Invalid `signature` in `thinking` block``.

**Output.** A reply's output tokens are counted (text, reasoning, tool calls) unless
``output_tokens`` is given. A reply longer than the output limit of the request (``max_tokens``
or ``max_completion_tokens`` or ``max_output_tokens``, ``max_output``, and what is left of the
window) is cut there, loses its tool calls and finishes with ``length`` (``max_tokens`` for
Anthropic, ``incomplete`` for Responses).

**Timing.** ``latency`` seconds pass before each reply (scripted errors included) and each token
count is sent, not before a rejection or a models listing (the wait ends early when the server
stops); ``stream_delay`` seconds pass between streamed events, so a test can abort a
stream in the middle. A client that goes away mid-stream is recorded as ``aborted``.

``usage`` in every API is the request's ``prompt_tokens`` (everything read, cached or not) and
the reply's output tokens; Anthropic's ``input_tokens`` is ``prompt_tokens - cached_tokens -
cache_write_tokens``, as that API reports it.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, TypeAlias
from urllib.parse import unquote, urlsplit

from abridged.core.model import Message
from abridged.testing import anthropic_api, openai_api
from abridged.testing.cache import AnthropicCache, CacheResult, OpenAICache
from abridged.testing.counting import TOOL_CALL_OVERHEAD, CountFunction, TokenCounter
from abridged.testing.errors import ApiError, anthropic_error, openai_error, sign_thinking
from abridged.testing.exchange import (
    LENGTH,
    STOP,
    TOOL_CALLS,
    Event,
    Output,
    Prepared,
    make_id,
    normalize_finish,
)

Api: TypeAlias = Literal["openai-chat", "openai-responses", "anthropic", "anthropic-count"]
REDACTED = "REDACTED"
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "proxy-authorization"})


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer.

    ``tool_calls`` are ``(name, arguments)`` pairs, arguments a dict or JSON text (ids are made
    by the server). ``reasoning`` is sent as Anthropic thinking (signed with ``signature``, or
    by the server), a Responses reasoning item (``signature`` as its ``encrypted_content``), or
    Chat Completions ``reasoning_content``. ``finish_reason`` overrides the default (``stop``,
    or ``tool_calls`` when there are calls) and may be spelled the way any API spells it
    (``end_turn``, ``max_tokens``, ``length``, ...). ``output_tokens`` overrides the counted
    output. ``error=(status, body)`` answers with that HTTP error instead, with ``headers``
    (``{"retry-after": "7"}``).
    """

    text: str = ""
    tool_calls: Sequence[tuple[str, Mapping[str, Any] | str]] = ()
    reasoning: str = ""
    signature: str | None = None
    finish_reason: str | None = None
    output_tokens: int | None = None
    error: tuple[int, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(tuple(c) for c in self.tool_calls))


ReplyFunction: TypeAlias = Callable[["RecordedRequest"], "Reply | str"]
ScriptItem: TypeAlias = "Reply | str | ReplyFunction"


@dataclass(slots=True)
class RecordedRequest:
    """One request the server received, and what it answered.

    ``headers`` have lower-case names, with ``authorization``/``x-api-key``/``api-key`` values
    replaced by ``"REDACTED"``. ``body`` is the parsed JSON; ``messages`` the core messages read
    with abridged's converters (empty when the request could not be read). ``prompt_tokens`` is
    the whole input (cached or not), ``cached_tokens`` the part read from the prompt cache,
    ``cache_write_tokens`` the part written to it (Anthropic). ``status`` is the HTTP status sent
    and ``error`` the error body sent (``None`` on success). ``response`` is the JSON body sent,
    or the list of event data of a stream. ``raw_body``: the request's bytes as received.
    """

    index: int
    api: str
    path: str
    headers: dict[str, str]
    body: Any
    messages: list[Message] = field(default_factory=list)
    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    status: int = 200
    error: Any = None
    model: str | None = None
    stream: bool = False
    max_tokens: int | None = None
    reply: Reply | None = None
    output_tokens: int = 0
    response: Any = None
    aborted: bool = False
    raw_body: bytes = b""

    @property
    def error_message(self) -> str | None:
        """The message text of the error sent, if any."""
        if self.error is None:
            return None
        return ApiError(self.status, self.error).message


@dataclass(slots=True)
class _Answer:
    """What the HTTP handler sends back."""

    status: int
    body: Any = None
    events: list[Event] | None = None
    record: RecordedRequest | None = None
    delay: bool = True
    headers: Mapping[str, str] = field(default_factory=dict)


def _redact(headers: Mapping[str, str]) -> dict[str, str]:
    return {
        k.lower(): (REDACTED if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()
    }


class ProviderServer:
    """A local OpenAI- and Anthropic-compatible server (see the module documentation).

    ``context_window`` and ``max_output`` are the model's limits; ``replies`` the script;
    ``latency`` the seconds before each answer; ``count`` the tokenizer (``"o200k"``,
    ``"cl100k"`` or a callable ``list[str] -> list[int]``); ``model`` the name ``/v1/models``
    lists (with every model name requested so far); ``stream_delay`` the seconds between
    streamed events; ``port`` the port to bind on 127.0.0.1 (0, the default: a free one). Use it
    as a context manager (or ``start``/``stop``).
    """

    def __init__(
        self,
        context_window: int = 16_384,
        max_output: int = 4_096,
        replies: Sequence[ScriptItem] | ReplyFunction | None = None,
        latency: float = 0.0,
        count: str | CountFunction = "o200k",
        *,
        model: str = "test-model",
        stream_delay: float = 0.0,
        port: int = 0,
    ) -> None:
        if context_window < 1 or max_output < 1:
            raise ValueError("context_window and max_output must be positive")
        if latency < 0 or stream_delay < 0:
            raise ValueError("latency and stream_delay must not be negative")
        if not 0 <= port <= 65_535:
            raise ValueError(f"port must be 0 (a free one) to 65535, not {port}")
        self.port = port
        self.context_window = context_window
        self.max_output = max_output
        self.latency = latency
        self.stream_delay = stream_delay
        self.counter = TokenCounter(count)
        self._lock = threading.RLock()
        self._function: ReplyFunction | None = None
        self._script: deque[ScriptItem] = deque()
        self.set_replies(replies)
        self._requests: list[RecordedRequest] = []
        self._generation = 0  # counts resets, so that ids stay unique across them
        self._models: list[str] = [model]
        self._openai_cache = OpenAICache(self.counter)
        self._anthropic_cache = AnthropicCache()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> ProviderServer:
        """Bind ``port`` (0: a free one) on 127.0.0.1 and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer(("127.0.0.1", self.port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"ProviderServer:{httpd.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (waits in progress end at once)."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ProviderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (add ``/v1`` for the OpenAI SDK)."""
        if self._httpd is None:
            raise RuntimeError("the server is not running: use it in a with block or start() it")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- state ----------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order (a copy of the list)."""
        with self._lock:
            return list(self._requests)

    def reset(self) -> None:
        """Forget recorded requests and both prompt caches (the script is kept)."""
        with self._lock:
            self._requests.clear()
            self._generation += 1
            self._openai_cache.reset()
            self._anthropic_cache.reset()

    def set_replies(self, replies: Sequence[ScriptItem] | ReplyFunction | None) -> None:
        """Replace the script (same forms as the ``replies`` argument)."""
        with self._lock:
            self._function = None
            self._script = deque()
            if replies is None:
                return
            if callable(replies):
                self._function = replies
            else:
                self._script.extend(replies)

    @property
    def models(self) -> list[str]:
        """The model names ``/v1/models`` lists."""
        with self._lock:
            return list(self._models)

    # -- request handling -----------------------------------------------------------------------

    def _dispatch(
        self, method: str, target: str, headers: Mapping[str, str], raw: bytes
    ) -> _Answer:
        path = urlsplit(target).path.rstrip("/") or "/"
        anthropic = "anthropic-version" in {k.lower() for k in headers} or path.startswith(
            "/v1/messages"
        )
        if method == "GET" and (path == "/v1/models" or path.startswith("/v1/models/")):
            return self._models_answer(path, anthropic)
        routes: dict[str, Api] = {
            "/v1/chat/completions": "openai-chat",
            "/v1/responses": "openai-responses",
            "/v1/messages": "anthropic",
            "/v1/messages/count_tokens": "anthropic-count",
        }
        api = routes.get(path)
        if method != "POST" or api is None:
            if anthropic:
                error = anthropic_error("Not Found", kind="not_found_error", status=404)
            else:
                error = openai_error(f"Invalid URL ({method} {path})", status=404)
            return _Answer(error.status, error.body, delay=False)
        record = RecordedRequest(
            index=-1, api=api, path=path, headers=_redact(headers), body=None, raw_body=raw
        )
        try:
            record.body = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, ValueError, RecursionError) as e:  # as a real API: 400
            return self._reject(record, self._bad_json(api, e))
        if not isinstance(record.body, dict):
            return self._reject(record, self._bad_json(api, "the body is not a JSON object"))
        try:
            prepared = self._prepare(api, record.body)
        except ApiError as e:
            return self._reject(record, e)
        record.messages = prepared.messages
        record.prompt_tokens = prepared.prompt_tokens
        record.model = prepared.model
        record.stream = prepared.stream
        record.max_tokens = prepared.max_tokens
        if api == "anthropic-count":
            record.response = {"input_tokens": prepared.prompt_tokens}
            return self._accept(record, _Answer(200, record.response))
        try:
            self._check(prepared)
        except ApiError as e:
            return self._reject(record, e)
        with self._lock:
            if prepared.model not in self._models:
                self._models.append(prepared.model)
        return self._answer(record, prepared)

    def _prepare(self, api: Api, body: Mapping[str, Any]) -> Prepared:
        if api == "openai-chat":
            return openai_api.prepare_chat(body, self.counter)
        if api == "openai-responses":
            return openai_api.prepare_responses(body, self.counter)
        return anthropic_api.prepare_anthropic(
            body, self.counter, count_only=api == "anthropic-count"
        )

    def _check(self, p: Prepared) -> None:
        if p.api == "openai-chat":
            openai_api.check_chat(p, self.context_window, self.max_output)
        elif p.api == "openai-responses":
            openai_api.check_responses(p, self.context_window, self.max_output)
        else:
            anthropic_api.check_anthropic(p, self.context_window, self.max_output)

    @staticmethod
    def _bad_json(api: str, problem: object) -> ApiError:
        if api.startswith("anthropic"):
            return anthropic_error(f"There was an error parsing the body: {problem}")
        return openai_error(
            "We could not parse the JSON body of your request. (HINT: This likely means you "
            "aren't using your HTTP library correctly.)"
        )

    def _reject(self, record: RecordedRequest, error: ApiError) -> _Answer:
        record.status = error.status
        record.error = error.body
        return self._accept(record, _Answer(error.status, error.body, delay=False))

    def _accept(self, record: RecordedRequest, answer: _Answer) -> _Answer:
        with self._lock:
            record.index = len(self._requests)
            self._requests.append(record)
        answer.record = record
        return answer

    def _cache_lookup(self, p: Prepared) -> CacheResult:
        if p.api == "anthropic":
            return self._anthropic_cache.lookup(p.model, p.segments, write=False)
        return self._openai_cache.lookup(p.model, p.segments, remember=False)

    def _cache_commit(self, p: Prepared) -> None:
        if p.api == "anthropic":
            self._anthropic_cache.lookup(p.model, p.segments, write=True)
        else:
            self._openai_cache.lookup(p.model, p.segments, remember=True)

    def _next_reply(self, record: RecordedRequest) -> Reply:
        item: ScriptItem | None
        if self._function is not None:
            item = self._function
        else:
            item = self._script.popleft() if self._script else None
        if item is None:
            count = len(record.messages)
            return Reply(text=f"Received {count} message{'' if count == 1 else 's'}.")
        if callable(item) and not isinstance(item, Reply):
            item = item(record)
        if isinstance(item, str):
            return Reply(text=item)
        if not isinstance(item, Reply):
            raise TypeError(f"a scripted reply must be a Reply or a str, not {type(item).__name__}")
        return item

    def _answer(self, record: RecordedRequest, p: Prepared) -> _Answer:
        with self._lock:
            cache = self._cache_lookup(p)
            record.cached_tokens = cache.read
            record.cache_write_tokens = cache.write
            record.index = len(self._requests)
            try:
                reply = self._next_reply(record)
            except Exception as e:
                error = self._server_error(p.api, f"the scripted reply failed: {e!r}")
                record.status, record.error = error.status, error.body
                self._requests.append(record)
                return _Answer(error.status, error.body, record=record)
            record.reply = reply
            if reply.error is not None:
                status, body = reply.error
                record.status, record.error = status, body
                self._requests.append(record)
                return _Answer(status, body, record=record, headers=reply.headers)
            try:
                out = self._resolve(p, reply, record)
                answer = self._render(p, out)
            except Exception as e:
                error = (
                    e
                    if isinstance(e, ApiError)
                    else self._server_error(p.api, f"the scripted reply is invalid: {e!r}")
                )
                record.status, record.error = error.status, error.body
                self._requests.append(record)
                return _Answer(error.status, error.body, record=record)
            record.output_tokens = out.output_tokens
            record.response = (
                answer.body if answer.events is None else [e.data for e in answer.events]
            )
            self._cache_commit(p)
            self._requests.append(record)
        answer.record = record
        return answer

    @staticmethod
    def _server_error(api: str, message: str) -> ApiError:
        if api.startswith("anthropic"):
            return anthropic_error(message, kind="api_error", status=500)
        return openai_error(message, kind="server_error", status=500)

    def _resolve(self, p: Prepared, reply: Reply, record: RecordedRequest) -> Output:
        prefix = {"openai-chat": "call_", "openai-responses": "call_"}.get(p.api, "toolu_01")
        calls: list[tuple[str, str, str]] = []
        for k, (name, arguments) in enumerate(reply.tool_calls):
            args = (
                arguments
                if isinstance(arguments, str)
                else json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
            )
            calls.append((make_id(prefix, self._generation, record.index, k), str(name), args))
        counts = self.counter.count(
            [reply.text, reply.reasoning, *(f"{n} {a}" for _, n, a in calls)]
        )
        text_tokens, reasoning_tokens = counts[0], counts[1]
        counted = text_tokens + reasoning_tokens + sum(n + TOOL_CALL_OVERHEAD for n in counts[2:])
        finish = (
            normalize_finish(reply.finish_reason)
            if reply.finish_reason
            else (TOOL_CALLS if calls else STOP)
        )
        text = reply.text
        limit = min(
            p.max_tokens or self.max_output,
            self.max_output,
            max(self.context_window - p.prompt_tokens, 0),
        )
        output_tokens = reply.output_tokens
        if output_tokens is None and counted > limit:
            text = self.counter.truncate(text, max(limit - reasoning_tokens, 0))
            calls = []
            finish = LENGTH
            counted = min(limit, reasoning_tokens + self.counter.count_one(text))
        if output_tokens is None:
            output_tokens = counted
        signature = reply.signature
        if p.api == "anthropic" and reply.reasoning and signature is None:
            signature = sign_thinking(reply.reasoning)
        id_prefix = {"openai-chat": "chatcmpl-", "openai-responses": "resp_"}.get(p.api, "msg_01")
        return Output(
            text=text,
            reasoning=reply.reasoning,
            signature=signature,
            calls=calls,
            finish=finish,
            output_tokens=output_tokens,
            reasoning_tokens=reasoning_tokens,
            prompt_tokens=p.prompt_tokens,
            cached_tokens=record.cached_tokens,
            cache_write_tokens=record.cache_write_tokens,
            response_id=make_id(id_prefix, "response", self._generation, record.index),
            created=int(time.time()),
        )

    @staticmethod
    def _render(p: Prepared, out: Output) -> _Answer:
        if p.api == "openai-chat":
            if p.stream:
                return _Answer(200, events=openai_api.stream_chat(p, out))
            return _Answer(200, openai_api.render_chat(p, out))
        if p.api == "openai-responses":
            if p.stream:
                return _Answer(200, events=openai_api.stream_responses(p, out))
            return _Answer(200, openai_api.render_responses(p, out))
        if p.stream:
            return _Answer(200, events=anthropic_api.stream_anthropic(p, out))
        return _Answer(200, anthropic_api.render_anthropic(p, out))

    def _models_answer(self, path: str, anthropic: bool) -> _Answer:
        models = self.models
        wanted = unquote(path.removeprefix("/v1/models").strip("/"))
        if wanted:
            models = [wanted]
        if anthropic:
            body = anthropic_api.anthropic_models(models, self.context_window, self.max_output)
            return _Answer(200, body["data"][0] if wanted else body, delay=False)
        if wanted:
            body = openai_api.openai_model(wanted, self.context_window, self.max_output)
        else:
            body = openai_api.openai_models(models, self.context_window, self.max_output)
        return _Answer(200, body, delay=False)

    def _error_answer(self, target: str, exc: BaseException) -> _Answer:
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        api = "anthropic" if target.startswith("/v1/messages") else "openai"
        error = self._server_error(api, f"internal error in the test server: {detail}")
        return _Answer(error.status, error.body, delay=False)

    def _wait(self, seconds: float) -> bool:
        """Wait ``seconds`` (or until the server stops); whether the server is still running."""
        if seconds > 0:
            return not self._stopping.wait(seconds)
        return not self._stopping.is_set()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: ProviderServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Streamed events are small writes: without TCP_NODELAY each one waits ~40 ms for its ACK.
    disable_nagle_algorithm = True
    server_version = "abridged-test-provider/1"
    timeout = 30
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``ProviderServer.requests`` instead of a log."""

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            answer = owner._dispatch(method, self.path, dict(self.headers.items()), raw)
        except Exception as e:
            answer = owner._error_answer(self.path, e)
        if answer.delay and not owner._wait(owner.latency):
            self.close_connection = True
            return
        try:
            if answer.events is None:
                self._send_json(answer.status, answer.body, answer.headers)
            else:
                self._send_events(answer, owner)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            if answer.record is not None:
                answer.record.aborted = True

    def _common_headers(self) -> None:
        self.send_header("x-request-id", "req_abridged_test")
        self.send_header("request-id", "req_abridged_test")

    def _send_json(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        if isinstance(body, str | bytes):
            data = body.encode("utf-8") if isinstance(body, str) else body
            content_type = "text/plain; charset=utf-8"
        else:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            content_type = "application/json"
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self._common_headers()
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_events(self, answer: _Answer, owner: ProviderServer) -> None:
        self.send_response(answer.status)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self._common_headers()
        self.end_headers()
        for i, event in enumerate(answer.events or []):
            if i and not owner._wait(owner.stream_delay):
                self.close_connection = True
                return
            data = event.data if isinstance(event.data, str) else json.dumps(event.data)
            text = (f"event: {event.name}\n" if event.name else "") + f"data: {data}\n\n"
            payload = text.encode("utf-8")
            self.wfile.write(f"{len(payload):X}\r\n".encode("ascii") + payload + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
