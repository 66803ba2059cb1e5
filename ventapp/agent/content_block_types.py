"""langchain-core's list of multimodal block types, worked out once per process (issue 18).

Before every model call langchain-core's ``_normalize_messages`` asks
``is_data_content_block`` of each block of each message whose content is a list, and that
asks ``_get_data_content_block_types()``, which re-derives the same constant tuple
(``("image", "video", "audio", "text-plain", "file")`` in langchain-core 1.x) from the type
hints of the ``DataContentBlock`` union on every call: ``typing.get_type_hints`` of five
TypedDicts, ~0.2 ms of CPU a block, on the path to the first token — and more the longer the
conversation (every listed block of the history, every call). The union is fixed when the
module is imported, so its answer cannot change while the process runs: :func:`install`
memoises it where ``is_data_content_block`` looks it up.

Private name used: ``langchain_core.messages.content._get_data_content_block_types`` (a
module-level function, looked up as a global at each call). If a langchain-core upgrade
renames it, :func:`install` leaves everything as it is and says so in the log
(tests/agent/test_content_block_types.py fails then, to bring it here).
"""

from __future__ import annotations

import functools
import logging

from langchain_core.messages import content

logger = logging.getLogger(__name__)

_NAME = "_get_data_content_block_types"


def install() -> bool:
    """Memoise langchain-core's block-type list for this process (idempotent).

    Returns:
        True when the memoised function is in place; False (and a warning in the log) when
        langchain-core no longer has the function this wraps.
    """
    original = getattr(content, _NAME, None)
    if original is None:
        logger.warning("langchain-core has no %s any more: block types are derived per call", _NAME)
        return False
    if not hasattr(original, "cache_info"):
        setattr(content, _NAME, functools.cache(original))
    return True
