"""Talking to OpenAI-compatible servers that are stricter or looser than OpenAI (``OPENAI_COMPAT``).

langchain-openai writes requests and reads streams the way OpenAI's own API allows.
Self-hosted servers (llama.cpp, llama-cpp-python, Ollama, vLLM) and some gateways
differ in ways that break every chat (issue 19, seen against llama-cpp-python 0.3.36):

1. a message ``content`` that is a list of text parts (deepagents assembles the system
   prompt that way) is refused — the server answers HTTP 500;
2. an assistant message with tool calls goes out with ``content: null``; refused the same way;
3. a streamed tool call repeats its function name in every chunk, and LangChain's chunk
   merging concatenates strings, so ``calculate`` arrives as ``calculatecalculate…`` and the
   call fails as an unknown tool;
4. no usage chunk arrives although ``stream_options.include_usage`` was sent.

:class:`CompatChatOpenAI` fixes 1–3 on the wire when the mode is ``lenient``:
text-only content lists are sent as one string, ``null`` content next to tool calls
is sent as ``""``, and a streamed tool call's name is taken once per call index.
All three are valid OpenAI requests and streams too, so lenient mode is safe against
OpenAI; ``strict`` simply sends and parses exactly what langchain-openai does.
Item 4 is not a wire-format matter and is handled for every provider by the context
meter (:mod:`ventapp.agent.context_meter`): a call without provider usage books the
offline estimate of the request it sent (messages + tool schemas), marked ``estimate``.

``OPENAI_COMPAT=auto`` (the default) is ``strict`` for OpenAI's own endpoint and
``lenient`` for any other base URL.

Reasoning (issue 10), in every mode: DeepSeek, Qwen (DashScope), vLLM, SGLang and llama.cpp
stream the model's reasoning in a non-standard ``reasoning_content`` delta field (newer vLLM
and OpenRouter call it ``reasoning``), which langchain-openai drops (the warning at the top
of ``langchain_openai/chat_models/base.py``). :class:`CompatChatOpenAI` keeps it as
``additional_kwargs["reasoning_content"]`` on each streamed chunk and on a non-streamed
message, where the kernel turns it into ``thinking_token`` frames; reasoning usage is in
the provider's ``completion_tokens`` (``completion_tokens_details.reasoning_tokens`` reaches
``usage_metadata["output_token_details"]["reasoning"]``). With ``echo_reasoning`` (DeepSeek's
thinking mode, which requires it during a tool-call loop) an assistant message with tool calls
is sent back with its ``reasoning_content``. Subclassing rather than ``langchain-deepseek``:
one class serves every provider above, and the compatibility fixes stay in one place.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI, StreamChunkTimeoutError
from pydantic import PrivateAttr, model_validator

from ventapp.agent.plain_chunks import PlainChunkCompletions, as_dumped
from ventapp.agent.tool_schemas import openai_tool, plain_tool

logger = logging.getLogger(__name__)

T = TypeVar("T")

CompatMode = Literal["strict", "lenient"]

OPENAI_HOSTS = frozenset({"api.openai.com"})
"""Hosts that speak OpenAI's own dialect: ``auto`` keeps requests untouched for them."""


def resolve_compat(setting: str, base_url: str) -> CompatMode:
    """The effective mode for ``OPENAI_COMPAT`` and ``OPENAI_BASE_URL``.

    Args:
        setting: ``auto`` | ``strict`` | ``lenient``.
        base_url: The configured endpoint; empty means OpenAI's own.

    Returns:
        ``strict`` or ``lenient`` (``auto`` is lenient for any host but OpenAI's).
    """
    if setting in ("strict", "lenient"):
        return setting  # type: ignore[return-value]  # narrowed by the membership test
    host = (urlsplit(base_url).hostname or "").lower() if base_url else "api.openai.com"
    return "strict" if host in OPENAI_HOSTS else "lenient"


def _text_only(content: list[Any]) -> str | None:
    """The joined text of a list of text parts, or None if any part is not text."""
    texts: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            return None
    # OpenAI reads consecutive text parts as one text; deepagents' parts carry their own
    # separators, and a blank line keeps two sections apart if one does not.
    joined = ""
    for text in texts:
        if joined and not (joined.endswith("\n") or text.startswith("\n")):
            joined += "\n\n"
        joined += text
    return joined


