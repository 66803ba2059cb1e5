"""The start-up heap kept out of the garbage collector's full passes (issue 18).

A started server holds ~300,000 container objects that live as long as it does: modules,
classes, the Reflex app and its pages, the compiled agent graph, the tool schemas. CPython's
cyclic collector walks every one of them in each full (generation 2) collection, which the
allocations of streaming answers trigger every few seconds under load: measured here, each
took ~170 ms with the event loop stopped, every stream stalled at once (20 concurrent answers:
4–6 ms of every turn). ``gc.freeze()`` moves the objects alive at that moment to a permanent
generation the collector no longer walks; after it a full pass took ~4 ms. Objects freed by
their reference count are still freed; only reference cycles among the frozen objects would
never be reclaimed, and those are the app's own long-lived structures.

Source: Python documentation, ``gc.freeze`` (https://docs.python.org/3/library/gc.html#gc.freeze),
added for this use by CPython issue 31558 (bpo-31558, "gc.freeze() - an API to mark objects as
uncollectable").
"""

from __future__ import annotations

import gc


def freeze_start_up_heap() -> int:
    """Collect once, then move every object still tracked to the permanent generation.

    Call it once, when the server has started (agent built, app loaded) and before it serves.

    Returns:
        How many objects the permanent generation holds now.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
