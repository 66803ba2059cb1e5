"""Chinese first, one language at a time, in a real browser: the browser's language picks it, the
header's switch changes it (and every server-worded text follows), the choice is remembered, and the
scripted model answers in it."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser import watch_csp
from tests.e2e.reflex_app import ReflexApp
from tests.scripted_llm.server import ScriptedServer
from tests.support import app_env

TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def app(llm: ScriptedServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReflexApp]:
    data_dir = tmp_path_factory.mktemp("reflex-language")
    env = {**app_env(data_dir, llm.base_url), "DEMO_MODE": "1"}
    with ReflexApp(env, data_dir / "reflex.log") as running:
        yield running


def _open(browser: Browser, url: str, locale: str, user: str) -> Page:
    tab = browser.new_context(locale=locale, viewport={"width": 1280, "height": 900}).new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    tab.goto(url)
    tab.locator("#user-name").fill(user)
    tab.click("#user-name-save")
    expect(tab.locator("#user-chip")).to_contain_text(user)
    expect(tab.get_by_text("scripted-demo").first).to_be_visible()
    return tab


def _switch(page: Page, label: str) -> None:
    page.click("#lang-switch")
    page.get_by_role("option", name=label).click()


def test_a_chinese_browser_gets_chinese_and_the_model_answers_in_it(browser: Browser, app: ReflexApp) -> None:
    page = _open(browser, app.url, "zh-CN", "语言甲")
    violations = watch_csp(page)

    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    expect(page.locator("#new-chat")).to_contain_text("新对话")
    expect(page.locator("#chat-input")).to_have_attribute("placeholder", "询问风量、风机、瓦斯限值……")
    expect(page.locator(".demo-badge")).to_contain_text("脚本演示模型")

    page.fill("#chat-input", "请计算 (12+8)*3")
    page.click("#send")
    answer = page.locator(".msg-assistant").last
    expect(answer).to_contain_text("结果是 60。", timeout=TIMEOUT_MS)
    card = answer.locator(".tool-card")
    expect(card).to_contain_text("计算器")
    expect(card).to_contain_text("完成")
    footer = answer.locator(".usage-footer")
    expect(footer).to_contain_text(re.compile(r"\d+(\.\d)?秒 · [\d,]+ token（输入 [\d,]+ · 输出 \d+）"))
    expect(page.locator(".session-item").first).to_contain_text(
        re.compile(r"\d{4}/\d{1,2}/\d{1,2} \d\d:\d\d")
    )

    # The switch relabels the page at once, re-words what the server wrote, and sets <html lang>.
    _switch(page, "English")
    expect(page.locator("#new-chat")).to_contain_text("New chat")
    expect(card).to_contain_text("Calculator")
    expect(card).to_contain_text("Done")
    expect(footer).to_contain_text(re.compile(r"\d+(\.\d)? sec · [\d,]+ tokens \([\d,]+ in · \d+ out\)"))
    assert page.evaluate("document.documentElement.lang") == "en"

    # Remembered in this browser: a reload stays English, and the next answer is in English.
    page.reload()
    expect(page.locator("#new-chat")).to_contain_text("New chat")
    assert page.evaluate("document.documentElement.lang") == "en"
    page.fill("#chat-input", "please calculate (2+3)*4")
    page.click("#send")
    expect(page.locator(".msg-assistant").last).to_contain_text("The result is 20.", timeout=TIMEOUT_MS)

    # The other pages follow the same choice.
    page.goto(f"{app.url}/usage")
    expect(page.locator("#usage-today")).to_contain_text("Today")
    _switch(page, "中文")
    expect(page.locator("#usage-today")).to_contain_text("今天")
    expect(page.locator("#usage-today")).to_contain_text(re.compile(r"\d{4}年\d{1,2}月\d{1,2}日"))
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    page.context.close()
    assert violations == []


def test_an_english_browser_gets_english_and_other_languages_get_chinese(
    browser: Browser, app: ReflexApp
) -> None:
    english = _open(browser, app.url, "en-GB", "lang-b")
    assert english.evaluate("document.documentElement.lang") == "en"
    expect(english.locator("#new-chat")).to_contain_text("New chat")
    english.context.close()

    german = browser.new_context(locale="de-DE").new_page()
    german.goto(f"{app.url}/schedules")
    expect(german.locator("#lang-switch")).to_contain_text("中文")
    assert german.evaluate("document.documentElement.lang") == "zh-CN"
    german.context.close()


def test_a_knowledge_document_comes_in_the_ui_language_and_links_to_the_other(
    browser: Browser, app: ReflexApp
) -> None:
    """A citation's page was English for everyone; now the UI's language, ``?lang=`` or the link picks."""
    page = _open(browser, app.url, "zh-CN", "语言丙")
    page.goto(f"{app.url}/kb/gas-limits")
    title, document, link = (
        page.locator(".kb-title"),
        page.locator(".kb-document"),
        page.locator("#kb-other-lang"),
    )
    expect(title).to_have_text("矿井气体浓度限值：瓦斯、氧气与有毒有害气体")
    expect(document).to_have_attribute("lang", "zh-CN")
    expect(page.locator(".kb-body")).to_contain_text("《煤矿安全规程》")
    expect(link).to_contain_text("查看英文原文")
    expect(link).to_have_attribute("href", "/kb/gas-limits?lang=en")

    link.click()  # the English original, the page still Chinese
    expect(title).to_contain_text("Mine Gas Limits")
    expect(document).to_have_attribute("lang", "en")
    expect(link).to_contain_text("查看中文版")

    page.goto(f"{app.url}/kb/natural-ventilation")  # no ?lang: the UI's language again
    expect(title).to_have_text("自然风压")
    _switch(page, "English")
    expect(title).to_contain_text("Natural Ventilation Pressure")
    expect(link).to_contain_text("Read the Chinese version")
    page.goto(f"{app.url}/kb/natural-ventilation?lang=zh-CN")  # a shared link names its version
    expect(title).to_have_text("自然风压")
    expect(link).to_contain_text("Read the English original")
    page.context.close()


def test_a_message_cut_at_the_length_limit_says_so_in_either_language(
    browser: Browser, app: ReflexApp
) -> None:
    """try18: the box's ``maxlength`` cut a pasted 100,000+ character text in silence (the API words it)."""
    page = _open(browser, app.url, "zh-CN", "长消息")
    box, notice = page.locator("#chat-input"), page.locator("#composer-full")
    expect(notice).to_be_hidden()
    box.focus()
    page.keyboard.insert_text("风" * 100_010)  # as a paste arrives: through the browser's input path
    assert box.evaluate("el => el.value.length") == 100_000
    expect(notice).to_be_visible()
    expect(notice).to_have_text("消息最多 100,000 个字符，已到上限；超出的部分不会输入进来。")
    expect(notice).to_have_attribute("role", "status")
    _switch(page, "English")
    expect(notice).to_have_text(
        "A message holds at most 100,000 characters: this one is at the limit, and anything more is not taken in."
    )
    box.press("End")
    box.press("Backspace")
    expect(notice).to_be_hidden()
    page.keyboard.insert_text("风")
    expect(notice).to_be_visible()
    page.click("#send")  # a full message is allowed; the emptied box no longer says it is full
    expect(box).to_have_value("")
    expect(notice).to_be_hidden()