def lenient_message(message: dict[str, Any]) -> dict[str, Any]:
    """One Chat Completions message dict rewritten for servers stricter than OpenAI.

    Args:
        message: ``{"role": ..., "content": str | list | None, ...}`` as langchain-openai built it.

    Returns:
        A copy whose ``content`` is a string when it was a list of text parts (lists with
        images or other parts are left as they are) or ``None``.
    """
    content = message.get("content")
    if isinstance(content, list):
        text = _text_only(content)
        if text is not None:
            return {**message, "content": text}
    elif content is None and "content" in message:
        return {**message, "content": ""}
    return message


class ToolNameDeduper:
    """Keeps one function name per streamed tool-call index within one response.

    OpenAI sends a call's name once, in its first chunk; some servers send it in every
    chunk, and merging chunks concatenates strings. Later names for an index already
    named are dropped, so the merged call has the name exactly once. The same holds for
    the legacy ``function_call`` delta that llama-cpp-python sends alongside ``tool_calls``.
    """

    def __init__(self) -> None:
        self._named: set[int] = set()
        self._function_named = False

    def fix(self, chunk: ChatGenerationChunk) -> ChatGenerationChunk:
        """Return ``chunk`` with repeated tool-call names removed (the same object if none were)."""
        message = chunk.message
        if not isinstance(message, AIMessageChunk):
            return chunk
        extra = message.additional_kwargs
        function_call = extra.get("function_call")
        changed = False
        if isinstance(function_call, dict) and function_call.get("name"):
            if self._function_named:
                extra = {**extra, "function_call": {**function_call, "name": None}}
                changed = True
            self._function_named = True
        fixed = []
        for part in message.tool_call_chunks:
            index = part.get("index")
            if part.get("name") and index is not None:
                if index in self._named:
                    part = {**part, "name": None}
                    changed = True
                else:
                    self._named.add(index)
            fixed.append(part)
        if not changed:
            return chunk
        # A new chunk rather than a copy: tool_calls are derived from tool_call_chunks on init.
        rebuilt = AIMessageChunk(
            content=message.content,
            additional_kwargs=extra,
            response_metadata=message.response_metadata,
            id=message.id,
            usage_metadata=message.usage_metadata,
            tool_call_chunks=fixed,
            chunk_position=message.chunk_position,
        )
        return ChatGenerationChunk(message=rebuilt, generation_info=chunk.generation_info)


REASONING_KEY = "reasoning_content"
"""``additional_kwargs`` key of the reasoning text (the name DeepSeek, Qwen and llama.cpp use)."""
_REASONING_FIELDS = ("reasoning_content", "reasoning")


def reasoning_of(delta: Any) -> str:
    """The reasoning text of a Chat Completions ``delta`` or ``message`` dict ("" when none)."""
    if not isinstance(delta, dict):
        return ""
    for name in _REASONING_FIELDS:
        value = delta.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


HANDOVER_S = 0.002
"""Longest a model stream parses a burst of chunks before it lets their tokens go out (seconds)."""

FIRST_WORDS_CHUNKS = 16
"""Chunks after the first that says something that still hand the loop over one by one."""


