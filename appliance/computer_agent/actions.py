"""Counting what the agent does to a page: browser actions by kind (the benchmark's ``actions``).

An action is one thing a person does with mouse or keyboard, counted once Playwright has
done it: ``fill`` (a text put in at once: ``fill``, ``clear``, ``keyboard.insert_text``),
``click`` (``click``, ``check``, ``set_checked``, ``dblclick``, ``tap``; the agent's own
button presses), ``select`` (``select_option``) and ``key`` (``press``: one key or chord;
``press_sequentially``/``type``: one per character). Reading the page (``evaluate``,
``bounding_box``…), focusing, blurring and scrolling are not actions. The person's own
clicks and keys in the preview are not counted.

:meth:`Actions.wrap` gives a stand-in for a Playwright ``Page``, ``Frame`` or ``Locator``
that counts through every locator it hands out (``locator``, ``nth``, ``first``,
``keyboard``…), so a widget strategy is counted without knowing it.
"""

from __future__ import annotations

from typing import Any

KINDS = ("fill", "click", "select", "key")
_ACTION = {
    "fill": "fill",
    "clear": "fill",
    "insert_text": "fill",
    "click": "click",
    "dblclick": "click",
    "check": "click",
    "uncheck": "click",
    "set_checked": "click",
    "tap": "click",
    "select_option": "select",
    "press": "key",
    "press_sequentially": "key",
    "type": "key",
}
_CHAINED = frozenset(
    {
        "locator",
        "nth",
        "first",
        "last",
        "filter",
        "frame_locator",
        "keyboard",
        "main_frame",
        "get_by_role",
        "get_by_label",
        "get_by_text",
        "get_by_placeholder",
    }
)


class Actions:
    """Browser actions performed, by kind (:data:`KINDS`)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = dict.fromkeys(KINDS, 0)

    def add(self, kind: str, n: int = 1) -> None:
        """Count ``n`` actions of ``kind`` (one of :data:`KINDS`).

        Raises:
            KeyError: an unknown kind.
        """
        if kind not in self.counts:
            raise KeyError(f"unknown action kind {kind!r} (known: {', '.join(KINDS)})")
        self.counts[kind] += n

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def wrap(self, obj: Any) -> Any:
        """``obj`` (a Playwright Page, Frame, Locator or Keyboard) counting its actions here."""
        return _Counted(obj, self)


def _how_many(method: str, args: tuple, kwargs: dict) -> int:
    if method in ("press_sequentially", "type"):
        text = args[0] if args else kwargs.get("text", "")
        return len(str(text))
    return 1


class _Counted:
    def __init__(self, inner: Any, actions: Actions) -> None:
        self._inner, self._actions = inner, actions

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        kind = _ACTION.get(name)
        if kind is not None and callable(attr):

            async def act(*args: Any, **kwargs: Any) -> Any:
                out = await attr(*args, **kwargs)
                self._actions.add(kind, _how_many(name, args, kwargs))
                return out

            return act
        if name in _CHAINED:
            if callable(attr):
                return lambda *a, **k: _Counted(attr(*a, **k), self._actions)
            return _Counted(attr, self._actions)
        return attr

    def __repr__(self) -> str:
        return f"Counted({self._inner!r})"
