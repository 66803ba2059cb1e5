"""Assembles the deep agent: model, tools, sub-agents, skills, backend, checkpointer.

``build_agent`` lists the stack in order:

1. model — ``model_factory.build_model`` (pitfall 2: context window always declared);
2. tools — every tool in ``ventapp.tools.registry`` (invariant 4: tools emit sources);
3. sub-agents — ``researcher``, whose tools are ``BaseTool`` objects from
   ``get_tools_by_name`` (pitfall 3: a bare function breaks inside ToolNode);
4. skills — ``/skills/`` routed to the repository's ``skills/`` folder, shared and read-only;
5. backend — ``/workspace/`` and ``/conversation_history/`` routed to the running session's
   own folder (:class:`~ventapp.agent.workspace.SessionFilesystemBackend`, spec 002 "文件隔离";
   sub-agents share their parent's), everything else in graph state;
6. permissions — first match wins (pitfall 10): specific allows before the broad write deny,
   so tools write only under ``/workspace/``;
7. middleware — langchain's ``TodoListMiddleware`` (``write_todos``, full profile only; its
   parallel-call check per tool call, :mod:`~ventapp.agent.nodeless_middleware`, as are deepagents'
   dangling-tool-call patch and parent notifier),
   :class:`~ventapp.agent.middleware.PlanModeMiddleware` (plan-first prompt in plan mode),
   :class:`~ventapp.agent.middleware.AnswerLanguageMiddleware` (answer in the browser UI's language),
   :class:`~ventapp.agent.middleware.PreferencesMiddleware` (the user's preferences, every call),
   :class:`~ventapp.agent.middleware.DynamicTimeMiddleware` (the current Beijing time on every call),
   :class:`~ventapp.agent.tool_profiles.LeanToolsMiddleware` when ``TOOLS_PROFILE=lean``;
   human-in-the-loop — ``interrupt_on`` for tools registered with ``requires_approval`` plus
   ``HITL_TOOLS`` (approve / edit / reject), skipped for calls an approval rule covers
   (:func:`~ventapp.agent.turn_context.needs_review`), through
   :class:`~ventapp.agent.approval_middleware.ReasonOnlyApprovalMiddleware` in the main agent and in
   every sub-agent (:func:`_subagent_specs`);
8. checkpointer — passed in, opened by the app's lifespan; thread_id = session_id (invariant 1).

Summarisation is deepagents' own middleware (invariant 5): never add a second one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deepagents import FilesystemPermission, HarnessProfile, create_deep_agent, register_harness_profile
from deepagents.backends import CompositeBackend, FilesystemBackend, StateBackend
from deepagents.middleware.skills import SkillSource
from deepagents.middleware.subagents import GENERAL_PURPOSE_SUBAGENT
from deepagents.middleware.summarization import create_summarization_middleware
from langchain_core.language_models import BaseChatModel
from langgraph.types import Checkpointer

from ventapp.agent.approval_middleware import ReasonOnlyApprovalMiddleware
from ventapp.agent.hitl_names import FRAMEWORK_TOOLS, check_hitl_tools
from ventapp.agent.interrupts import approval_reason
from ventapp.agent.middleware import (
    AnswerLanguageMiddleware,
    DynamicTimeMiddleware,
    PlanModeMiddleware,
    PreferencesMiddleware,
    turn_words_lang,
)
from ventapp.agent.nodeless_middleware import (
    ParentNotifierStandIn,
    RequestPatchToolCallsMiddleware,
    ToolCallTodoListMiddleware,
)
from ventapp.agent.prompts import RESEARCHER_PROMPT, main_system_prompt
from ventapp.agent.skills_middleware import UnpinnedSkillsMiddleware
from ventapp.agent.tool_profiles import LEAN_TOOLS, TOOLS_PROFILES, LeanToolsMiddleware
from ventapp.agent.tool_schemas import summarisation_counters
from ventapp.agent.turn_context import needs_review
from ventapp.agent.workspace import (
    HISTORY_AREA,
    HISTORY_ROUTE,
    SKILLS_DIR,
    WORKSPACE_AREA,
    WORKSPACE_ROUTE,
    SessionFilesystemBackend,
)
from ventapp.config import SettingError, get_settings
from ventapp.tools import registry, run_language, workspace_files
from ventapp.tools.mcp_tools import MODULE_PREFIX

__all__ = ["GENERAL_PURPOSE", "RESEARCHER", "SKILLS_DIR", "build_agent", "middleware_stack", "subagent_names"]

RESEARCHER = "researcher"
GENERAL_PURPOSE = "general-purpose"
"""The sub-agent deepagents adds on its own (same tools as the main agent)."""


def _build_subagents() -> list[dict[str, Any]]:
    return [
        {
            "name": RESEARCHER,
            "description": "Searches the ventilation knowledge base and summarises what the sources say.",
            "system_prompt": RESEARCHER_PROMPT,
            "tools": registry.get_tools_by_name(["knowledge_search"]),
        }
    ]


def _subagent_specs(interrupt_on: dict[str, Any] | None, inherited: Sequence[Any]) -> list[dict[str, Any]]:
    """The sub-agents, each pausing through the reason-only approval middleware when any tool needs one.

    deepagents gives a sub-agent langchain's stock ``HumanInTheLoopMiddleware`` built from the
    top-level ``interrupt_on`` (its model then reads a rejection as "User rejected the tool call …"
    in English). A spec's own ``interrupt_on`` wins over the top-level one, and an empty one builds
    none; its own ``middleware`` holds ours instead. The general-purpose sub-agent deepagents adds by
    itself is then given explicitly (a spec of that name replaces the default), as the default is
    built: deepagents' prompt and description, the main agent's tools, model and skills, and the
    main ``middleware`` that takes one of its default places (``inherited``: our summarisation).

    Args:
        interrupt_on: The main agent's approval config (tool name -> config), or None for none.
        inherited: The main agent's middleware the default general-purpose sub-agent would inherit.

    Returns:
        Sub-agent specs for ``create_deep_agent(subagents=...)``: ours alone when nothing needs
        approval (deepagents then adds its general-purpose one as usual).
    """
    if not interrupt_on:
        return _build_subagents()
    general = {**GENERAL_PURPOSE_SUBAGENT, "skills": SKILL_SOURCES, "middleware": list(inherited)}
    return [
        {
            **spec,
            "interrupt_on": {},
            "middleware": [
                *spec.get("middleware", []),
                ReasonOnlyApprovalMiddleware(interrupt_on=interrupt_on),
            ],
        }
        for spec in (general, *_build_subagents())
    ]


def _mcp_tool_names() -> frozenset[str]:
    return frozenset(spec.name for spec in registry.all_specs() if spec.module.startswith(MODULE_PREFIX))


def shown_tool_names(names: Sequence[str], tools_profile: str) -> list[str]:
    """Of the agent's tool ``names``, those the model is shown under ``tools_profile``.

    ``full`` shows all but ``execute``; ``lean`` only :data:`LEAN_TOOLS` and the MCP servers'
    tools (the others stay registered but never reach a request, :class:`LeanToolsMiddleware`).
    """
    # deepagents keeps `execute` in the tool node but leaves it out of every request when the
    # backend cannot run commands (FilesystemMiddleware's capability gate); ours never can.
    names = [name for name in names if name != "execute"]
    if tools_profile != "lean":
        return names
    shown = set(LEAN_TOOLS) | _mcp_tool_names()
    return [name for name in names if name in shown]


def _main_tools(tools_profile: str) -> list[Any]:
    # Lean leaves our tools out at assembly, not only in the request: deepagents' compaction runs
    # before any user middleware and counts every tool schema it is given against the window, so
    # a 4k-window model would overflow on schemas it is never shown. Its own tools (files, task)
    # are still trimmed by LeanToolsMiddleware. MCP tools stay: the operator listed them.
    tools = registry.all_tools()
    shown = set(shown_tool_names([tool.name for tool in tools], tools_profile))
    return [tool for tool in tools if tool.name in shown]


TODO_PROMPT = (
    "## `write_todos`\n"
    "For a task of three or more steps, keep a todo list with `write_todos`: mark a step in_progress "
    "before you start it and completed as soon as it is done; never call it twice in parallel. Skip it "
    "for simple requests. Write your final answer in a message after the last `write_todos` call."
)
TODO_TOOL_DESCRIPTION = (
    "Create or replace the task list of the current work: items {content, status}, status pending, "
    "in_progress or completed. Use it for tasks of three or more steps; mark the first in_progress at "
    "once and each completed as soon as it is done."
)
"""Our short texts for langchain's TodoListMiddleware (its defaults are ~1,300 tokens)."""