class _StallWatch:
    """One timer per stream that cancels the waiting task once a single wait lasts ``timeout_s``.

    The timer wakes at most once per ``timeout_s`` while the stream flows: per chunk, the
    stream only notes when its wait started (no timer, task or future per chunk).
    """

    __slots__ = ("fired", "handle", "loop", "since", "task", "timeout_s")

    def __init__(self, timeout_s: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.timeout_s = timeout_s
        self.since: float | None = None
        self.task: asyncio.Task[Any] | None = None
        self.fired = False
        self.handle = self.loop.call_at(self.loop.time() + timeout_s, self._check)

    def waiting(self) -> None:
        """A wait for the next chunk starts now, on the current task."""
        self.since = self.loop.time()
        self.task = asyncio.current_task()

    def _check(self) -> None:
        since, now = self.since, self.loop.time()
        # A millisecond of slack: a loop's timers may fire up to one clock tick early.
        if since is not None and self.task is not None and now - since >= self.timeout_s - 0.001:
            self.fired = True
            self.task.cancel()
            return
        self.handle = self.loop.call_at((now if since is None else since) + self.timeout_s, self._check)

    def took_the_task(self) -> bool:
        """After an exception out of a wait: True if it is this watch's cancellation (then withdrawn)."""
        return self.fired and self.task is not None and self.task.uncancel() == 0


async def chunks_within(
    source: AsyncIterator[T], timeout_s: float | None, model: str | None
) -> AsyncIterator[T]:
    """``source``'s items, each of which must come within ``timeout_s`` seconds of asking for it.

    langchain-openai's ``stream_chunk_timeout`` (default 120 s, ``LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S``)
    wraps every chunk's wait in ``asyncio.wait_for``, which on Python 3.11 starts a task per
    chunk: a quarter of the CPU of streaming a bare graph here (``bench.profile_turn --target
    ceiling``, issue 18). This keeps the same rule and raises the same error with one timer per
    stream (:class:`_StallWatch`), cancelling the waiting task the way ``asyncio.timeout`` does.

    Args:
        source: The stream (generation chunks).
        timeout_s: Seconds allowed for each wait; ``None`` or ``<= 0``: no bound.
        model: The model's name, for the error.

    Raises:
        StreamChunkTimeoutError: A wait lasted ``timeout_s`` seconds (a ``TimeoutError``, as
            langchain-openai raises it). The source is closed.
    """
    if not timeout_s or timeout_s <= 0:
        async for item in source:
            yield item
        return
    received = 0
    iterator = aiter(source)
    watch = _StallWatch(timeout_s)
    try:
        while True:
            watch.waiting()
            try:
                item = await anext(iterator)
            except StopAsyncIteration:
                return
            except BaseException as exc:
                if not watch.took_the_task():
                    raise
                logger.warning(
                    "model stream silent for %s s after %d chunks (%s)", timeout_s, received, model
                )
                raise StreamChunkTimeoutError(timeout_s, model_name=model, chunks_received=received) from exc
            finally:
                watch.since = None
            received += 1
            yield item
    finally:
        watch.handle.cancel()
        await iterator.aclose()


def _says_something(chunk: ChatGenerationChunk) -> bool:
    message = chunk.message
    return bool(chunk.text or getattr(message, "tool_call_chunks", None) or message.additional_kwargs)


async def handing_over(source: AsyncIterator[ChatGenerationChunk]) -> AsyncIterator[ChatGenerationChunk]:
    """``source``'s chunks, letting the event loop run between them often enough for streaming.

    A fast local server's answer arrives in one socket read and parsing it never waits, so a
    stream that never hands the loop over holds every token until the whole answer is parsed
    (first token +60 ms in ``bench.bench_load``; langchain-openai's per-chunk ``wait_for`` handed
    over as a side effect). Here the loop is handed over (``asyncio.sleep(0)``) after every chunk
    until :data:`FIRST_WORDS_CHUNKS` chunks after the first that says something (text, reasoning,
    a tool call) — the first words pass several tasks on their way out (the graph's stream, the
    run's queue, its log, the transport), one per pass of the loop — and then whenever
    :data:`HANDOVER_S` has passed since the last time: a lone chunk after a wait for the network
    goes out at once, and the rest of a burst every couple of milliseconds, together (the run's
    queue joins their tokens into one frame, issue 18).
    """
    handed, early = 0.0, FIRST_WORDS_CHUNKS
    async for chunk in source:
        yield chunk
        if early == FIRST_WORDS_CHUNKS and not _says_something(chunk):
            pass  # nothing said yet: every chunk hands over
        elif early > 0:
            early -= 1
        elif time.monotonic() - handed < HANDOVER_S:
            continue
        await asyncio.sleep(0)
        handed = time.monotonic()


class CompatChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` with the ``OPENAI_COMPAT`` fixes for self-hosted servers, and reasoning kept.

    The per-chunk stream timeout (``stream_chunk_timeout``) is applied by :func:`chunks_within`
    rather than by langchain-openai, with the same value.

    Attributes:
        compat: ``strict`` (requests and streams exactly as langchain-openai handles them) or
            ``lenient`` (string content, ``""`` for null content, one name per streamed call).
        echo_reasoning: Send ``reasoning_content`` back with an assistant message's tool calls
            (DeepSeek's thinking mode refuses a tool-call loop without it).
    """

    compat: CompatMode = "strict"
    echo_reasoning: bool = False
    _chunk_timeout_s: float | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        """Take over the per-chunk timeout: langchain-openai's own wrapper then passes chunks through."""
        super().model_post_init(context)
        self._chunk_timeout_s = self.stream_chunk_timeout
        self.stream_chunk_timeout = None

    @model_validator(mode="after")
    def _plain_chunks(self) -> CompatChatOpenAI:
        """Stream chunks as the server's JSON dicts (:mod:`ventapp.agent.plain_chunks`).

        After langchain-openai's own validator, which makes ``async_client``.
        """
        if self.async_client is not None and not isinstance(self.async_client, PlainChunkCompletions):
            self.async_client = PlainChunkCompletions(self.async_client)
        return self

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        strict: bool | None = None,
        response_format: Any = None,
        **kwargs: Any,
    ) -> Any:
        """``ChatOpenAI.bind_tools`` with each plain tool's schema converted once per tool object.

        The agent binds its tools before every model call; converting them was ~3 ms of CPU per
        call (:mod:`ventapp.agent.tool_schemas`). A response format forces ``strict`` inside the
        parent, so those calls are left to it whole.
        """
        if response_format is None:
            tools = [openai_tool(tool, strict) if plain_tool(tool) else tool for tool in tools]
        return super().bind_tools(tools, strict=strict, response_format=response_format, **kwargs)

    def _get_request_payload(
        self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if self.compat == "lenient" and isinstance(payload.get("messages"), list):
            payload["messages"] = [
                lenient_message(m) if isinstance(m, dict) else m for m in payload["messages"]
            ]
        if self.echo_reasoning and isinstance(payload.get("messages"), list):
            self._echo_reasoning(input_, payload["messages"])
        return payload

    def _echo_reasoning(self, input_: Any, sent: list[Any]) -> None:
        messages = self._convert_input(input_).to_messages()
        if len(messages) != len(sent):
            return  # not one dict per message: nothing can be matched safely
        for message, wire in zip(messages, sent, strict=True):
            reasoning = (
                message.additional_kwargs.get(REASONING_KEY) if isinstance(message, AIMessage) else None
            )
            if reasoning and isinstance(wire, dict) and wire.get("tool_calls"):
                wire[REASONING_KEY] = reasoning

    def _convert_chunk_to_generation_chunk(
        self, chunk: dict, default_chunk_class: type, base_generation_info: dict | None
    ) -> ChatGenerationChunk | None:
        generation = super()._convert_chunk_to_generation_chunk(
            as_dumped(chunk), default_chunk_class, base_generation_info
        )
        choices = chunk.get("choices") or chunk.get("chunk", {}).get("choices") or []
        if generation is not None and choices and isinstance(generation.message, AIMessageChunk):
            reasoning = reasoning_of(choices[0].get("delta"))
            if reasoning:
                generation.message.additional_kwargs[REASONING_KEY] = reasoning
        return generation

    def _create_chat_result(self, response: Any, generation_info: dict | None = None) -> ChatResult:
        result = super()._create_chat_result(response, generation_info)
        data = response if isinstance(response, dict) else response.model_dump(warnings=False)
        for generation, choice in zip(result.generations, data.get("choices") or [], strict=False):
            reasoning = reasoning_of(choice.get("message"))
            if reasoning:
                generation.message.additional_kwargs[REASONING_KEY] = reasoning
        return result

    # The name fix must happen before the chunk reaches the callbacks (LangGraph's "messages"
    # stream is fed from on_llm_new_token), so the parent streams without a run manager and
    # the callback is raised here for the fixed chunk — the parent does nothing else with it.
    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        if self.compat == "strict":
            yield from super()._stream(messages, stop, run_manager, **kwargs)
            return
        names = ToolNameDeduper()
        for chunk in super()._stream(messages, stop, None, **kwargs):
            chunk = names.fix(chunk)
            if run_manager:
                run_manager.on_llm_new_token(
                    chunk.text, chunk=chunk, logprobs=(chunk.generation_info or {}).get("logprobs")
                )
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        if self.compat == "strict":
            source = super()._astream(messages, stop, run_manager, **kwargs)
            async for chunk in handing_over(chunks_within(source, self._chunk_timeout_s, self.model_name)):
                yield chunk
            return
        names = ToolNameDeduper()
        source = super()._astream(messages, stop, None, **kwargs)
        async for chunk in handing_over(
            self._fixed(chunks_within(source, self._chunk_timeout_s, self.model_name), run_manager, names)
        ):
            yield chunk

    async def _fixed(
        self,
        source: AsyncIterator[ChatGenerationChunk],
        run_manager: AsyncCallbackManagerForLLMRun | None,
        names: ToolNameDeduper,
    ) -> AsyncIterator[ChatGenerationChunk]:
        # Fixed before the callbacks see them: LangGraph's "messages" stream is fed by on_llm_new_token.
        async for chunk in source:
            chunk = names.fix(chunk)
            if run_manager:
                await run_manager.on_llm_new_token(
                    chunk.text, chunk=chunk, logprobs=(chunk.generation_info or {}).get("logprobs")
                )
            yield chunk
