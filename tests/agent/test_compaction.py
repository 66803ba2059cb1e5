"""Compaction end to end against the scripted model (invariant 5, spec 002 "自动压缩" and "上下文计量")."""

from __future__ import annotations

from pathlib import Path

from tests.scripted_llm.server import ScriptedServer
from ventapp.agent import events as ev
from ventapp.agent.pipeline import ChatRequest, start_chat
from ventapp.agent.runtime import AgentRuntime
from ventapp.agent.sessions import latest_compaction
from ventapp.config import load_settings

MAX_TURNS = 20


async def test_summarisation_is_billed_but_never_counts_as_context(tmp_path: Path) -> None:
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
        try:
            session_id, compacted = None, None
            for turn in range(MAX_TURNS):
                run = await start_chat(
                    runtime, ChatRequest(message=f"long answer please {turn}", session_id=session_id)
                )
                session_id = run.session_id
                out = [event async for event in run.events()]
                done = out[-1]
                assert isinstance(done, ev.Done), out[-1]
                if done.usage.model_calls == 2:
                    compacted = (done, "".join(e.content for e in out if isinstance(e, ev.Token)))
                    break
            assert compacted is not None, "85% of CONTEXT_LIMIT was never reached"
            done, answer = compacted
            summaries = [r for r in llm.requests() if not r.get("tools")]
            assert len(summaries) == 1, "one summarisation call went to the model"
            # Billed: the summary call's input is in the run's total; occupancy is the main call's only.
            assert done.usage.input_tokens > done.usage.context_tokens > 0
            assert "Summary:" not in answer, "the summary's text never enters the main answer"
            archives = list((settings.workspaces_dir).rglob("conversation_history/*.md"))
            assert archives, "the evicted history was archived in the session's folder"
            (event,) = await latest_compaction(runtime, session_id)
            assert event["cutoff_index"] > 0 and event["summary"]
            assert event["file_path"].startswith("/conversation_history/")
            assert any(path.name == event["file_path"].rsplit("/", 1)[-1] for path in archives)
        finally:
            await runtime.close()
