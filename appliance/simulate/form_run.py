"""A simulated form-filling run: the demo site (or any URL), the appliance's form mode, and
a simulated person who joins it over WebRTC (:func:`simulate_form`), or the same session with
the person as a scripted typist reading and typing text, no audio (:func:`simulate_form_text`:
it measures the computer agent alone). Used by ``appliance simulate form``, ``appliance
bench form`` and the tests."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from appliance.config import Config
from appliance.demo.profile import Profile
from appliance.demo.site import DemoSite
from appliance.demo.spec import spec_for_url
from appliance.errors import ApplianceError
from appliance.forms.mode import FormFeature
from appliance.forms.session import SessionResult, run_session
from appliance.protocol.line import SayOutcome
from appliance.simulate.call import PAUSE_MS, TURN_GAP_MS, PersonOnCall, Screen, asks
from appliance.simulate.person import SimulatedPerson
from appliance.simulate.report import fetch_submissions, fields_filled, report
from appliance.simulate.stages import stages
from appliance.simulate.webrtc_client import WebRTCClient
from appliance.voice.asr import load_asr
from appliance.voice.piper_synth import VoiceStyle

log = logging.getLogger(__name__)


@dataclass
class RunOutput:
    """The ``simulate form`` JSON (``report``), the session itself (its ``folder``: the
    appliance's recording), the person's recording folder, and the seconds of audio each
    side sent over the call (``bot``: as received by the person)."""

    report: dict
    session: SessionResult
    person_folder: Path | None
    audio_s: dict[str, float]


async def simulate_form(
    cfg: Config,
    runtime,
    url: str,
    profile: Profile,
    *,
    autonomous: bool = False,
    site: DemoSite | None = None,
    stop: asyncio.Event | None = None,
    progress: Callable[[str], None] | None = None,
) -> RunOutput:
    """Run one simulated session on ``url`` and report it.

    The appliance's voice server (form mode) runs in this process on 127.0.0.1 with
    ``runtime`` (a started :class:`~appliance.voice.runtime.VoiceRuntime` sized with
    :meth:`~appliance.config.Config.for_forms`: ASR, Piper, LLM slots; the person uses the
    ``"person"`` slot; its ear is its own ASR, ``forms.person_ear``) and
    ``cfg.for_simulation()``; the simulated person joins it over WebRTC
    (:mod:`appliance.simulate.call`) and the session runs in real time. ``site``:
    the demo site serving ``url`` when it is local (its own record of submissions is then
    used; otherwise the URL's ``/api/submissions`` when offered). The task is the demo
    spec's own when it has one ("don't submit" → the form is left for a review that ends
    after ``forms.review_timeout_s``), else to fill the form in and submit it. Setting ``stop`` presses Cancel as the page does.
    ``progress``: called with each line of the conversation as the person heard and said it.
    The person's side is recorded in its own folder (``…-form-<profile>/events.jsonl``);
    the appliance's side in the server session's folder (``RunOutput.session.folder``).

    Raises:
        RuntimeError: the server refused the call, or the session ended without a result.
    """
    from appliance.voice.server import VoiceServer
    from appliance.voice.session import open_session

    cfg = cfg.for_simulation()
    since_ms = int(time.time() * 1000)
    person_side = open_session(cfg, f"form-{profile.name}")

    def emit(event: str, **fields) -> None:
        person_side.events.emit(event, **fields)
        if progress is not None and event in ("person_heard", "person_said", "person_typed"):
            progress(
                f"  bot (as heard): {fields['text']}"
                if event == "person_heard"
                else f"  person: {fields['written']}"
                if event == "person_said"
                else f"  person (typed in the box): {fields['value']}"
            )

    person = SimulatedPerson(_played(url, profile), runtime.llm("person"), emit)
    style = VoiceStyle(length_scale=cfg.forms.person_length_scale, pitch_semitones=cfg.forms.person_pitch_semitones)
    emit("simulation", url=url, profile=profile.name, autonomous=autonomous)
    ear = await asyncio.to_thread(load_asr, cfg.person_ear())  # its own, not the appliance's (forms.person_ear)
    await person.warm()
    server = VoiceServer(cfg, runtime)
    feature = FormFeature(site)
    cleanup = await feature.install(server)
    client: WebRTCClient | None = None
    try:
        await server.start()
        client = WebRTCClient(server.url, gap_ms=TURN_GAP_MS, pause_ms=PAUSE_MS)
        await client.connect(mode="form", url=url, autonomous=autonomous, task=person_task(url, profile))
        call = PersonOnCall(
            person,
            client,
            runtime.synth,
            ear,
            style=style,
            emit=emit,
            folder=person_side.folder,
            screen=Screen(server.url, client.pc_id, emit),
        )
        async with asyncio.TaskGroup() as tg:
            listening = tg.create_task(call.run())
            cancel = tg.create_task(_cancel_on(stop, server.url, client.pc_id)) if stop is not None else None
            result = await feature.result(client.pc_id)
            for t in (listening, cancel):
                if t is not None:
                    t.cancel()
        out = report(result, spec_for_url(url), profile, await _submissions(site, url, since_ms))
        out["stages_s"] = stages(person_side.events.events, fields_filled(result.envelopes))
        emit("report", **{k: v for k, v in out.items() if k != "messages"})
        return RunOutput(
            out, result, person_side.folder, {"bot": round(client.bot_audio_s, 2), "person": round(call.spoken_s, 2)}
        )
    finally:
        if client is not None:
            await client.close()
        await server.stop()
        if cleanup is not None:
            await cleanup()
        person_side.events.close()


def _played(url: str, profile: Profile) -> Profile:
    """The profile as the person plays it on ``url``: a demo page's spec decides which first,
    wrong answers it gives (:meth:`~appliance.demo.spec.FormSpec.person`); elsewhere all of them."""
    spec = spec_for_url(url)
    return spec.person(profile) if spec is not None else profile


def person_task(url: str, profile: Profile) -> str:
    """The person's task in words: the demo spec's own when it has one ("don't submit" → a
    review), else to fill the form in and submit it."""
    spec = spec_for_url(url)
    return (
        spec.task
        if spec is not None and spec.task
        else f"Fill in and submit the form at {url} for {profile.display_name}."
    )


async def _submissions(site: DemoSite | None, url: str, since_ms: int) -> list[dict] | None:
    """What the site recorded since this run started (a shared site keeps earlier runs' too):
    its submissions, then its autosaved drafts (``draft: true``)."""
    if site is not None:
        subs = [{"form": s.form, "data": s.data, "ts_ms": s.ts_ms} for s in site.submissions] + [
            {"form": a.form, "data": a.data, "ts_ms": a.ts_ms, "draft": True}
            for a in site.attempts
            if a.outcome == "draft"
        ]
    else:
        subs = await asyncio.to_thread(fetch_submissions, url)
    return None if subs is None else [s for s in subs if s["ts_ms"] >= since_ms]


async def _cancel_on(stop: asyncio.Event, base_url: str, pc_id: str) -> None:
    """Press Cancel (``POST /api/form/cancel``) once ``stop`` is set, as the page does."""
    await stop.wait()
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base_url}api/form/cancel", params={"pc_id": pc_id}) as r:
            if r.status != 200:
                raise RuntimeError(f"cancel refused ({r.status}): {await r.text()}")


class TypistLine:
    """The phone agent's line to a scripted typist: the person reads the agent's words as
    written and types its answers (its written words, no mouth). It answers, as on a call,
    once what it read since it last answered asks something. (The phone agent's ``Line``:
    ``say`` and ``hear``; written here, since the simulation shares no code with the agent.)"""

    person_speaking = False  # typed answers arrive whole
    heard_words: tuple[tuple[str, float], ...] = ()  # typed: no ASR
    heard_resumes = False  # each answer is typed whole

    def __init__(self, person: SimulatedPerson, emit: Callable[..., None]):
        self.person, self.emit = person, emit
        self._typed: asyncio.Queue[str] = asyncio.Queue()
        self._read: list[str] = []
        self._answering: set[asyncio.Task] = set()

    async def say(self, text: str) -> SayOutcome:
        self._read.append(text)
        if asks(text):
            said, self._read = " ".join(self._read), []
            task = asyncio.create_task(self._answer(said))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)
        return SayOutcome(interrupted=False, heard=text)  # read whole

    async def _answer(self, said: str) -> None:
        self.emit("person_heard", text=said)
        reply = await self.person.respond(said)
        if reply:
            self.emit("person_said", written=reply, spoken=reply, audio_s=0.0)
            self._typed.put_nowait(reply)

    async def hear(self) -> str:
        """The person's next typed answer (safe to cancel)."""
        return await self._typed.get()

    async def acknowledge(self) -> None:
        """A typist reads the next words when they come: nothing to acknowledge."""

    async def hint(self, context: str, spelling: bool = False) -> None:
        """Typed answers need no ASR context."""


async def simulate_form_text(
    cfg: Config,
    runtime,
    url: str,
    profile: Profile,
    *,
    site: DemoSite | None = None,
    progress: Callable[[str], None] | None = None,
    task: str = "",
) -> RunOutput:
    """One form session with the person as a scripted typist (``bench form --person text``):
    both agents as in :func:`simulate_form`, the phone agent's line a :class:`TypistLine`.
    The appliance's side is recorded in its own folder (``…-text-form``), the person's in
    ``…-text-form-<profile>``. ``task``: the person's request in words ('' = the demo spec's,
    else "fill in and submit").

    Raises:
        ApplianceError: ``forms.computer: pool`` (this runs both agents here; the audio person
            calls the voice server, which offers the computer agent to the pool)."""
    from appliance.voice.session import open_session

    if cfg.forms.computer == "pool":
        raise ApplianceError(
            "the text person runs both agents in this process, so forms.computer: pool is not used; "
            "use --person audio to call through the pool (or appliance bench pool)"
        )
    cfg = cfg.for_simulation()
    since_ms = int(time.time() * 1000)
    person_side = open_session(cfg, f"text-form-{profile.name}")
    appliance_side = open_session(cfg, "text-form")

    def emit(event: str, **fields) -> None:
        person_side.events.emit(event, **fields)
        if progress is not None and event in ("person_heard", "person_said"):
            progress(
                f"  bot (as read): {fields['text']}" if event == "person_heard" else f"  person: {fields['written']}"
            )

    person = SimulatedPerson(_played(url, profile), runtime.llm("person"), emit)
    emit("simulation", url=url, profile=profile.name, autonomous=False)  # what a replay judges against
    await person.warm()
    try:
        result = await run_session(
            cfg,
            url,
            llms=runtime.llm,
            line=TypistLine(person, emit),
            emit=appliance_side.events.emit,
            folder=appliance_side.folder,
            task=task or person_task(url, profile),
        )
        out = report(result, spec_for_url(url), profile, await _submissions(site, url, since_ms))
        out["stages_s"] = None  # no audio: nothing to time by ear
        emit("report", **{k: v for k, v in out.items() if k != "messages"})
        return RunOutput(out, result, person_side.folder, {"bot": 0.0, "person": 0.0})
    finally:
        person_side.events.close()
        appliance_side.events.close()
