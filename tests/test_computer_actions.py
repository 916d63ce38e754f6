"""Counting browser actions through stand-ins for Playwright objects."""

import pytest

from appliance.computer_agent.actions import Actions


class FakeLocator:
    def __init__(self):
        self.done = []

    async def fill(self, value, **kw):
        self.done.append(("fill", value))

    async def click(self, **kw):
        self.done.append(("click",))

    async def press_sequentially(self, text, **kw):
        self.done.append(("keys", text))

    async def select_option(self, **kw):
        self.done.append(("select",))

    async def evaluate(self, js, **kw):
        return 1

    def locator(self, selector):
        return FakeLocator()

    @property
    def first(self):
        return self


async def test_actions_are_counted_by_kind_through_chained_locators():
    actions, loc = Actions(), FakeLocator()
    counted = actions.wrap(loc)
    await counted.click()
    await counted.fill("")
    await counted.press_sequentially("Manch")
    await counted.first.select_option(value="GB")
    await counted.locator("li").click()
    assert await counted.evaluate("e => 1") == 1  # reading is not an action
    assert actions.counts == {"fill": 1, "click": 2, "select": 1, "key": 5} and actions.total == 9
    assert loc.done[:3] == [("click",), ("fill", ""), ("keys", "Manch")]
    with pytest.raises(KeyError, match="unknown action kind"):
        actions.add("scroll")
