"""Fixtures of the headless ChatState tests, from :mod:`tests.state.chat_harness`.

``client`` is one browser tab on the real Reflex event processor (in this folder it stands in for
the HTTP ``client`` of ``tests/conftest.py``, which no state test uses); ``pipeline`` replaces the
run pipeline with fakes yielding real contract events; ``resume`` does the same for resuming a
paused run.
"""

from tests.state.chat_harness import client, pipeline, resume

__all__ = ["client", "pipeline", "resume"]
