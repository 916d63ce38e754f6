"""A simulated form-filling run: the demo site (or any URL), both agents, and a simulated
person on a real-audio call. Used by ``appliance simulate form``, ``appliance bench form``
and the tests."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from appliance.config import Config
from appliance.demo.site import FORMS, DemoSite
from appliance.demo.spec import spec_for_url
from appliance.forms.llm import LLM
from appliance.forms.session import SLOT_PERSON, SessionResult, fetch_submissions, report, run_session
from appliance.simulate.call import SimulatedCall
from appliance.simulate.person import SimulatedPerson
from appliance.simulate.profile import Profile
from appliance.voice.tts import VoiceStyle

log = logging.getLogger(__name__)

BOT_STYLE = VoiceStyle()
SIMULATED_ANSWER_TIMEOUT_S = 90.0


@dataclass
class RunOutput:
    """The ``simulate form`` JSON (``report``) plus the session itself and the call's audio seconds."""

    report: dict
    session: SessionResult
    audio_s: dict[str, float]


def resolve_url(url: str, site: DemoSite | None) -> str:
    """``demo:NAME`` → that form on ``site``; any other URL unchanged.

    Raises:
        ValueError: ``demo:NAME`` without a site, or an unknown demo form.
    """
    if not url.startswith("demo:"):
        return url
    name = url[5:]
    if site is None or name not in site.urls:
        raise ValueError(f"--url {url}: demo forms are {', '.join('demo:' + n for n in FORMS)}")
    return site.urls[name]


async def simulate_form(cfg: Config, runtime, url: str, profile: Profile, *, autonomous: bool = False,
                        site: DemoSite | None = None, stop: asyncio.Event | None = None) -> RunOutput:
    """Run one simulated session on ``url`` and report it.

    ``runtime``: a started :class:`~appliance.voice.pipeline.VoiceRuntime` (ASR, Piper, LLM
    endpoint). ``site``: the demo site serving ``url`` when it is local (its own record of
    submissions is then used; otherwise the URL's ``/api/submissions`` when offered).
    """
    from appliance.voice.pipeline import open_session

    # The simulated person's LLM shares the CPU with both agents: give it a person's patience and more.
    cfg = cfg.model_copy(update={"forms": cfg.forms.model_copy(
        update={"answer_timeout_s": max(cfg.forms.answer_timeout_s, SIMULATED_ANSWER_TIMEOUT_S)})})
    session = open_session(cfg, f"form-{profile.name}")
    emit = session.events.emit
    llm = LLM(runtime.llm_base_url, runtime.llm_model, slot=0 if cfg.llm.provider == "embedded" else None,
              api_key=runtime.llm_api_key)
    person = SimulatedPerson(profile, llm.with_slot(SLOT_PERSON), emit)
    person_style = VoiceStyle(length_scale=cfg.forms.person_length_scale,
                              pitch_semitones=cfg.forms.person_pitch_semitones)
    emit("simulation", url=url, profile=profile.name, autonomous=autonomous)
    await person.warm()
    try:
        async with SimulatedCall(person, runtime.synth, runtime.asr, bot_style=BOT_STYLE, person_style=person_style,
                                 emit=emit) as call:
            result = await run_session(cfg, url, llm=llm, line=call, emit=emit, autonomous=autonomous,
                                       folder=session.folder, stop=stop,
                                       task=f"Fill in and submit the form at {url} for {profile.display_name}.")
        spec = spec_for_url(url)
        if site is not None:
            subs = [{"form": s.form, "data": s.data, "ts_ms": s.ts_ms} for s in site.submissions]
        else:
            subs = await asyncio.to_thread(fetch_submissions, url)
        out = report(result, spec, profile, subs)
        emit("report", **{k: v for k, v in out.items() if k != "messages"})
        return RunOutput(out, result, dict(call.audio_s))
    finally:
        session.events.close()
