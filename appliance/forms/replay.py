"""A recorded form call re-run through today's agents, on the page it was made on (issue 33).

**What a form recording holds** (the session folder of :func:`~appliance.forms.session.run_session`
when the call is recorded; nothing when the person declined): ``events.jsonl`` (every
utterance the phone agent heard, ``heard``, with its time; what the person typed,
``bus_out`` from ``page`` / ``terminal``; their clicks and keys in the preview,
``preview_click`` / ``preview_key``; each question's field, ``field_asked``, and read-back,
``read_back``; every envelope an agent sent, ``bus_out``), ``config.yaml`` and ``page.har``: every
response the computer agent's browser got (Playwright's HAR recording), so the form's pages,
their scripts and their answers to the submit are there offline.

**Replay** (:func:`replay`): today's phone agent and a fresh computer agent run on the
recording's URL with every response served from ``page.har`` and nothing from the network
(:class:`~appliance.computer_agent.browser.Har`). The person is the recording: each
utterance it heard (its audio clips, ``utterances/NNN.wav`` of a voice call, heard again by
today's ASR; a typed run's words as they were) answers the same question now as then
(:class:`ReplayLine`, ``timing="asked"``), or arrives at its recorded time (``"recorded"``); typed values and preview actions come at their
recorded times. A POST the page sends is kept as sent (the HAR answers only a request it holds:
a changed value gets no answer, and the form is not confirmed).

**The difference** (:func:`compare`): per field, the value sent then and now (the last
``info_collected``), asks and read-backs then and now; seconds per field (the phone agent's
first words to its last value sent ÷ the fields the page took); the first bot question whose
intent (:func:`intents`: the field asked, the fields read back, the words asked) differs; whether each run pressed the final submit and had it
confirmed; and, for a simulated bench run (a person's recording beside it started the
simulation on the same URL: it names the profile), each run's field accuracy against the profile's expected values.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from appliance.computer_agent.browser import Har
from appliance.computer_agent.preview import Preview
from appliance.config import Config
from appliance.demo.profile import ProfileError, load_profile
from appliance.demo.spec import evaluate, spec_for_url
from appliance.errors import ApplianceError
from appliance.forms.session import PageSide, run_session
from appliance.llm.base import LLM
from appliance.protocol import InfoCollected
from appliance.protocol.line import SayOutcome
from appliance.voice.asr import SAMPLE_RATE_HZ, load_asr, pcm16_to_float
from appliance.voice.wav import read_pcm

TIMINGS = ("asked", "recorded")


class ReplayError(ApplianceError):
    """A folder that cannot be replayed as a form call: the message says why."""


@dataclass(frozen=True)
class Run:
    """One run of a call, then or now: its events (``events.jsonl`` records: every envelope an
    agent sent is a ``bus_out`` event there, whatever the bus) and, for a replay, what the page
    sent (``sent``: its POSTs, ``{url, method, body}``)."""

    events: list[dict]
    sent: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class FormRecording:
    """A recorded form call (see the module docstring): ``url``, the person's words as the task
    (``task``), the run then, its ``har``, and for a bench run its demo ``form`` and ``profile``."""

    folder: Path
    url: str
    task: str
    then: Run
    har: Path
    duration_s: float
    form: str | None = None
    profile: str | None = None


def _form_started(e: dict) -> bool:
    """An event that starts a form call here: its computer or phone agent, or the voice page's form."""
    return e.get("event") == "form_started" or (
        e.get("event") == "agent_started" and e.get("agent") in ("computer", "phone")
    )


def is_form_recording(folder: str | Path) -> bool:
    """Whether ``folder`` is a recorded form call (an agent of one, or the voice page's form, started in it)."""
    path = Path(folder) / "events.jsonl"
    return path.is_file() and any(_form_started(e) for e in _events(path))


