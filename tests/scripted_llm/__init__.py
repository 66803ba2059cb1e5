"""A scripted, deterministic OpenAI-compatible chat server for tests and demos.

Run it standalone with ``python -m tests.scripted_llm --port 8765`` or in-process
with :class:`ScriptedServer`; see :func:`tests.scripted_llm.script.rule_reply` for
how it decides what to answer.
"""

from tests.scripted_llm.replies import ErrorReply, Reply, TextReply, ToolCallSpec, ToolCallsReply
from tests.scripted_llm.script import MODEL_NAME, Script, rule_reply
from tests.scripted_llm.server import ScriptedServer, create_app
from tests.scripted_llm.tokens import count_prompt_tokens
from tests.scripted_llm.wire import DIALECTS, Dialect

__all__ = [
    "DIALECTS",
    "MODEL_NAME",
    "Dialect",
    "ErrorReply",
    "Reply",
    "Script",
    "ScriptedServer",
    "TextReply",
    "ToolCallSpec",
    "ToolCallsReply",
    "count_prompt_tokens",
    "create_app",
    "rule_reply",
]
