"""API 固定拒绝的中文句子（``refusal.*``，见 :mod:`ventapp.agent.refusals`）。

Ids and placeholders match :mod:`ventapp.i18n.en_refusals`; the API words a refusal's ``message`` in
the request's ``Accept-Language`` (default zh-CN) and keeps the English one as ``detail``.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "refusal.empty_message": "消息是空的，请输入内容后再发送。",
    "refusal.message_too_long": "消息超过 {limit} 个字符。",
    "refusal.user_name.blank": "user_name 不能为空，请填写名字。",
    "refusal.user_name.invisible": "user_name 不能包含控制字符或不可见（零宽）字符。",
    "refusal.user_name.too_long": "user_name 最多 {limit} 个字符。",
    "refusal.user_name.unsafe": "user_name 只能包含文字、数字、空格和 {punctuation}（不能包含 {character}）。",
    "refusal.user_name.no_letter": "user_name 至少要有一个文字或数字。",
    "refusal.user_name.differs": "查询参数和请求体中的 user_name 不一致。",
    "refusal.request_id": "request_id 必须为 1–{limit} 个字符。",
    "refusal.mode": "mode 只能是 'plan' 或 'full'。",
    "refusal.session_not_found": "找不到这个对话：它不存在，或属于其他用户。",
    "refusal.message_not_found": "找不到这条消息。",
    "refusal.session_busy": "这个对话正在回答，请等它完成或先停止它。",
    "refusal.session_busy_resume": "这个对话正在运行，请等它完成。",
    "refusal.session_busy_change": "这个对话正在回答，请先停止它或等它完成，然后重试。",
    "refusal.gate_full_server": "服务器同时进行的回答已达上限（{limit} 个），请稍后再试。",
    "refusal.gate_full_user": "你同时进行的回答已达上限（{limit} 个），请稍后再试。",
    "refusal.duplicate_request": "这个 request_id 已经提交过，不会再次运行。发送新消息请使用新的 request_id。",
    "refusal.no_turn": "这条消息已不在这个对话中。",
    "refusal.no_interrupt": "这个对话中没有等待答复的请求。",
    "refusal.stale_interrupt": "这个审批已过期或已被答复。请刷新查看当前的请求。",
    "refusal.gone": "这个编号之后的帧已不再保留，请改为读取对话历史。（最早保留的编号：{first_seq}）",
    "refusal.starting": "服务器正在启动，请稍后重试。",
    "refusal.json_body": "POST /api/chat 接收 multipart/form-data 字段（message、session_id 等），不接收 JSON。",
    "refusal.several_files": "每条消息只能附带一个文件（这个请求带了多个）。",
    "refusal.file_without_name": "文件部分没有文件名，请以文件上传的方式发送。",
    "refusal.fork_turn_empty": "fork_turn 为空：请发送一条用户消息从 0 开始的位置，或不发送这个字段。",
    "refusal.fork_needs_session": "fork_turn 指向某个对话中的消息：请同时发送那个对话的 session_id。",
    "refusal.prefix_conflict": "#session: 前缀与 session_id 指向不同的对话。",
    "refusal.title_length": "标题必须为 1–{limit} 个字符。",
}
