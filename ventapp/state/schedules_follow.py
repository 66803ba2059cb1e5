"""The schedules page follows its schedules while it is open (no ↻ needed).

A mixin of :class:`~ventapp.state.schedules_state.SchedulesState`. Statuses move on in the
background (a run ends, a cron time passes and the scheduler starts a run), so while the page is
open it re-reads its list, and the runs table shown, when something can have changed: every
:data:`RUNNING_EVERY_S` while a run shown is running, and just after the earliest next-run time
has passed. In between nothing is read: a background event sleeps until then
(:meth:`FollowSchedules.follow_wait`) and hands over to a normal event
(:meth:`FollowSchedules.follow_tick`) that re-reads only when due. Every event of the page that
reads the list starts a chain when one is needed (:meth:`FollowSchedules._keep_following`: the
page's on_mount may run before the browser's stored name arrives, so not only on load); only the
newest chain lives (``_follow_gen``). Leaving the page (``on_unmount``) ends it at its next wake,
as does a closed tab (its token has no socket any more: :func:`tab_gone`) or nothing left to follow.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import reflex as rx

RUNNING_EVERY_S = 2.0
"""Seconds between re-reads while a run shown is running."""
FIRE_GRACE_S = 2.0
"""Seconds after a next-run time before re-reading: the scheduler's claim of the run lands first."""
LONGEST_SLEEP_S = 60.0
"""A chain wakes at least this often, so a page left without ``on_unmount`` lets it go soon."""


def follow_due(now: float, running: bool, next_runs: Iterable[datetime | None]) -> float:
    """When the page should re-read its schedules (epoch seconds); 0.0 for never.

    Args:
        now: The current time, epoch seconds.
        running: Whether a run shown (a row's last run, or the runs table) is running.
        next_runs: The schedules' next fire times (aware), None for a paused schedule.
    """
    if running:
        return now + RUNNING_EVERY_S
    upcoming = [moment.timestamp() for moment in next_runs if moment is not None]
    return min(upcoming) + FIRE_GRACE_S if upcoming else 0.0


def tab_gone(token: str) -> bool:
    """True when the app runs and the tab ``token`` has no socket any more (closed, or gone
    away): its chain ends. Outside a running app (headless tests) a tab never counts as gone."""
    module = sys.modules.get("ventapp.ventapp")  # the running app's module; never imported here
    namespace = getattr(getattr(module, "app", None), "event_namespace", None)
    return namespace is not None and token not in namespace.token_to_sid


class FollowSchedules(rx.State, mixin=True):
    """Re-reads the schedules page's list while it is open and something can have changed."""

    _follow_gen: int = 0
    """Which chain is the live one; a chain whose number is older ends at its next wake."""
    _follow_at: float = 0.0
    """Epoch seconds of the next re-read (0.0: nothing to follow); set by every reload."""
    _follow_wake: float = 0.0
    """Epoch seconds the live chain wakes at (0.0: no chain)."""

    def _keep_following(self) -> Any:
        """(After a reload, from any event of the page) the chain that re-reads when due: none while
        nothing is to follow; a new one when the next re-read is due before the live chain wakes
        (a run just started, a schedule just created); else the live one goes on."""
        # A chain that overslept its wake by far is gone (cancelled, a worker restarted): replaced.
        alive = self._follow_wake and time.time() < self._follow_wake + LONGEST_SLEEP_S
        if not self._follow_at or (alive and self._follow_wake <= self._follow_at):
            return None
        self._follow_gen += 1
        self._follow_wake = self._follow_at
        return self.__class__.follow_wait(self._follow_gen)

    @rx.event
    def leave_page(self) -> None:
        """The page unmounts: its chain ends at its next wake."""
        self._follow_gen += 1
        self._follow_wake = 0.0

    @rx.event(background=True)
    async def follow_wait(self, gen: int) -> Any:
        """Sleep until the next re-read is due (at most :data:`LONGEST_SLEEP_S`), then tick."""
        async with self:
            if gen != self._follow_gen:
                return None
            if not self._follow_at or tab_gone(self.router.session.client_token):
                self._follow_wake = 0.0
                return None
            wait = min(max(self._follow_at - time.time(), 0.2), LONGEST_SLEEP_S)
            self._follow_wake = time.time() + wait
        await asyncio.sleep(wait)
        return self.__class__.follow_tick(gen)  # self is a StateProxy here: its type is not ours

    @rx.event
    async def follow_tick(self, gen: int) -> Any:
        """Re-read the list (and the runs table shown) when due; then wait for the next one."""
        if gen != self._follow_gen:
            return None
        if self._follow_at and time.time() >= self._follow_at:
            await self._follow_reload()
        return self.__class__.follow_wait(gen)

    async def _follow_reload(self) -> None:
        """Re-read what the page shows, setting ``_follow_at`` again (SchedulesState's)."""
        raise NotImplementedError