def _planning(tools_profile: str) -> list[Any]:
    # deepagents 0.7.32 no longer puts TodoListMiddleware in its base stack (only some harness
    # profiles add it), so `write_todos` never reached the model although our prompt asks for it.
    # The lean profile shows the model no todo tool (LeanToolsMiddleware), so it gets no prompt either.
    if tools_profile == "lean":
        return []
    return [ToolCallTodoListMiddleware(system_prompt=TODO_PROMPT, tool_description=TODO_TOOL_DESCRIPTION)]


def subagent_names() -> list[str]:
    """The sub-agents ``task`` can start: deepagents' general-purpose one, then ours."""
    return [GENERAL_PURPOSE, *(spec["name"] for spec in _build_subagents())]


def middleware_stack(*, compaction_enabled: bool, tools_profile: str, approvals: bool) -> list[str]:
    """The main agent's middleware names in the order the model call passes through them.

    deepagents 0.7.32 assembles its core stack, then ours (after its last core entry), then
    skills, prompt caching, human-in-the-loop and its content filter (``create_deep_agent``'s
    docstring); a test compares this list with the middleware the built graph really holds.
    deepagents' parent notifier is not in it: its stand-in here has no hooks (it acts only for
    async sub-agents, which this product never starts; :mod:`~ventapp.agent.nodeless_middleware`).

    Args:
        compaction_enabled: ``CTX_COMPACT_ENABLED`` (summarisation in the stack or not).
        tools_profile: ``TOOLS_PROFILE`` (``lean`` adds ``LeanToolsMiddleware``).
        approvals: Whether any tool needs approval (``HumanInTheLoopMiddleware``).
    """
    return [
        "FilesystemMiddleware",
        "SubAgentMiddleware",
        *(["SummarizationMiddleware"] if compaction_enabled else []),
        "PatchToolCallsMiddleware",
        *(["TodoListMiddleware"] if tools_profile != "lean" else []),
        PlanModeMiddleware.__name__,
        AnswerLanguageMiddleware.__name__,
        PreferencesMiddleware.__name__,
        DynamicTimeMiddleware.__name__,
        *([LeanToolsMiddleware.__name__] if tools_profile == "lean" else []),
        "SkillsMiddleware",
        "AnthropicPromptCachingMiddleware",
        *(["HumanInTheLoopMiddleware"] if approvals else []),
        "UnsupportedContentMiddleware",
    ]


