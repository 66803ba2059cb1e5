"""The name dialog (AUTH_MODE=none): a name saved before the rule existed (tester's item 4a)."""

from __future__ import annotations

import pytest

from tests.state.chat_harness import Client


@pytest.mark.parametrize(
    ("saved", "said"),
    [
        ("ops/admin", "不能包含“/”"),
        ("a\u200bb", "不可见（零宽）字符"),
    ],
)
async def test_a_saved_name_the_rule_refuses_is_asked_again_saying_why(
    client: Client,
    saved: str,
    said: str,
) -> None:
    (await client.state()).user_name = saved  # what this browser kept before the rule

    await client.fire("load_page")

    state = await client.state()
    assert state.user_name == "", "the dialog asks again: the name is refused on every route"
    assert (
        f"此浏览器保存的名字“{saved}”已不再被接受" in state.name_error_zh
    )  # name_error_en says it in English
    assert said in state.name_error_zh, "the rule's own sentence, naming what is refused"
    assert "rename-user" in state.name_error_en, "where the conversations under the old name went"


async def test_a_saved_name_that_only_needs_normalising_is_kept_silently(client: Client) -> None:
    (await client.state()).user_name = " Li \t Wei "

    await client.fire("load_page")

    state = await client.state()
    assert (state.user_name, state.name_error_en, state.name_error_zh) == ("Li Wei", "", "")


async def test_the_saved_name_explanation_is_ready_in_both_languages(client: Client) -> None:
    """It stayed in the page-load language after a switch (the dialog picks one by the browser's
    language, which a switch in another tab changes too: the open dialog covers this tab's header)."""
    (await client.state()).user_name = "ops/admin"
    await client.fire("load_page")

    state = await client.state()
    assert "此浏览器保存的名字“ops/admin”已不再被接受" in state.name_error_zh and "“/”" in state.name_error_zh
    english = state.name_error_en
    assert english.startswith("The name this browser saved, “ops/admin”, is no longer accepted: ")
    assert "“/”" in english and "rename-user" in english and "此" not in english


async def test_a_typed_name_refusal_is_ready_in_both_languages_too(client: Client) -> None:
    await client.fire("save_user_name", form_data={"user_name": "ops/admin"})
    state = await client.state()
    assert "不能包含“/”" in state.name_error_zh
    assert "“/”" in state.name_error_en and "不" not in state.name_error_en

    await client.fire("open_name_dialog")
    state = await client.state()
    assert (state.name_error_en, state.name_error_zh) == ("", "")
