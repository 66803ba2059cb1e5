"""Message catalogues for user-facing text, keyed by stable ids (zh-CN and en).

Components ask for a message by id (:func:`t`) and never hold the sentence. English is
the default for now, to match the rest of the current UI; a later change adds the
language switch (zh-CN first). Every id exists in both catalogues (a test checks it),
and placeholders use ``str.format`` fields such as ``{count}``.
"""

from __future__ import annotations

DEFAULT_LANG = "en"
LANGS = ("zh-CN", "en")

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "nav.schedules": "Schedules",
        "chat.live_elsewhere": "This conversation is answering in another tab or client, so your message "
        "was not sent (it is back in the box). Follow that answer here, then send yours.",
        "chat.follow_live": "Follow the answer",
        "nav.chat": "Chat",
        "nav.waiting": "{count} scheduled run(s) wait for you",
        "sidebar.waiting": "A scheduled run waits for your answer here",
        "schedules.title": "Schedules",
        "schedules.intro": "The agent runs these prompts on their own, each time in a new conversation. "
        "Times are in {tz}.",
        "schedules.needs_name": "Schedules belong to a user. Open the chat and set your name first.",
        "schedules.not_ready": "The server is still starting. Reload the page in a moment.",
        "schedules.load_failed": "Schedules could not be read. The error has been logged.",
        "schedules.empty": "No schedules yet. Create one to run a prompt on a timetable.",
        "schedules.new": "New schedule",
        "schedules.col.name": "Name",
        "schedules.col.cron": "When",
        "schedules.col.next": "Next run",
        "schedules.col.last": "Last run",
        "schedules.col.enabled": "On",
        "schedules.col.actions": "Actions",
        "schedules.waiting_banner": "{count} scheduled run(s) are waiting for your answer. "
        "Open their conversation from the runs below.",
        "schedules.run_now": "Run now",
        "schedules.edit": "Edit",
        "schedules.delete": "Delete",
        "schedules.runs": "Runs",
        "schedules.never": "—",
        "schedules.paused": "paused",
        "schedules.started": "Started. The run goes on in the background; its conversation is in the runs list.",
        "form.title_new": "New schedule",
        "form.title_edit": "Edit schedule",
        "form.name": "Name",
        "form.name_placeholder": "Morning gas report",
        "form.prompt": "Prompt",
        "form.prompt_placeholder": "Read the overnight gas readings in /workspace/uploads and report anything over the limit.",
        "form.cron": "Cron expression (minute hour day month weekday)",
        "form.cron_placeholder": "0 8 * * *",
        "form.cron_help": "Five fields, read in {tz}. 0 and 7 are Sunday.",
        "form.preview": "Next five runs",
        "form.mode": "Mode",
        "form.mode_full": "Run directly (full)",
        "form.mode_plan": "Plan first, for approval (plan)",
        "form.enabled": "Enabled",
        "form.save": "Save",
        "form.cancel": "Cancel",
        "form.cron_invalid": "Not valid ({field}): {reason}",
        "runs.title": "Runs of {name}",
        "runs.empty": "No runs yet.",
        "runs.col.when": "Scheduled for",
        "runs.col.trigger": "Trigger",
        "runs.col.status": "Status",
        "runs.col.tokens": "Tokens",
        "runs.col.session": "Conversation",
        "runs.open": "Open",
        "trigger.cron": "schedule",
        "trigger.manual": "run now",
        "status.running": "running",
        "status.waiting_input": "waiting for you",
        "status.success": "done",
        "status.failed": "failed",
        "status.cancelled": "stopped",
        "status.interrupted": "interrupted",
        "status.skipped": "skipped (still running)",
        "status.missed": "missed",
        "status.rejected": "refused",
        "status.none": "not run yet",
    },
    "zh-CN": {
        "nav.schedules": "定时任务",
        "chat.live_elsewhere": "这个对话正在另一个标签页或客户端中回答，所以你的消息没有发出（已放回输入框）。"
        "先在这里跟随那个回答，再发送你的消息。",
        "chat.follow_live": "跟随回答",
        "nav.chat": "对话",
        "nav.waiting": "有 {count} 个定时运行在等你处理",
        "sidebar.waiting": "这里有一个定时运行在等你答复",
        "schedules.title": "定时任务",
        "schedules.intro": "智能体会按时自动运行这些提示词，每次都在新的会话中进行。时间均为 {tz}。",
        "schedules.needs_name": "定时任务归属于用户。请先打开对话页设置你的名字。",
        "schedules.not_ready": "服务器仍在启动，请稍后刷新页面。",
        "schedules.load_failed": "无法读取定时任务，错误已记录到日志。",
        "schedules.empty": "还没有定时任务。新建一个，按时间表运行提示词。",
        "schedules.new": "新建定时任务",
        "schedules.col.name": "名称",
        "schedules.col.cron": "时间",
        "schedules.col.next": "下次运行",
        "schedules.col.last": "上次运行",
        "schedules.col.enabled": "启用",
        "schedules.col.actions": "操作",
        "schedules.waiting_banner": "有 {count} 个定时运行在等待你的答复，请在下方运行记录中打开其会话。",
        "schedules.run_now": "立即执行",
        "schedules.edit": "编辑",
        "schedules.delete": "删除",
        "schedules.runs": "执行记录",
        "schedules.never": "—",
        "schedules.paused": "已暂停",
        "schedules.started": "已开始，运行在后台继续；其会话见执行记录。",
        "form.title_new": "新建定时任务",
        "form.title_edit": "编辑定时任务",
        "form.name": "名称",
        "form.name_placeholder": "早间瓦斯报告",
        "form.prompt": "提示词",
        "form.prompt_placeholder": "读取 /workspace/uploads 中的夜间瓦斯读数，报告所有超限数据。",
        "form.cron": "cron 表达式（分 时 日 月 周）",
        "form.cron_placeholder": "0 8 * * *",
        "form.cron_help": "五个字段，按 {tz} 计算。0 和 7 表示星期日。",
        "form.preview": "接下来五次运行",
        "form.mode": "模式",
        "form.mode_full": "直接执行（full）",
        "form.mode_plan": "先出计划待批（plan）",
        "form.enabled": "启用",
        "form.save": "保存",
        "form.cancel": "取消",
        "form.cron_invalid": "无效（{field}）：{reason}",
        "runs.title": "{name} 的执行记录",
        "runs.empty": "还没有执行记录。",
        "runs.col.when": "计划时间",
        "runs.col.trigger": "触发方式",
        "runs.col.status": "状态",
        "runs.col.tokens": "Token",
        "runs.col.session": "会话",
        "runs.open": "打开",
        "trigger.cron": "定时",
        "trigger.manual": "立即执行",
        "status.running": "运行中",
        "status.waiting_input": "等待你处理",
        "status.success": "完成",
        "status.failed": "失败",
        "status.cancelled": "已停止",
        "status.interrupted": "已中断",
        "status.skipped": "已跳过（上次仍在运行）",
        "status.missed": "已错过",
        "status.rejected": "被拒绝",
        "status.none": "尚未运行",
    },
}


def t(key: str, lang: str = DEFAULT_LANG, **fields: object) -> str:
    """The message ``key`` in ``lang`` (falls back to English, then to the key itself).

    Args:
        key: A stable message id, e.g. ``"schedules.run_now"``.
        lang: ``"zh-CN"`` or ``"en"``; anything else reads as English.
        **fields: Values for the message's ``{placeholders}``.
    """
    catalogue = MESSAGES.get(lang, MESSAGES[DEFAULT_LANG])
    text = catalogue.get(key) or MESSAGES[DEFAULT_LANG].get(key) or key
    return text.format(**fields) if fields else text
