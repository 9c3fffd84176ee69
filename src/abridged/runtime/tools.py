"""Tools for the agent loop: Python callables described by a JSON schema, run in parallel.

::

    @tool
    async def read_file(path: str) -> str:
        '''Read a file of the project.'''
        return Path(path).read_text()

    registry = ToolRegistry([read_file, Tool("ls", "List a directory", schema, list_dir)])
    results = await registry.run(message.tool_calls)      # one ToolResult per call, in order

- A ``Tool`` is a name, a description, the JSON schema of its arguments and a function (sync or
  async). ``tool`` makes one from a function, inferring the schema from its annotations when
  none is given (``str``, ``int``, ``float``, ``bool``, ``list``, ``dict``, ``X | None`` for an
  optional argument) and the description from the docstring's first paragraph.
- A parameter annotated ``ToolContext`` is not part of the schema: the runtime passes the call's
  context (its id, the conversation, ``request_compaction``).
- ``ToolRegistry.run`` runs the calls of one assistant message concurrently (sync functions in
  worker threads). A tool that raises, times out, gets arguments that are not a JSON object, or
  does not exist becomes an **error result** (``is_error=True``) that tells the model what went
  wrong; the loop never crashes on a tool. A call cancelled by ``abort`` becomes an error result
  too, so every call keeps its result (pairing).
- What a function returns becomes the result's content: a string as is, ``Text``/``Image``/
  ``File`` parts as they are, ``None`` as ``"(no output)"``, anything else as JSON.

``clip_tool_message`` cuts a tool result larger than a cap to its head and tail, with a note of
what was left out: the runtime stores the whole result and sends the clipped one.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import math
import types
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from abridged.core.budget import format_token_size
from abridged.core.model import File, Image, Message, ResultContent, Text, ToolCall, ToolResult
from abridged.core.protocols import ToolSpec
from abridged.errors import SettingError

__all__ = [
    "ABORTED_TEXT",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "clip_tool_message",
    "result_content",
    "schema_from_signature",
    "tool",
]

#: The content of the result of a call cancelled by ``abort``.
ABORTED_TEXT = "Aborted by the user before the tool finished."

ToolFunction = Callable[..., Any]


@dataclass(slots=True)
class ToolContext:
    """What a tool may know of the call it serves (pass it by annotating a parameter).

    ``conversation`` is the ``Conversation`` running the tool (``None`` outside one); a tool may
    call ``request_compaction(instructions)``: the compaction runs when the turn ends.
    """

    call_id: str
    tool: str
    conversation: Any = None

    def request_compaction(self, instructions: str | None = None) -> None:
        """Ask for a compaction when the current turn ends (with optional focus
        ``instructions``)."""
        if self.conversation is not None:
            self.conversation.request_compaction(instructions)


_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    tuple: "array",
    dict: "object",
}


def _json_type(annotation: Any) -> tuple[dict[str, Any], bool]:
    """The JSON schema of one annotation and whether it admits ``None`` (optional)."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}, False
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(members) < len(typing.get_args(annotation))
        if len(members) == 1:
            schema, _ = _json_type(members[0])
            return schema, optional
        return {}, optional
    if origin is typing.Literal:
        values = list(typing.get_args(annotation))
        return {"enum": values}, False
    base = origin or annotation
    if base in _JSON_TYPES:
        out: dict[str, Any] = {"type": _JSON_TYPES[base]}
        args = typing.get_args(annotation)
        if base in (list, tuple) and len(args) == 1:
            item, _ = _json_type(args[0])
            if item:
                out["items"] = item
        return out, False
    return {}, False


def _is_context(annotation: Any) -> bool:
    return annotation is ToolContext or annotation == "ToolContext"


def schema_from_signature(function: ToolFunction) -> dict[str, Any]:
    """The JSON schema of ``function``'s arguments, from its annotations.

    >>> def f(path: str, limit: int = 10, tags: list[str] | None = None) -> str: ...
    >>> schema_from_signature(f)["required"]
    ['path']
    """
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = hints.get(name, parameter.annotation)
        if _is_context(annotation):
            continue
        schema, optional = _json_type(annotation)
        properties[name] = schema
        if parameter.default is inspect.Parameter.empty and not optional:
            required.append(name)
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def _description(function: ToolFunction) -> str:
    doc = inspect.getdoc(function) or ""
    return doc.split("\n\n", 1)[0].strip()


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool the model may call: ``name``, ``description``, the JSON schema of its arguments
    (``parameters``) and the ``function`` that runs it (sync or async, called with the arguments
    as keyword arguments). ``timeout`` (seconds) overrides the registry's."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: ToolFunction
    timeout: float | None = None
    _context_params: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise SettingError("name", self.name, "a non-empty tool name")
        if not callable(self.function):
            raise SettingError("function", self.function, "a callable")
        if not isinstance(self.parameters, Mapping):
            raise SettingError("parameters", self.parameters, "a JSON schema object")
        if self.timeout is not None and self.timeout <= 0:
            raise SettingError("timeout", self.timeout, "None or a positive number of seconds")
        if not self._context_params:
            object.__setattr__(self, "_context_params", _context_parameters(self.function))

    @property
    def spec(self) -> ToolSpec:
        """The definition sent to the model."""
        return ToolSpec(self.name, self.description, dict(self.parameters))

    async def __call__(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        """Run the function with ``arguments`` (and the context, where asked for)."""
        kwargs = dict(arguments)
        for name in self._context_params:
            kwargs[name] = context
        call = self.function
        if inspect.iscoroutinefunction(call) or (
            not inspect.isfunction(call)
            and not inspect.ismethod(call)
            and inspect.iscoroutinefunction(type(call).__call__)
        ):
            return await self.function(**kwargs)
        result = await asyncio.to_thread(self.function, **kwargs)
        if inspect.isawaitable(result):
            return await result
        return result


def _context_parameters(function: ToolFunction) -> tuple[str, ...]:
    try:
        hints = typing.get_type_hints(function)
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError, NameError):
        return ()
    return tuple(
        name for name, p in parameters.items() if _is_context(hints.get(name, p.annotation))
    )


