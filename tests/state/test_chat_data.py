"""Reading a session back for the chat page (``ventapp.state.chat_data``) against a real runtime."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import HumanMessage, RemoveMessage

from tests.scripted_llm.server import ScriptedServer
from ventapp.agent import events as ev
from ventapp.agent.pipeline import ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime, set_runtime
from ventapp.agent.sessions import latest_compaction
from ventapp.config import load_settings
from ventapp.state.chat_data import load_session

MAX_TURNS = 20
UPLOAD = "/workspace/uploads/fan.csv"


async def test_attachment_chips_survive_compaction(tmp_path: Path) -> None:
    """Found by trying it: a turn compaction summarised came back without its chip after a reload."""
    with ScriptedServer() as llm:
        settings = load_settings(
            {
                "DEEP_AGENT_ENV_PRIORITY": "none",
                "DATA_DIR": str(tmp_path),
                "OPENAI_BASE_URL": llm.base_url,
                "OPENAI_API_KEY": "x",
                "MODEL_NAME": "scripted-demo",
                "CONTEXT_LIMIT": "9000",
            }
        )
        runtime = await AgentRuntime.open(settings)
        set_runtime(runtime)
        try:
            run = await start_chat(
                runtime, ChatRequest(message="long answer please, fan data", attachments=[UPLOAD])
            )
            session_id = run.session_id
            [event async for event in run.events()]
            for turn in range(MAX_TURNS):
                run = await start_chat(
                    runtime, ChatRequest(message=f"long answer please {turn}", session_id=session_id)
                )
                out = [event async for event in run.events()]
                assert isinstance(out[-1], ev.Done), out[-1]
                if await latest_compaction(runtime, session_id):
                    break
            assert await latest_compaction(runtime, session_id), "85% of CONTEXT_LIMIT was never reached"

            loaded = await load_session(session_id, "default", "en")

            assert loaded is not None
            questions = [message for message in loaded[0] if message.role == "user"]
            assert questions[0].attachments == [UPLOAD], "the compacted turn keeps its chip"
            assert all(message.attachments == [] for message in questions[1:])
        finally:
            set_runtime(None)
            await runtime.close()


async def test_chips_come_from_the_stored_message_not_the_graph_state(tmp_path: Path) -> None:
    """A compaction that rewrites the graph's history (LangChain's summariser removes the turns it
    condenses) or a lost checkpoint must not take the chips of sent messages with it."""
    with ScriptedServer() as llm:
        settings = load_settings(
            {
                "DEEP_AGENT_ENV_PRIORITY": "none",
                "DATA_DIR": str(tmp_path),
                "OPENAI_BASE_URL": llm.base_url,
                "OPENAI_API_KEY": "x",
                "MODEL_NAME": "scripted-demo",
            }
        )
        runtime = await AgentRuntime.open(settings)
        set_runtime(runtime)
        try:
            run = await start_chat(runtime, ChatRequest(message="read my fan data", attachments=[UPLOAD]))
            [event async for event in run.events()]
            config = {"configurable": {"thread_id": run.session_id}}
            state = await runtime.agent.aget_state(config)
            human = next(m for m in state.values["messages"] if isinstance(m, HumanMessage))
            await runtime.agent.aupdate_state(config, {"messages": [RemoveMessage(id=str(human.id))]})

            loaded = await load_session(run.session_id, "default", "en")

            assert loaded is not None
            assert [m.attachments for m in loaded[0] if m.role == "user"] == [[UPLOAD]]
        finally:
            set_runtime(None)
            await runtime.close()
