"""deepagents' and langchain's default middleware, doing the same work without graph nodes (issue 18).

langchain's ``create_agent`` turns every ``before_agent``, ``before_model``, ``after_model`` and
``after_agent`` hook into a node of its own: a superstep with its task, checkpoint and channel
writes, whether or not the hook has anything to do. Measured with ``bench.profile_turn --target
graph``, the two such nodes a turn of the product had beyond the bare deepagents graph cost about
as much CPU as a tenth of the turn. The classes here keep each library middleware's behaviour where
this product needs it and move it into the model or tool call it belongs to (``wrap_model_call``,
``wrap_tool_call``: a function call, no node), or drop a hook that can never act here.

Each takes the library class's ``name``, so ``create_deep_agent`` puts it in the library one's
place in the stack (deepagents' ``_apply_custom_middleware``), and ``middleware_stack`` still
names what the graph holds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from deepagents.middleware.patch_tool_calls import PatchToolCallsMiddleware
from langchain.agents.middleware import TodoListMiddleware
from langchain.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from ventapp.agent.request_history import has_adjacent_user_turns, results_in_call_order, user_turns_merged

PARALLEL_TODOS_ERROR = (
    "Error: The `write_todos` tool should never be called multiple times in parallel. Please call it "
    "only once per model invocation to update the todo list."
)
"""langchain's own answer to parallel ``write_todos`` calls (``TodoListMiddleware.after_model``)."""

ToolResult = ToolMessage | Command[Any]


class ParentNotifierStandIn(AgentMiddleware):
    """Takes the place of deepagents' ``_ParentNotifierMiddleware``, with no hooks.

    deepagents attaches that middleware to every deep agent so that one started as an *async*
    sub-agent (``start_async_task``, served by LangGraph's Agent Server) wakes the agent that
    started it; it acts only when the run's config carries that parent. This product starts no
    async sub-agents (its ``task`` tool runs sub-agents inline), so the hook never acts, yet it
    costs an ``after_agent`` node on every turn and a wrapper around every model call.
    """

    @property
    def name(self) -> str:
        """The library middleware's name, so this one takes its place."""
        return "_ParentNotifierMiddleware"


class RequestPatchToolCallsMiddleware(PatchToolCallsMiddleware):
    """deepagents' dangling-tool-call patch, applied to each model request instead of the state.

    A run stopped between a model's tool calls and their results leaves an ``AIMessage`` whose
    calls have no ``ToolMessage``; OpenAI-compatible servers refuse such a history. The library
    writes the missing results into the state in a ``before_agent`` node on every turn. Here the
    same results (the library's own wording, from its ``before_agent``) are added to the messages
    of the model request that would carry the gap, and the stored state keeps the gap: every
    later request is patched the same way. No node, and nothing rewritten in the checkpoint.

    The request's history is also shaped for strict chat templates (:mod:`~ventapp.agent.request_history`):
    tool results in the order of their calls, and no two user messages in a row (a failed run's
    question followed by the next one).
    """

    before_agent = AgentMiddleware.before_agent  # type: ignore[assignment]
    abefore_agent = AgentMiddleware.abefore_agent  # type: ignore[assignment]

    @property
    def name(self) -> str:
        """The library middleware's name, so this one takes its place."""
        return PatchToolCallsMiddleware.__name__

    def _patched(self, request: ModelRequest) -> ModelRequest:
        messages = request.messages
        update = PatchToolCallsMiddleware.before_agent(self, {"messages": messages}, None)  # type: ignore[arg-type, typeddict-item]
        if update is not None:
            # The library's update is [RemoveMessage(all), *patched]: the patched history, whose
            # added results come right after the call, ahead of a stopped run's kept ones.
            messages = results_in_call_order(update["messages"][1:])
        if has_adjacent_user_turns(messages):
            messages = user_turns_merged(messages)
        return request if messages is request.messages else request.override(messages=list(messages))

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Send ``request`` with every unanswered tool call answered by an error result."""
        return handler(self._patched(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        """Async :meth:`wrap_model_call`."""
        return await handler(self._patched(request))


def _parallel_todos(request: ToolCallRequest) -> ToolMessage | None:
    """The error result for a ``write_todos`` call made alongside another one, else None."""
    call = request.tool_call
    if call["name"] != "write_todos":
        return None
    messages = (request.state or {}).get("messages", []) if isinstance(request.state, dict) else []
    asked = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if asked is None or sum(other["name"] == "write_todos" for other in asked.tool_calls) < 2:
        return None
    return ToolMessage(
        content=PARALLEL_TODOS_ERROR, tool_call_id=call["id"], name="write_todos", status="error"
    )


class ToolCallTodoListMiddleware(TodoListMiddleware):
    """langchain's ``TodoListMiddleware`` whose one-``write_todos``-per-call rule is checked per tool call.

    The library checks every model answer in an ``after_model`` node (a superstep after *each*
    model call) and, when it holds several ``write_todos`` calls, answers each of them with an
    error instead of running them. Here the same error answers each such call where it would run
    (``wrap_tool_call``, only on turns that call tools); prompts and the tool are the library's.
    """

    after_model = AgentMiddleware.after_model  # type: ignore[assignment]
    aafter_model = AgentMiddleware.aafter_model  # type: ignore[assignment]

    @property
    def name(self) -> str:
        """The library middleware's name, so this one takes its place."""
        return TodoListMiddleware.__name__

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        """Run the call, or answer a parallel ``write_todos`` with langchain's error."""
        return _parallel_todos(request) or handler(request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolResult]]
    ) -> ToolResult:
        """Async :meth:`wrap_tool_call`."""
        return _parallel_todos(request) or await handler(request)