def tool(
    function: ToolFunction | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    timeout: float | None = None,
) -> Any:
    """Make a ``Tool`` from a function (usable as ``@tool`` or ``@tool(name=...)``)."""

    def make(fn: ToolFunction) -> Tool:
        return Tool(
            name=name or fn.__name__,
            description=description if description is not None else _description(fn),
            parameters=dict(parameters) if parameters is not None else schema_from_signature(fn),
            function=fn,
            timeout=timeout,
        )

    if function is not None:
        return make(function)
    return make


# -- results -----------------------------------------------------------------------------------


def result_content(value: Any) -> tuple[ResultContent, ...]:
    """What a tool returned as result content (see the module docstring)."""
    if value is None:
        return (Text("(no output)"),)
    if isinstance(value, str):
        return (Text(value),)
    if isinstance(value, bytes | bytearray):
        return (Text(bytes(value).decode("utf-8", "replace")),)
    if isinstance(value, Text | Image | File):
        return (value,)
    if isinstance(value, ToolResult):
        return value.content
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(v, Text | Image | File) for v in value)
    ):
        return tuple(value)
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return (Text(text),)


def _error(call: ToolCall, text: str) -> ToolResult:
    return ToolResult(call.id, call.name, (Text(text),), is_error=True)


class ToolRegistry:
    """The tools of a conversation, by name; ``run`` runs one message's calls concurrently.

    ``timeout`` (seconds, default none) bounds each call; a tool's own ``timeout`` wins.
    """

    def __init__(
        self, tools: Iterable[Tool | ToolFunction] = (), *, timeout: float | None = None
    ) -> None:
        if timeout is not None and timeout <= 0:
            raise SettingError("tool_timeout", timeout, "None or a positive number of seconds")
        self.timeout = timeout
        self._tools: dict[str, Tool] = {}
        # made once per set of tools: read at every model call, compared by identity after
        self._specs: tuple[ToolSpec, ...] | None = None
        for item in tools:
            self.add(item)

    def add(self, item: Tool | ToolFunction) -> Tool:
        """Add a tool (a plain function is wrapped with ``tool``); a name may be used once."""
        made = item if isinstance(item, Tool) else tool(item)
        if made.name in self._tools:
            raise SettingError("tools", made.name, "distinct tool names")
        self._tools[made.name] = made
        self._specs = None
        return made

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, if any."""
        return self._tools.get(name)

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> typing.Iterator[Tool]:
        return iter(self._tools.values())

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """The definitions sent to the model, in the order the tools were added (the same
        tuple until a tool is added)."""
        if self._specs is None:
            self._specs = tuple(t.spec for t in self._tools.values())
        return self._specs

    async def run_one(self, call: ToolCall, context: ToolContext) -> ToolResult:
        """Run one call; every failure becomes an error result (see the module docstring)."""
        found = self._tools.get(call.name)
        if found is None:
            names = ", ".join(sorted(self._tools)) or "none"
            return _error(call, f"Error: there is no tool named {call.name!r} (tools: {names}).")
        arguments = call.parsed_arguments()
        if arguments is None and call.arguments.strip() in ("", "null"):
            arguments = {}
        if not isinstance(arguments, dict):
            return _error(
                call,
                f"Error: the arguments of {call.name} must be a JSON object, got "
                f"{call.arguments[:200]!r}.",
            )
        missing = [
            k
            for k in found.parameters.get("required", ())
            if isinstance(k, str) and k not in arguments
        ]
        if missing:
            return _error(call, f"Error: {call.name} needs the argument(s) {', '.join(missing)}.")
        timeout = found.timeout if found.timeout is not None else self.timeout
        try:
            if timeout is not None:
                value = await asyncio.wait_for(found(arguments, context), timeout)
            else:
                value = await found(arguments, context)
        except asyncio.CancelledError:
            return _error(call, ABORTED_TEXT)
        except TimeoutError:
            return _error(call, f"Error: {call.name} did not finish within {timeout:g} s.")
        except Exception as exc:  # a raising tool is an error result, never a crash
            detail = str(exc).strip()
            text = f"Error: {call.name} raised {type(exc).__name__}" + (
                f": {detail}" if detail else ""
            )
            return _error(call, text)
        return ToolResult(call.id, call.name, result_content(value))

    async def run(
        self,
        calls: Sequence[ToolCall],
        *,
        context: Callable[[ToolCall], ToolContext] | None = None,
        on_task: Callable[[asyncio.Task[ToolResult]], None] | None = None,
        on_result: Callable[[ToolResult], Awaitable[None] | None] | None = None,
    ) -> list[ToolResult]:
        """Run ``calls`` concurrently and return their results in the calls' order.

        ``context`` makes each call's ``ToolContext``; ``on_task`` sees each task as it starts
        (so that ``abort`` can cancel it); ``on_result`` sees each result as it finishes.
        """
        make = context or (lambda c: ToolContext(c.id, c.name))

        async def one(call: ToolCall) -> ToolResult:
            result = await self.run_one(call, make(call))
            if on_result is not None:
                done = on_result(result)
                if inspect.isawaitable(done):
                    await done
            return result

        tasks = [asyncio.ensure_future(one(call)) for call in calls]
        if on_task is not None:
            for task in tasks:
                on_task(task)
        done = await asyncio.gather(*tasks, return_exceptions=True)
        out: list[ToolResult] = []
        for call, value in zip(calls, done, strict=True):
            if isinstance(value, ToolResult):
                out.append(value)
            elif isinstance(value, asyncio.CancelledError):
                out.append(_error(call, ABORTED_TEXT))
            else:
                out.append(_error(call, f"Error: {call.name} failed: {value!r}"))
        return out


# -- clipping big results ------------------------------------------------------------------------


def _cut_head(text: str, chars: int) -> str:
    """The first ``chars`` characters, ending at a line break when one is near."""
    head = text[:chars]
    newline = head.rfind("\n")
    if newline >= chars * 0.8:
        return head[: newline + 1]
    return head


def _cut_tail(text: str, chars: int) -> str:
    """The last ``chars`` characters, starting after a line break when one is near."""
    if chars <= 0:
        return ""
    tail = text[-chars:]
    newline = tail.find("\n")
    if 0 <= newline <= chars * 0.2:
        return tail[newline + 1 :]
    return tail


def _clip_text(text: str, keep: int, tokens: int, limit: int) -> str:
    head = _cut_head(text, math.ceil(keep * 0.6))
    tail = _cut_tail(text, keep - len(head))
    left_out = len(text) - len(head) - len(tail)
    note = (
        f"\n[... {left_out:,} characters left out of the middle of this tool result: it holds "
        f"{len(text):,} characters, ~{format_token_size(tokens)} tokens, over the "
        f"{format_token_size(limit)}-token cap for one result. The whole result is stored; "
        "ask for a narrower part if you need what was left out. ...]\n"
    )
    return head + note + tail


def clip_tool_message(
    message: Message, max_tokens: int, count_tokens: Callable[[Message], int]
) -> Message:
    """``message`` with each tool result's text cut to its head and tail, with a note of what was
    left out, so that the message holds at most about ``max_tokens``; the message itself when it
    already fits. The clipped message keeps its id and gets ``meta["clipped"]`` (``chars``,
    ``tokens``: the original's size)."""
    tokens = count_tokens(message)
    if tokens <= max_tokens or message.role != "tool":
        return message
    total = sum(len(r.text) for r in message.tool_results)
    if total == 0:
        return message
    ratio = max_tokens / tokens
    clipped = message
    for _ in range(8):
        ratio *= 0.9
        parts: list[Any] = []
        for part in message.parts:
            if not isinstance(part, ToolResult) or not part.text:
                parts.append(part)
                continue
            content: list[ResultContent] = []
            for piece in part.content:
                kept = piece
                if isinstance(piece, Text) and len(piece.text) > 200:
                    keep = max(100, int(len(piece.text) * ratio))
                    if keep < len(piece.text):
                        kept = Text(_clip_text(piece.text, keep, tokens, max_tokens))
                content.append(kept)
            parts.append(ToolResult(part.call_id, part.name, tuple(content), part.is_error))
        meta = {**message.meta, "clipped": {"chars": total, "tokens": tokens}}
        clipped = message.replace(parts=tuple(parts), meta=meta)
        if count_tokens(clipped) <= max_tokens:
            break
    return clipped


def load_tools(spec: str | None) -> ToolRegistry:
    """The tools named by ``"module:attribute"`` (a list of tools or functions, or a
    ``ToolRegistry``); an empty registry for ``None``."""
    if not spec:
        return ToolRegistry(())
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise SettingError("tools", spec, '"package.module:attribute"')
    try:
        value = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise SettingError("tools", spec, f"an importable attribute ({exc})") from exc
    if isinstance(value, ToolRegistry):
        return value
    if isinstance(value, Tool) or callable(value):
        value = [value]
    try:
        return ToolRegistry(list(value))
    except TypeError as exc:
        raise SettingError("tools", spec, "a list of tools or a ToolRegistry") from exc