def _permissions() -> list[FilesystemPermission]:
    # First match wins (pitfall 10): every specific allow must come before the broad deny at
    # the end, or `deny write /**` would short-circuit it. Reads are allowed by default; the
    # summariser and the large-result offloader write through the backend, not these tools.
    return [
        FilesystemPermission(operations=["read"], paths=["/skills/**"], mode="allow"),
        FilesystemPermission(operations=["write"], paths=["/skills/**"], mode="deny"),
        FilesystemPermission(operations=["write"], paths=[f"{WORKSPACE_ROUTE}**"], mode="allow"),
        FilesystemPermission(operations=["write"], paths=["/**"], mode="deny"),
    ]


def _backend(workspaces_dir: Path) -> CompositeBackend:
    return CompositeBackend(
        default=StateBackend(),
        routes={
            "/skills/": FilesystemBackend(root_dir=SKILLS_DIR, virtual_mode=True),
            WORKSPACE_ROUTE: SessionFilesystemBackend(workspaces_dir, WORKSPACE_AREA),
            HISTORY_ROUTE: SessionFilesystemBackend(workspaces_dir, HISTORY_AREA),
        },
    )


SKILLS_LABEL = "Ventilation"
"""How the prompt names our skill source: deepagents renders ``**{label} Skills**``, and a bare
``/skills/`` path would read ``**Skills Skills**``."""

SKILL_SOURCES: list[SkillSource] = [("/skills/", SKILLS_LABEL)]


def _interrupt_on(hitl_tools: Sequence[str]) -> dict[str, Any] | None:
    check_hitl_tools(hitl_tools, [*(spec.name for spec in registry.all_specs()), *FRAMEWORK_TOOLS])
    names = [*registry.approval_required(), *hitl_tools]
    # Approve, edit (changed arguments) or reject (with a reason the model sees).
    return {
        name: {
            "allowed_decisions": ["approve", "edit", "reject"],
            "description": approval_reason(
                name
            ),  # read as reason_code; clients get it worded in their language
            "when": needs_review,
        }
        for name in names
    } or None


def _summarisation(model: BaseChatModel, backend: CompositeBackend) -> Any:
    """deepagents' own summarisation middleware (its defaults for ``model``), whose token count
    measures each tool's schema once per tool instead of at every model call (issue 18).

    Passed in ``middleware``, it takes the default's place by name (``create_deep_agent``).
    """
    counter, partial_counter = summarisation_counters(model)
    middleware = create_summarization_middleware(model, backend, token_counter=counter)
    # langchain gives a custom counter the partial counts too; its default uses an unscaled one.
    middleware._lc_helper._partial_token_counter = partial_counter
    return middleware