def load(folder: str | Path) -> FormRecording:
    """The form recording in ``folder``.

    Raises:
        ReplayError: not a recording, not a form call, or a recording with no pages (made before
            pages were kept, or with the computer agent on a pool worker).
    """
    folder = Path(folder)
    if not (folder / "events.jsonl").is_file():
        raise ReplayError(
            f"{folder}: no recording here (no events.jsonl): a call the person did not allow to be recorded "
            "keeps nothing, so it cannot be replayed"
        )
    events = _events(folder / "events.jsonl")
    if not any(_form_started(e) for e in events):
        raise ReplayError(f"{folder}: not a form call (no form agent started in its events)")
    har = folder / "page.har"
    started = next((e for e in events if e.get("event") == "agent_started" and e.get("agent") == "computer"), None)
    if started is None or not har.is_file():
        raise ReplayError(
            f"{folder}: the recording holds no pages (page.har): its computer agent ran on a pool worker, "
            "or it was made before pages were recorded"
        )
    form = profile = None
    sim = _simulation(folder, started["url"])
    if sim is not None:  # a simulated bench run: its expected values are the profile's
        spec = spec_for_url(sim["url"])
        with contextlib.suppress(ProfileError):  # a profile given by path, gone since: no expected values
            form, profile = (spec.name if spec else None), load_profile(sim["profile"]).name
    return FormRecording(
        folder,
        started["url"],
        started.get("task") or "",
        Run(events),
        har,
        max((e["t_ms"] for e in events), default=0) / 1000,
        form,
        profile,
    )


def _simulation(folder: Path, url: str) -> dict | None:
    """The ``simulation`` event of the simulated person who made the recording in ``folder``:
    a recording beside it (same parent) whose first events start a simulation on the same URL
    (a demo site's URL holds its own port, so it names one run)."""
    for other in sorted(folder.parent.iterdir()):
        path = other / "events.jsonl"
        if other == folder or not path.is_file():
            continue
        with path.open() as f:
            head = [json.loads(line) for line, _ in zip(f, range(20)) if line.strip()]
        sim = next((e for e in head if e.get("event") == "simulation" and e.get("url") == url), None)
        if sim is not None:
            return sim
    return None


