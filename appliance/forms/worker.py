"""What a pool worker does with each task it takes (``appliance worker computer``): the task's
computer agent in a session of its own (:func:`~appliance.forms.session.run_session` with
``agent="computer"``), its preview relayed to the person's page over Redis when the task says
a page shows it (``form_task{preview}``; :mod:`appliance.forms.remote`).

A task whose address this worker's ``browser`` settings refuse (an operator's worker stricter
than the server that offered it) is still taken, so the call does not wait out
``forms.pool_wait_s``: the person hears :data:`REFUSED` and the call ends, and the worker
reports ``task_failed`` with the reason (:class:`~appliance.forms.pool.Worker`).
"""

from __future__ import annotations

from collections.abc import Callable

from appliance.bus import Envelope, open_bus
from appliance.chromium import URLRefused
from appliance.computer_agent.preview import Preview
from appliance.config import Config
from appliance.forms.pool import RunTask
from appliance.forms.session import PageSide, run_session
from appliance.llm.base import LLM
from appliance.protocol import Emit, StatusUpdate, TaskTaken

#: why the form ends when the worker may not open its address (said as "I couldn't complete the form: …")
REFUSED = "the helper that fills forms is not allowed to open that web address"


def computer_task(cfg: Config, llms: Callable[[str], LLM], emit: Emit) -> RunTask:
    """The worker's :data:`~appliance.forms.pool.RunTask` for ``cfg`` (its own ``llm``, ``browser``
    and ``bus``), with the LLM slots of ``llms`` and events to ``emit``.

    The returned coroutine raises URLRefused (after telling the call) for an address the
    worker's browser settings refuse, and BusError when the task's stream cannot be reached."""

    async def run(env: Envelope, worker: str) -> None:
        try:
            url = cfg.browser.check_url(env.payload.url)
        except URLRefused:
            async with open_bus(cfg.bus, session=f"form-{env.task_id}", from_start=True) as bus:
                for payload in (TaskTaken(worker=worker), StatusUpdate(state="failed", message=REFUSED)):
                    await bus.publish(Envelope.new(payload, sender="computer", recipient="*", task_id=env.task_id))
            raise
        await run_session(
            cfg,
            url,
            llms=llms,
            line=None,
            emit=emit,
            task=env.payload.task,
            task_id=env.task_id,
            agent="computer",
            taken_by=worker,
            page_side=PageSide(Preview()) if env.payload.preview else None,  # pictures to the person's page
        )

    return run
