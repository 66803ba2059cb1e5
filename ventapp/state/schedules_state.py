"""The schedules page's state, and the hand-off badge (runs waiting for a person).

Reads and changes go through :class:`~ventapp.scheduler.service.ScheduleService` (never
HTTP to our own API); the user is the browser-stored ``ventagent_user_name`` the chat
page uses. Every sentence shown comes from :mod:`ventapp.i18n` in ``lang`` (the browser's
``LangState``, read on load and on a switch), refusals (:class:`ChatRejected`) too
(:func:`~ventapp.scheduler.rules.refusal_text`; their ``message`` is the API's English).
Times are shown in ``SCHEDULER_TZ``, formatted per language.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import reflex as rx

from ventapp.agent.pipeline import ChatRejected
from ventapp.db.schedule_models import Schedule
from ventapp.db.schedule_store import RunRecord
from ventapp.i18n import DEFAULT_LANG, formats, resolve_lang, t, tn
from ventapp.scheduler.cron import describe
from ventapp.scheduler.cron_problems import CronInvalid, cron_message
from ventapp.scheduler.rules import ScheduleRejected, refusal_text
from ventapp.scheduler.run_errors import run_error_text
from ventapp.scheduler.service import ScheduleService, get_service
from ventapp.state.lang_state import ui_lang
from ventapp.state.schedules_follow import RUNNING_EVERY_S, FollowSchedules, follow_due
from ventapp.state.ui_identity import came_from, login_gone, to_login, user_name_var

logger = logging.getLogger(__name__)


@dataclass
class ScheduleView:
    """One row of the schedules table (texts already in the page's language)."""

    id: str = ""
    name: str = ""
    prompt: str = ""
    cron: str = ""
    mode: str = "full"
    description: str = ""
    next_run: str = ""
    last_status: str = ""
    last_label: str = ""
    enabled: bool = True


@dataclass
class RunView:
    """One row of a schedule's runs table; ``href`` opens the run's session in the chat."""

    id: str = ""
    scheduled_for: str = ""
    trigger: str = ""
    status: str = ""
    label: str = ""
    tokens: str = ""
    error: str = ""
    href: str = ""


def _service() -> ScheduleService | None:
    try:
        return get_service()
    except RuntimeError:
        return None


def local_time(moment: datetime | None, service: ScheduleService, lang: str = DEFAULT_LANG) -> str:
    """``2026/12/1 08:00`` in ``SCHEDULER_TZ``, written per ``lang`` (stored times are naive UTC); ``""`` for None."""
    return formats.date_time(moment, lang, service.tz)


def schedule_view(
    schedule: Schedule, last: RunRecord | None, service: ScheduleService, lang: str
) -> ScheduleView:
    """A schedule as its table row shows it."""
    status = last.status if last is not None else "none"
    return ScheduleView(
        id=schedule.id,
        name=schedule.name,
        prompt=schedule.prompt,
        cron=schedule.cron,
        mode=schedule.mode,
        description=describe(schedule.cron, lang),
        next_run=local_time(service.next_run_at(schedule), service, lang) or t("schedules.paused", lang),
        last_status=status,
        last_label=t(f"status.{status}", lang),
        enabled=schedule.enabled,
    )


def run_view(record: RunRecord, service: ScheduleService, lang: str) -> RunView:
    """A run as its table row shows it."""
    tokens = record.input_tokens + record.output_tokens
    return RunView(
        id=record.id,
        scheduled_for=local_time(record.scheduled_for, service, lang),
        trigger=t(f"trigger.{record.trigger}", lang),
        status=record.status,
        label=t(f"status.{record.status}", lang),
        tokens=formats.number(tokens, lang) if tokens else "",
        error=run_error_text(record.error_code, record.error, lang),
        href=f"/?session={record.session_id}" if record.session_id else "",
    )


class HandoffState(rx.State):
    """Scheduled runs waiting for this user (header badge, sidebar marks)."""

    user_name: str = user_name_var()
    waiting_count: int = 0
    waiting_sessions: list[str] = []

    @rx.event
    async def refresh_runs(self) -> None:
        """Re-read the runs table on show (its schedule is the server's, never a stale client value)."""
        service = _service()
        if service is not None and self.runs_for:
            await self._load_runs(service, self.runs_for)

    @rx.event
    async def refresh(self) -> None:
        """Re-read which of the user's scheduled runs wait for an answer."""
        service = _service()
        if service is None or not self.user_name:
            return
        try:
            waiting = await service.waiting(self.user_name)
        except Exception:
            logger.exception("reading the waiting runs of %r failed", self.user_name)
            return
        sessions = sorted({record.session_id for record in waiting if record.session_id})
        if self.waiting_count != len(waiting):
            self.waiting_count = len(waiting)
        if self.waiting_sessions != sessions:
            self.waiting_sessions = sessions


class SchedulesState(FollowSchedules, rx.State):
    """State of the schedules page (route ``/schedules``)."""

    user_name: str = user_name_var()
    lang: str = DEFAULT_LANG
    loaded: bool = False
    problem: str = ""
    notice: str = ""
    notice_refused: bool = False
    """The notice is a refusal (shown as an error), not news such as "started"."""
    timezone: str = ""
    schedules: list[ScheduleView] = []
    waiting_count: int = 0

    runs_for: str = ""
    runs_name: str = ""
    runs: list[RunView] = []

    delete_id: str = ""
    """The schedule the delete confirmation asks about (``""``: closed)."""
    delete_name: str = ""

    form_open: bool = False
    form_id: str = ""
    form_name: str = ""
    form_prompt: str = ""
    form_cron: str = "0 8 * * *"
    form_mode: str = "full"
    form_enabled: bool = True
    form_error: str = ""
    cron_error: str = ""
    cron_description: str = ""
    cron_preview: list[str] = []

    @rx.var
    def intro(self) -> str:
        """What the page is for, and the zone its times are in."""
        return t("schedules.intro", self.lang, tz=self.timezone)

    @rx.var
    def cron_help(self) -> str:
        """How the form's expression is read."""
        return t("form.cron_help", self.lang, tz=self.timezone)

    @rx.var
    def runs_title(self) -> str:
        """Heading of the runs table."""
        return t("runs.title", self.lang, name=self.runs_name)

    @rx.var
    def waiting_banner(self) -> str:
        """The hand-off notice: how many scheduled runs wait for this person."""
        return tn("schedules.waiting_banner", self.waiting_count, self.lang)

    async def _reload(self, service: ScheduleService) -> None:
        if self.runs_for:  # first: the "last run" read after it is never older than the runs table
            await self._load_runs(service, self.runs_for)
        schedules = await service.list_for(self.user_name)
        last = await service.last_runs(schedules)
        self.schedules = [schedule_view(s, last.get(s.id), service, self.lang) for s in schedules]
        self.waiting_count = len(await service.waiting(self.user_name))
        running = any(row.last_status == "running" for row in self.schedules) or any(
            run.status == "running" for run in self.runs
        )
        self._follow_at = follow_due(time.time(), running, (service.next_run_at(s) for s in schedules))

    async def _follow_reload(self) -> None:
        service = _service()
        if service is None or not self.user_name or self.problem:
            self._follow_at = 0.0
            return
        try:
            await self._reload(service)
        except Exception:  # the next tick tries again; the page keeps what it shows
            logger.exception("following the schedules of %r failed", self.user_name)
            self._follow_at = time.time() + 10 * RUNNING_EVERY_S

    async def _load_runs(self, service: ScheduleService, schedule_id: str) -> None:
        try:
            records = await service.runs(schedule_id, self.user_name)
        except ChatRejected:
            self.runs_for, self.runs = "", []
            return
        self.runs_for = schedule_id
        self.runs = [run_view(record, service, self.lang) for record in records]

    @rx.event
    async def load_page(self) -> Any:
        """On mount: the user's schedules, the waiting count, the zone times are shown in; then
        the page follows them while open (:class:`~ventapp.state.schedules_follow.FollowSchedules`)."""
        service = _service()
        self.lang = await ui_lang(self)
        self.loaded, self.problem = True, ""
        if service is None:
            self.problem = t("schedules.not_ready", self.lang)
            return None
        self.timezone = str(service.tz)
        if not self.user_name:
            return None
        try:
            await self._reload(service)
        except Exception:
            logger.exception("reading the schedules of %r failed", self.user_name)
            self.problem = t("schedules.load_failed", self.lang)
            return None
        return self._keep_following()

    @rx.event
    async def relocalise(self, lang: str) -> Any:
        """After the header's language switch: re-word the table, the runs and an open form."""
        self.lang = resolve_lang(lang)
        self.notice = ""
        service = _service()
        if service is not None and self.user_name and not self.problem:
            await self._reload(service)
        if self.form_open:
            self._check_cron(self.form_cron)
        return self._keep_following()

    async def _signed_out(self) -> bool:
        """True, and this state cleared, when the tab's login ended on the server (the caller
        returns :func:`~ventapp.state.ui_identity.to_login`; nothing is done as the user)."""
        if not await login_gone(self, self.user_name):
            return False
        self.reset()
        return True

    async def _act(self, action: Any) -> bool:
        """Run one service call; a refusal becomes the notice. True when it succeeded."""
        service = _service()
        if service is None:
            self.notice, self.notice_refused = t("schedules.not_ready", self.lang), True
            return False
        try:
            await action(service)
        except ChatRejected as refused:
            self.notice, self.notice_refused = refusal_text(refused, self.lang), True
            return False
        await self._reload(service)
        return True

    @rx.event
    async def toggle_enabled(self, schedule_id: str, enabled: bool) -> Any:
        """The row's switch: pause or resume."""
        if await self._signed_out():
            return to_login(came_from(self))
        self.notice = ""
        await self._act(lambda s: s.set_enabled(schedule_id, self.user_name, enabled))
        return self._keep_following()

    @rx.event
    async def run_now(self, schedule_id: str) -> Any:
        """Start an execution now; its row appears in the runs table at once."""
        if await self._signed_out():
            return to_login(came_from(self))
        self.notice = ""
        self.runs_for = schedule_id
        self.runs_name = next((s.name for s in self.schedules if s.id == schedule_id), "")
        if await self._act(lambda s: s.run_now(schedule_id, self.user_name)):
            self.notice, self.notice_refused = t("schedules.started", self.lang), False
        return self._keep_following()

    @rx.event
    def ask_delete(self, schedule_id: str) -> None:
        """The row's trash button: open the confirmation naming the schedule (nothing deleted yet)."""
        row = next((s for s in self.schedules if s.id == schedule_id), None)
        if row is not None:
            self.delete_id, self.delete_name = row.id, row.name

    @rx.event
    def cancel_delete(self) -> None:
        """The confirmation's Cancel: the schedule stays."""
        self.delete_id = ""

    @rx.event
    def on_delete_open_change(self, is_open: bool) -> None:
        """Escape closes the confirmation; the schedule stays."""
        if not is_open:
            self.delete_id = ""

    @rx.event
    async def confirm_delete(self) -> Any:
        """Delete the schedule in the confirmation, with its run records; the conversations its
        runs created stay (:meth:`ScheduleService.delete`)."""
        schedule_id, self.delete_id = self.delete_id, ""
        if await self._signed_out():  # first: a login that ended is told so, whatever was asked
            return to_login(came_from(self))
        if not schedule_id:
            return None
        self.notice = ""
        if self.runs_for == schedule_id:
            self.runs_for, self.runs = "", []
        await self._act(lambda s: s.delete(schedule_id, self.user_name))
        return self._keep_following()

    @rx.event
    async def show_runs(self, schedule_id: str) -> None:
        """Show (or refresh) one schedule's runs table."""
        service = _service()
        if service is None:
            return
        self.runs_name = next((s.name for s in self.schedules if s.id == schedule_id), "")
        await self._load_runs(service, schedule_id)

    @rx.event
    async def refresh_runs(self) -> Any:
        """Re-read the runs table, and the schedules' "last run" with it, so the two never disagree."""
        service = _service()
        if service is not None and self.user_name and self.runs_for:
            await self._reload(service)
        return self._keep_following()

    @rx.event
    async def refresh(self) -> Any:
        """Re-read everything (statuses move on in the background)."""
        service = _service()
        if service is not None and self.user_name:
            await self._reload(service)
        return self._keep_following()

    # --- the form --------------------------------------------------------------------------

    def _check_cron(self, cron: str) -> None:
        service = _service()
        if service is None:
            return
        try:
            times = service.preview(cron)
        except CronInvalid as problem:
            self.cron_error = cron_message(problem, self.lang)
            self.cron_description = ""
            self.cron_preview = []
            return
        self.cron_error = ""
        self.cron_description = describe(cron, self.lang)
        self.cron_preview = [local_time(moment, service, self.lang) for moment in times]

    def _refused_save(self, cron: str, refused: ChatRejected) -> None:
        """Show a refused save once: a bad expression in the cron callout, in the page's
        language (the refusal's ``message`` is the API's English); anything else under the form,
        in the page's language too."""
        problem = refused.cron_problem if isinstance(refused, ScheduleRejected) else None
        if problem is None:
            self.form_error = refusal_text(refused, self.lang)
            return
        # What was submitted may be newer than the debounced check's last look at the field.
        self.form_cron, self.form_error = cron, ""
        self.cron_error = cron_message(problem, self.lang)
        self.cron_description = ""
        self.cron_preview = []

    @rx.event
    def open_new(self) -> None:
        """Open the form for a new schedule."""
        self.form_id, self.form_name, self.form_prompt = "", "", ""
        self.form_cron, self.form_mode, self.form_enabled, self.form_error = "0 8 * * *", "full", True, ""
        self._check_cron(self.form_cron)
        self.form_open = True

    @rx.event
    def open_edit(self, schedule_id: str) -> None:
        """Open the form on an existing schedule."""
        row = next((s for s in self.schedules if s.id == schedule_id), None)
        if row is None:
            return
        self.form_id, self.form_name, self.form_prompt = row.id, row.name, row.prompt
        self.form_cron, self.form_mode, self.form_enabled, self.form_error = (
            row.cron,
            row.mode,
            row.enabled,
            "",
        )
        self._check_cron(row.cron)
        self.form_open = True

    @rx.event
    def on_form_open_change(self, is_open: bool) -> None:
        """The dialog's open state (Escape, overlay click, Cancel)."""
        self.form_open = is_open

    @rx.event
    def type_cron(self, value: str) -> None:
        """Validate the expression as it is typed and preview its next five fire times."""
        self.form_cron = value
        self._check_cron(value)

    @rx.event
    def pick_mode(self, value: str) -> None:
        """The form's mode select (``full`` | ``plan``)."""
        self.form_mode = value

    @rx.event
    def switch_enabled(self, value: bool) -> None:
        """The form's enabled switch."""
        self.form_enabled = value

    @rx.event
    async def save(self, form_data: dict[str, Any]) -> Any:
        """Create or update from the form (fields ``name``, ``prompt``, ``cron``)."""
        if await self._signed_out():
            return to_login(came_from(self))
        fields = {
            "name": str(form_data.get("name") or ""),
            "prompt": str(form_data.get("prompt") or ""),
            "cron": str(form_data.get("cron") or self.form_cron),
            "mode": self.form_mode,
            "enabled": self.form_enabled,
        }
        service = _service()
        if service is None:
            self.form_error = t("schedules.not_ready", self.lang)
            return None
        try:
            if self.form_id:
                await service.update(self.form_id, self.user_name, fields)
            else:
                await service.create(self.user_name, fields, self.lang)  # its runs' figures: this page's
        except ChatRejected as refused:
            self._refused_save(fields["cron"], refused)
            return None
        self.form_open, self.form_error = False, ""
        await self._reload(service)
        return self._keep_following()