def _exclude_summarisation(model: BaseChatModel) -> None:
    # Invariant 5: compaction is the framework's middleware; switching it off goes through the
    # harness profile (a second SummarizationMiddleware would be rejected as a duplicate). The
    # profile is process-wide and keyed by provider:model, so turning it back on needs a restart.
    name = getattr(model, "model_name", None) or getattr(model, "model", "")
    register_harness_profile(
        f"openai:{name}", HarnessProfile(excluded_middleware=frozenset({"SummarizationMiddleware"}))
    )


def build_agent(
    model: BaseChatModel,
    checkpointer: Checkpointer | None,
    *,
    workspaces_dir: Path | None = None,
    hitl_tools: Sequence[str] = (),
    compaction_enabled: bool = True,
    tools_profile: str = "full",
) -> Any:
    """Build the compiled deep-agent graph.

    Args:
        model: The chat model (see ``model_factory.build_model``).
        checkpointer: Graph-state store; ``None`` only in unit tests.
        workspaces_dir: Root of the per-session folders (default ``get_settings().workspaces_dir``).
        hitl_tools: Extra tool names that need approval (``HITL_TOOLS``), besides the ones
            registered with ``requires_approval``.
        compaction_enabled: ``CTX_COMPACT_ENABLED``; False drops deepagents' summarisation
            (and with it the history archive) through a harness profile for this model.
        tools_profile: ``TOOLS_PROFILE``: ``full`` or ``lean`` (fewer, shorter tool schemas).

    Raises:
        ValueError: A name in ``hitl_tools`` is not a known tool (the message lists them), or
            ``tools_profile`` is not a known profile.

    Returns:
        A compiled LangGraph graph; call ``astream({"messages": [...]}, config)`` with
        ``config = {"configurable": {"thread_id": session_id, "user_name": owner}}`` (input is
        always a dict, pitfall 6; without both keys the workspace tools answer with an error).
    """
    if tools_profile not in TOOLS_PROFILES:
        raise SettingError(f"TOOLS_PROFILE must be one of {', '.join(TOOLS_PROFILES)}, got {tools_profile!r}")
    registry.load_builtin_tools()
    if not compaction_enabled:
        _exclude_summarisation(model)
    backend = _backend(workspaces_dir or get_settings().workspaces_dir)
    # Tools that read uploads and write results (solve_ventilation_network) reach the running
    # session's /workspace/ folder through this hook: tools never import the agent.
    session_workspace = SessionFilesystemBackend(
        workspaces_dir or get_settings().workspaces_dir, WORKSPACE_AREA
    )
    workspace_files.set_workspace_resolver(lambda: session_workspace.cwd)
    run_language.set_language_resolver(turn_words_lang)  # the words of the figures tools draw
    interrupt_on = _interrupt_on(hitl_tools)
    summarisation = [_summarisation(model, backend)] if compaction_enabled else []
    return create_deep_agent(
        model=model,
        tools=_main_tools(tools_profile),
        system_prompt=main_system_prompt(tools_profile),
        subagents=_subagent_specs(interrupt_on, summarisation),
        skills=SKILL_SOURCES,
        backend=backend,
        permissions=_permissions(),
        middleware=[
            # In the places of deepagents' own (same names), without their graph nodes (issue 18).
            ParentNotifierStandIn(),
            RequestPatchToolCallsMiddleware(),
            *summarisation,
            *_planning(tools_profile),
            PlanModeMiddleware(),
            AnswerLanguageMiddleware(),
            PreferencesMiddleware(),
            DynamicTimeMiddleware(),
            *([LeanToolsMiddleware(_mcp_tool_names())] if tools_profile == "lean" else []),
            # Takes the place of deepagents' own approval middleware (same name): the model reads a
            # rejection's reason without langchain's English wrapper. Only when there is one to
            # replace; a new name would land elsewhere in the stack.
            *([ReasonOnlyApprovalMiddleware(interrupt_on=interrupt_on)] if interrupt_on else []),
            # Takes the place of deepagents' own (same name), without a graph node before every
            # model call (issue 18).
            UnpinnedSkillsMiddleware(backend=backend, sources=SKILL_SOURCES),
        ],
        interrupt_on=interrupt_on,
        checkpointer=checkpointer,
        name="ventagent",
    )
