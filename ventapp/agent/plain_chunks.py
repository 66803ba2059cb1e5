"""Streamed Chat Completions whose chunks stay the JSON the server sent (issue 18).

``openai.AsyncOpenAI().chat.completions.create(stream=True)`` walks the request through the
SDK's type annotations before sending it (``async_maybe_transform``: ~4-7 ms of CPU for the
agent's 22 tools and a short conversation, on the path to every first token) and turns each
streamed chunk into a ``ChatCompletionChunk`` model (``construct_type``: ~250-450 µs of CPU
per chunk here), which langchain-openai then dumps straight back into a dict
(``chunk.model_dump()``). For the plain JSON langchain-openai sends and reads that is all
work for nothing, and per token it was the largest single cost of streaming an answer
(``cProfile`` of ``bench.profile_turn``: ~40% of the turn's CPU).

:class:`PlainChunkCompletions` stands in for ``chat.completions`` on a
:class:`~ventapp.agent.openai_compat.CompatChatOpenAI`: a streamed ``create`` posts the
payload as it is, through the same client (base URL, key, headers, retries, timeouts, error
types — ``openai.APIStatusError`` for an HTTP error, ``openai.APIError`` for an ``error``
event in the stream), and the stream yields each event's JSON dict. Everything else — a
call without ``stream``, a ``response_format``, ``with_raw_response`` — goes to the SDK as
before. langchain-openai reads dict chunks itself (it dumps models into dicts first);
:func:`as_dumped` fills in the keys it indexes that ``model_dump`` would have set to None.
"""

from __future__ import annotations

from typing import Any

from openai import AsyncStream
from openai._base_client import make_request_options
from openai.resources.chat.completions import AsyncCompletions

_REQUEST_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")
"""``create`` keywords that are request options, not JSON body fields (the SDK's own split)."""


class PlainChunkCompletions:
    """``AsyncOpenAI().chat.completions`` whose streamed ``create`` yields JSON dicts.

    Args:
        completions: The SDK's resource (``root_async_client.chat.completions``); every
            attribute but ``create`` is its own.
    """

    def __init__(self, completions: AsyncCompletions) -> None:
        self._completions = completions

    def __getattr__(self, name: str) -> Any:
        return getattr(self._completions, name)

    async def create(self, **params: Any) -> Any:
        """``POST /chat/completions``: a streamed call as an ``AsyncStream`` of dicts.

        Args:
            **params: ``create``'s keywords as langchain-openai passes them (the JSON body
                plus ``extra_headers``, ``extra_query``, ``extra_body``, ``timeout``).

        Returns:
            With ``stream=True`` and no ``response_format``: an ``AsyncStream`` (an async
            iterator and context manager) of the server's chunks as dicts. Otherwise what
            the SDK's ``create`` returns.

        Raises:
            openai.APIStatusError: The server answered with an HTTP error (as the SDK raises it).
            openai.APIConnectionError: No connection (after the client's retries).
        """
        if params.get("stream") is not True or "response_format" in params:
            return await self._completions.create(**params)
        options = {key: params.pop(key) for key in _REQUEST_OPTIONS if key in params}
        return await self._completions._post(
            "/chat/completions",
            body=params,
            options=make_request_options(**options),
            cast_to=object,
            stream=True,
            stream_cls=AsyncStream[object],
        )


def as_dumped(chunk: dict[str, Any]) -> dict[str, Any]:
    """A streamed chunk's dict with the keys langchain-openai indexes, as ``model_dump`` gives them.

    ``ChatCompletionChunk.model_dump()`` sets a missing field to None, and langchain-openai
    indexes ``choice["delta"]`` and a tool call's ``["index"]`` and ``["function"]``: a
    server that leaves them out (a finish-only choice without ``delta``) must read as before,
    not raise ``KeyError``. Changes ``chunk`` in place and returns it.
    """
    choices = chunk.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
        delta = choice.setdefault("delta", None)
        if isinstance(delta, dict) and isinstance(delta.get("tool_calls"), list):
            for call in delta["tool_calls"]:
                if isinstance(call, dict):
                    call.setdefault("index", None)
                    call.setdefault("function", None)
    return chunk