def _events(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


#: what a bot utterance asks, as sorted parts: ``ask:<field>`` (a field's question),
#: ``read_back:<field>`` (a value read back), ``say:<words>`` (a question about no field)
Intent = tuple[str, ...]


def question_words(text: str) -> str:
    """A bot utterance's words less names and digits (the same question about another value reads the same)."""
    return " ".join(_VALUE.sub("", text).lower().split()[:6])


def decision_parts(d: dict) -> list[str]:
    """The intent parts a phone agent's decision gives its next words (none for other decisions)."""
    if d.get("what") == "field_asked":
        return [f"ask:{d['field']}"]
    if d.get("what") == "read_back":
        return [f"read_back:{f}" for f in d["fields"]] + ([f"ask:{d['asking']}"] if d.get("asking") else [])
    return []


def _intent(parts: set[str], text: str) -> Intent | None:
    """The intent of words ``text`` said after decisions giving ``parts``; None: a filler ("I'm
    opening the form now."), which asks nothing."""
    if not parts and "?" in text:
        parts = {f"say:{question_words(text)}"}
    return tuple(sorted(parts)) or None


def _split(intent: Intent) -> tuple[set[str], set[str]]:
    """An intent's questions for values (``ask:`` and ``say:`` parts) and its read-backs."""
    backs = {p for p in intent if p.startswith("read_back:")}
    return set(intent) - backs, backs


def _asking(events: list[dict]):
    """Each bot utterance that asks something, with its intent, in order: ``(event, intent)``."""
    parts: set[str] = set()
    for e in events:
        if e["event"] == "decision":
            parts.update(decision_parts(e))
        elif e["event"] == "say":
            intent, parts = _intent(parts, e["text"]), set()
            if intent is not None:
                yield e, intent


class ReplayLine:
    """The phone agent's line to a recording. ``timing="asked"``: each question gets the recorded
    answer to the most alike question then: a question for values, the first unused utterance
    that answered the most of the same fields (or words) asked, then of the same read-backs; a
    read-back alone, one that answered a read-back alone of the same fields, else "Yes." (the
    person accepted those values then); nothing alike: the next unused utterance in order. ``"recorded"``: each
    utterance is heard at its recorded time after :meth:`feed` starts. The replay tells it each
    question's intent parts as the agent logs them (:meth:`expect`). Once the utterances run
    out, nothing more is heard (the agent's own silence checks end the call)."""

    person_speaking = False
    heard_words: tuple[tuple[str, float], ...] = ()
    heard_resumes = False

    def __init__(self, utterances: list[tuple[float, Intent | None, str]], timing: str):
        if timing not in TIMINGS:
            raise ValueError(f"timing {timing!r}: one of {', '.join(TIMINGS)}")
        self.utterances, self.timing = utterances, timing
        self.said: list[str] = []
        self._unused = list(range(len(utterances))) if timing == "asked" else []
        self._parts: set[str] = set()  # what the agent logged for its next words
        self._asked: Intent | None = None  # the question the person is answering
        self._q: asyncio.Queue[str] = asyncio.Queue()

    def expect(self, parts: list[str]) -> None:
        """The agent logged what its next words do (:func:`decision_parts`)."""
        self._parts.update(parts)

    async def feed(self) -> None:
        """``timing="recorded"``: put each utterance on the line at its time (ms after this starts)."""
        t0 = time.monotonic()
        for t_ms, _, text in self.utterances if self.timing == "recorded" else ():
            await asyncio.sleep(max(0.0, t0 + t_ms / 1000 - time.monotonic()))
            self._q.put_nowait(text)

    async def say(self, text: str) -> SayOutcome:
        self.said.append(text)
        asked, self._parts = _intent(self._parts, text), set()
        if asked is not None:
            self._asked = asked
            self._answer()
        return SayOutcome(interrupted=False, heard=text)

    def _answer(self) -> None:
        """``asked``: the answer to the question just said goes on the line (see the class docstring:
        a question for values is matched on the values asked, then on the read-backs said with it;
        a read-back alone only to a recorded read-back alone)."""
        if self.timing != "asked" or not self._q.empty():
            return
        asks, backs = _split(self._asked or ())
        scores = {}
        for i in self._unused:
            then_asks, then_backs = _split(self.utterances[i][1] or ())
            if asks:
                scores[i] = (len(asks & then_asks), len(backs & then_backs))
            elif not then_asks:  # a read-back alone answers a read-back alone
                scores[i] = (len(backs & then_backs), 0)
        best = max(scores.values(), default=(0, 0))
        if best[0] == 0 and not asks:
            self._q.put_nowait("Yes.")
            return
        pick = next((i for i in self._unused if scores.get(i) == best), None) if best[0] else None
        if pick is None:
            pick = self._unused[0] if self._unused else None
        if pick is not None:
            self._unused.remove(pick)
            self._q.put_nowait(self.utterances[pick][2])

    async def hear(self) -> str:
        return await self._q.get()  # safe to cancel: nothing is taken until it is returned

    async def acknowledge(self) -> None:
        """Nothing to play: the recording's person heard whatever they heard."""

    async def hint(self, context: str, spelling: bool = False) -> None:
        """The utterances are text as heard then: no ASR to hint."""


def person_utterances(
    events: list[dict], folder: Path, transcribe: Callable[[Path], str] | None = None
) -> list[tuple[float, Intent | None, str]]:
    """What the person said, ``(t_ms, intent, text)`` in order: each utterance the phone agent
    heard then, with the intent of the question it answered (:func:`_asking`; None before
    any); where the recording holds the audio of the finals behind it (the ``asr`` events'
    ``clip`` since the utterance before) and ``transcribe`` is given, those clips heard again
    by it (today's ASR), joined, instead of the words heard then."""
    asked_at = {id(e): intent for e, intent in _asking(events)}
    out, clips, asked = [], [], None
    for e in events:
        if id(e) in asked_at:
            asked = asked_at[id(e)]
        elif e["event"] == "asr" and e.get("clip"):
            clips.append(folder / e["clip"])
        elif e["event"] == "heard" and e.get("agent") == "phone":
            again = " ".join(t for t in (transcribe(c) for c in clips) if t) if clips and transcribe else ""
            out.append((e["t_ms"], asked, again or e["text"]))
            clips = []
    return out


def asr_transcriber(cfg: Config) -> Callable[[Path], str]:
    """Today's conversational ASR (``cfg.asr``) over a recorded clip, the engine loaded at the
    first clip (a typed run's replay loads none).

    Raises (at the first call): ModelError: the engine's model files are missing."""
    engine = []

    def transcribe(path: Path) -> str:
        if not engine:
            engine.append(load_asr(cfg.asr))
        pcm, rate = read_pcm(path)
        if rate != SAMPLE_RATE_HZ:
            raise ReplayError(f"{path}: {rate} Hz; recorded utterances are {SAMPLE_RATE_HZ} Hz")
        return engine[0].transcribe(pcm16_to_float(pcm)).text

    return transcribe


async def replay(
    cfg: Config,
    rec: FormRecording,
    llms: Callable[[str], LLM],
    *,
    timing: str = "asked",
    transcribe: Callable[[Path], str] | None = None,
    emit=None,
) -> Run:
    """Re-run ``rec`` through today's agents (see the module docstring); returns the run now.
    ``cfg``: today's config (:meth:`~appliance.config.Config.for_replay` of it runs: loopback,
    short waits for answers that will not come); every page is served from the recording's HAR. ``transcribe``: today's ASR for the recorded clips
    (:func:`person_utterances`; None: the words heard then). ``emit``: the replay's own events
    (default: kept only in the returned run).

    Raises:
        ValueError: an unknown ``timing``.
    """
    events: list[dict] = []
    t0 = time.monotonic()

    def keep(event: str, **fields) -> None:
        events.append({"t_ms": round((time.monotonic() - t0) * 1000, 1), "event": event, **fields})
        if event == "decision":
            line.expect(decision_parts(fields))
        if emit is not None:
            emit(event, **fields)

    utterances = await asyncio.to_thread(person_utterances, rec.then.events, rec.folder, transcribe)
    line = ReplayLine(utterances, timing)
    har = Har(rec.har, "replay")
    side = PageSide(Preview(), date_order=cfg.forms.date_order)
    cfg = cfg.for_replay(_review_s(rec.then) or rec.duration_s, recorded_pace=timing == "recorded")
    hands = asyncio.create_task(_hands(rec.then.events, side))
    feeder = asyncio.create_task(line.feed())
    try:
        await run_session(cfg, rec.url, llms=llms, line=line, emit=keep, task=rec.task, page_side=side, har=har)
    finally:
        for task in (hands, feeder):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    return Run(events, har.sent)


def _review_s(run: Run) -> float | None:
    """How long the form waited for the person's review in ``run`` (s; None: it was not left for one)."""
    began = next((e["t_ms"] for e in run.events if e["event"] == "decision" and e.get("what") == "review"), None)
    ended = next((e["t_ms"] for e in run.events if e["event"] == "decision" and e.get("what") == "review_ended"), None)
    return (ended - began) / 1000 if began is not None and ended is not None else None


async def _hands(events: list[dict], side: PageSide) -> None:
    """What the person typed and did in the preview, at its recorded time (ms after this starts);
    an action the page cannot take now (the session not bound yet, a point off the page) is
    skipped: the replay shows what the agents do without it."""
    t0 = time.monotonic()
    for e in events:
        typed = e["event"] == "bus_out" and e.get("agent") in ("page", "terminal") and e.get("type") == "info_collected"
        if not (typed or e["event"] in ("preview_click", "preview_key")):
            continue
        await asyncio.sleep(max(0.0, t0 + e["t_ms"] / 1000 - time.monotonic()))
        with contextlib.suppress(RuntimeError, ValueError):
            if typed:
                await side.send_typed(InfoCollected(**e["payload"]))
            elif e["event"] == "preview_click":
                await side.preview.click(e["x"], e["y"])
            else:
                await side.preview.key(e["key"])


# ---- the difference -------------------------------------------------------------------------


def _bus_out(run: Run):
    """``(agent, type, payload)`` of every envelope an agent sent, in order."""
    for e in run.events:
        if e["event"] == "bus_out":
            yield e.get("agent"), e.get("type"), e.get("payload") or {}


def values(run: Run) -> dict[str, object]:
    """The last value the phone agent (or the person's hands) sent per field."""
    out: dict[str, object] = {}
    for agent, type_, p in _bus_out(run):
        if type_ == "info_collected" and agent != "computer":
            out[p["field"]] = tuple(p["value"]) if isinstance(p["value"], list) else p["value"]
    return out


def _decisions(run: Run, what: str) -> list[dict]:
    return [e for e in run.events if e["event"] == "decision" and e.get("what") == what]


def asks(run: Run) -> dict[str, int] | None:
    """Questions asked per field (``field_asked``); None for a recording made before they were logged."""
    got = _decisions(run, "field_asked")
    if not got and not _decisions(run, "read_back"):
        return None
    out: dict[str, int] = {}
    for d in got:
        out[d["field"]] = out.get(d["field"], 0) + 1
    return out


def read_backs(run: Run) -> dict[str, int] | None:
    """Read-backs per field (``read_back``); None as for :func:`asks`."""
    if asks(run) is None:
        return None
    out: dict[str, int] = {}
    for d in _decisions(run, "read_back"):
        for name in d["fields"]:
            out[name] = out.get(name, 0) + 1
    return out


def seconds_per_field(run: Run) -> float | None:
    """From the phone agent's first words to its last value sent, ÷ the fields the page took
    (``field_filled``, each once); None when no field was taken."""
    said = [e["t_ms"] for e in run.events if e["event"] == "say"]
    sent = [
        e["t_ms"]
        for e in run.events
        if e["event"] == "bus_out" and e.get("agent") == "phone" and e.get("type") == "info_collected"
    ]
    filled = {p["field"] for agent, type_, p in _bus_out(run) if agent == "computer" and type_ == "field_filled"}
    if not (said and sent and filled):
        return None
    return round((max(sent) - min(said)) / 1000 / len(filled), 2)


_VALUE = re.compile(r"[\d@]|\b[A-Z][a-z]+\b")


def intents(run: Run) -> list[Intent]:
    """What each bot utterance that asks something asks, in order (:func:`_asking`)."""
    return [intent for _, intent in _asking(run.events)]


def _pressed(run: Run) -> bool:
    return bool(_decisions(run, "press_final_submit"))


def _confirmed(run: Run) -> bool:
    return any(agent == "computer" and type_ == "submitted" for agent, type_, _ in _bus_out(run))


def page_data(sent: list[dict], outcome: str = "accepted") -> dict[str, str] | None:
    """What the page sent as its form's data: the last ``/api/record`` of ``outcome`` (the demo
    pages' own handlers: ``accepted``, or ``draft`` for a form left for review), else every form
    POST merged in order (a form over several steps); None: nothing sent."""
    merged: dict[str, str] = {}
    for s in sent:
        if urlsplit(s["url"]).path == "/api/record":
            with contextlib.suppress(ValueError, KeyError, TypeError):
                body = json.loads(s["body"])
                if body["outcome"] == outcome:
                    merged = {str(k): str(v) for k, v in body["data"].items()}
        elif s["method"] == "POST":
            merged.update(parse_qsl(s["body"], keep_blank_values=True))
    return merged or None


def _recorded_posts(har: Path) -> list[dict]:
    entries = json.loads(har.read_text())["log"]["entries"]
    return [
        {
            "url": e["request"]["url"],
            "method": e["request"]["method"],
            "body": (e["request"].get("postData") or {}).get("text", ""),
        }
        for e in entries
        if e["request"]["method"] != "GET"
    ]


def accuracy(rec: FormRecording, sent: list[dict]) -> tuple[float | None, list[str]]:
    """Field accuracy of what the page was sent (its last draft, for a form the person asked
    not to submit) against the bench profile's expected values, and the fields that are not
    as expected; (None, []) without a demo form and profile."""
    if rec.form is None or rec.profile is None:
        return None, []
    spec = spec_for_url(rec.url)
    results = evaluate(spec, load_profile(rec.profile), page_data(sent, "accepted" if spec.submit else "draft"))
    if not results:
        return None, []
    return round(sum(r.ok for r in results) / len(results), 3), [r.field for r in results if not r.ok]


def compare(rec: FormRecording, now: Run, duration_s: float) -> dict:
    """The replay's report: ``{"recording", "url", "fields": [{field, then, now, same, asks: {then,
    now}, read_backs: {then, now}}], "same_values", "diverged_at": {index, then, now} | null,
    "seconds_per_field": {then, now}, "pressed_submit": {then, now}, "confirmed": {then, now},
    "accuracy": {then, now}, "worse_page_fields" (the page's own names of the fields that got
    worse: its form data's keys), "verdict", "duration_s": {then, now}}``;
    ``verdict``: ``better`` / ``worse`` (accuracy against the expected values, when the recording
    has them), else ``same`` / ``different`` (the values sent)."""
    then_v, now_v = values(rec.then), values(now)
    then_a, now_a = asks(rec.then), asks(now)
    then_r, now_r = read_backs(rec.then), read_backs(now)
    names = list(dict.fromkeys([*then_v, *now_v]))
    fields = [
        {
            "field": n,
            "then": then_v.get(n),
            "now": now_v.get(n),
            "same": then_v.get(n) == now_v.get(n),
            "asks": {"then": then_a.get(n, 0) if then_a is not None else None, "now": (now_a or {}).get(n, 0)},
            "read_backs": {"then": then_r.get(n, 0) if then_r is not None else None, "now": (now_r or {}).get(n, 0)},
        }
        for n in names
    ]
    a, b = intents(rec.then), intents(now)
    said_then = [e["text"] for e, _ in _asking(rec.then.events)]
    said_now = [e["text"] for e, _ in _asking(now.events)]
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    if at is None and len(a) != len(b):
        at = min(len(a), len(b))
    acc_then, _ = accuracy(rec, _recorded_posts(rec.har))
    acc_now, wrong_now = accuracy(rec, now.sent)
    same = all(f["same"] for f in fields)
    if acc_then is not None and acc_now is not None and acc_now != acc_then:
        verdict = "better" if acc_now > acc_then else "worse"
    else:
        verdict = "same" if same else "different"
    return {
        "recording": str(rec.folder),
        "url": rec.url,
        "fields": fields,
        "same_values": same,
        "diverged_at": None
        if at is None
        else {
            "index": at,
            "then": said_then[at] if at < len(said_then) else None,
            "now": said_now[at] if at < len(said_now) else None,
        },
        "seconds_per_field": {"then": seconds_per_field(rec.then), "now": seconds_per_field(now)},
        "pressed_submit": {"then": _pressed(rec.then), "now": _pressed(now)},
        "confirmed": {"then": _confirmed(rec.then), "now": _confirmed(now)},
        "accuracy": {"then": acc_then, "now": acc_now},
        "worse_page_fields": wrong_now if verdict == "worse" else [],
        "verdict": verdict,
        "duration_s": {"then": round(rec.duration_s, 1), "now": round(duration_s, 1)},
    }
