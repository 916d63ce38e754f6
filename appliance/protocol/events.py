"""Session events: the callback that writes them and the registry of their typed models.

Envelopes go agent to agent over the bus; *events* go one way, to the session's event log
(``events.jsonl``) and to the person's page, which shows them. Each is a name and flat
JSON-able fields: ``emit("say", agent="phone", text="What is your family name?")``; the log
writes ``{"t_ms", "ts", "event": "say", "agent": "phone", "text": …}``.

Every event is a small frozen pydantic model here, its name an ``event: Literal[…]`` field (as
LiveKit Agents types its session events), registered in :data:`SESSION_EVENTS` (name → model)
when its class is defined. :func:`check` validates ``(event, fields)`` against it: an unknown
name, an unknown field, a missing or mistyped one raises :class:`EventError`. The page
(``webrtc_page/app.js``) switches on these names; ``tests/test_session_events.py`` holds both
it and every ``emit("…", …)`` call site in ``appliance/`` to this registry.

Units are in the field names (``_ms``, ``_s``) and said in each model's docstring.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from appliance.protocol.forms import FieldValue, StepProblem


class Emit(Protocol):
    """``emit(event, **fields)``: record one event; the return value is not used.

    The voice session's ``EventLog.emit`` is one (it validates with :func:`check`); a test may
    pass ``lambda *a, **k: None``.
    """

    def __call__(self, event: str, /, **fields: Any) -> object: ...


#: How the computer agent's task ended (``ComputerAgent``'s ``Outcome.status``): ``submitted``
#: (the page showed its own confirmation), ``not_submitted`` (the person declined, the review
#: ended without a submit, or the task was done without submitting), ``terminated`` or ``failed``.
ComputerStatus = Literal["submitted", "not_submitted", "terminated", "failed"]

#: How the phone agent's call ended (``PhoneOutcome.status``): the computer agent's statuses and
#: ``review`` (filled, left for the person to check) and ``no_answer``.
PhoneStatus = Literal["submitted", "not_submitted", "review", "failed", "no_answer", "terminated"]


class EventError(ValueError):
    """A session event that is not in :data:`SESSION_EVENTS`, or whose fields do not fit its model."""


#: Every session event's model, by name; filled as each model class is defined.
SESSION_EVENTS: dict[str, type[SessionEvent]] = {}


class SessionEvent(BaseModel):
    """The base of every session event: ``event`` is its name (a ``Literal`` with that name as
    default in each model); fields not declared are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event: str

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        name = cls.model_fields["event"].default
        if isinstance(name, str):  # a named event, not a shared base such as AgentEvent
            if name in SESSION_EVENTS:
                raise TypeError(
                    f"session event {name!r} is defined twice ({SESSION_EVENTS[name].__name__}, {cls.__name__})"
                )
            SESSION_EVENTS[name] = cls


def check(event: str, fields: dict[str, Any]) -> SessionEvent:
    """The model of ``event`` with ``fields``.

    Raises:
        EventError: ``event`` is not registered, or a field is unknown, missing or of the wrong
            type (the message names the event and each such field).
    """
    model = SESSION_EVENTS.get(event)
    if model is None:
        raise EventError(f"unknown session event {event!r}: not in appliance.protocol.events.SESSION_EVENTS")
    try:
        return model.model_validate({**fields, "event": event})
    except ValidationError as e:
        problems = "; ".join(f"field {'.'.join(map(str, err['loc']))!r}: {err['msg']}" for err in e.errors())
        raise EventError(f"session event {event!r}: {problems}") from None


# ---- the call and the voice pipeline (voice/) ---------------------------------------------------


class Connected(SessionEvent):
    """A call was connected: ``pc_id`` its peer connection, ``mode`` the voice server's mode (``assistant``, ``form``…)."""

    event: Literal["connected"] = "connected"
    pc_id: str
    mode: str


class Disconnected(SessionEvent):
    """The call was disconnected."""

    event: Literal["disconnected"] = "disconnected"


class Error(SessionEvent):
    """The session's mode or call failed: ``error`` says how (shown as the page's status)."""

    event: Literal["error"] = "error"
    error: str


class AgentDone(SessionEvent):
    """The session's mode (a form, a game) finished without error."""

    event: Literal["agent_done"] = "agent_done"


class Asr(SessionEvent):
    """One final transcription: ``audio_s`` of speech took ``compute_s`` to transcribe;
    ``no_speech_prob`` is Whisper's probability that it was not speech (0–1); ``clip``: the
    utterance's audio in the recording (``utterances/NNN.wav``; None: not recorded, or silence)."""

    event: Literal["asr"] = "asr"
    audio_s: float
    compute_s: float
    no_speech_prob: float
    clip: str | None = None


class UserStartedSpeaking(SessionEvent):
    """The VAD heard the person start speaking."""

    event: Literal["user_started_speaking"] = "user_started_speaking"


class BargeInDetected(SessionEvent):
    """The person started speaking while the bot was speaking."""

    event: Literal["barge_in_detected"] = "barge_in_detected"


class VadStopped(SessionEvent):
    """The VAD heard the person stop; ``speech_end_ms`` (session ms) is when speech ended
    (the VAD stop less ``vad.stop_ms``)."""

    event: Literal["vad_stopped"] = "vad_stopped"
    speech_end_ms: float


class SmartTurn(SessionEvent):
    """Smart Turn's verdict at a VAD stop: ``complete`` (the turn ended) with ``probability``
    (0–1), computed in ``compute_ms``."""

    event: Literal["smart_turn"] = "smart_turn"
    complete: bool
    probability: float
    compute_ms: float


class LLMTTFB(SessionEvent):
    """pipecat's time to the first token of an LLM request inside the pipeline (its
    ``TTFBMetricsData`` from the LLM service): ``ttfb_ms`` from the request to the first token,
    ``processor`` the service's name."""

    event: Literal["llm_ttfb"] = "llm_ttfb"
    ttfb_ms: float
    processor: str


class EarlyFinal(SessionEvent):
    """The STT's early final transcript ``text``, before the VAD stop."""

    event: Literal["early_final"] = "early_final"
    text: str


class InterimTranscript(SessionEvent):
    """An interim transcript ``text`` of speech still going on."""

    event: Literal["interim_transcript"] = "interim_transcript"
    text: str


class FinalTranscript(SessionEvent):
    """The final transcript ``text`` of a segment of speech."""

    event: Literal["final_transcript"] = "final_transcript"
    text: str


class LlmFirstToken(SessionEvent):
    """The LLM's first token of this turn's reply."""

    event: Literal["llm_first_token"] = "llm_first_token"


class TtsFirstAudio(SessionEvent):
    """The TTS's first audio of this turn's reply."""

    event: Literal["tts_first_audio"] = "tts_first_audio"


class FirstAudioSent(SessionEvent):
    """The reply's first audio left for the person."""

    event: Literal["first_audio_sent"] = "first_audio_sent"


class Turn(SessionEvent):
    """One answered turn: each stage's ms from the end of speech (a stage not reached this
    turn is absent); the stages, in order, are ``voice.events.STAGES``."""

    event: Literal["turn"] = "turn"
    early_final_ms: float | None = None
    vad_stopped_ms: float | None = None
    final_transcript_ms: float | None = None
    llm_first_token_ms: float | None = None
    tts_first_audio_ms: float | None = None
    first_audio_sent_ms: float | None = None


class LlmReply(SessionEvent):
    """The whole generated reply ``text`` (may be more than was heard); ``interrupted``: the
    generation was cut, ``text`` is what had been generated."""

    event: Literal["llm_reply"] = "llm_reply"
    text: str
    interrupted: bool = False


class BotText(SessionEvent):
    """A piece of the reply, ``text``, as it is spoken."""

    event: Literal["bot_text"] = "bot_text"
    text: str


class BotStopped(SessionEvent):
    """The bot stopped speaking."""

    event: Literal["bot_stopped"] = "bot_stopped"


class Interruption(SessionEvent):
    """A reply was cut: the bot was speaking or generating."""

    event: Literal["interruption"] = "interruption"


class Ack(SessionEvent):
    """An acknowledgement was said before the answer: the canned one (``turn.ack_text``) ``after_ms`` after the
    turn's end, or, while ``llm.slow`` answers, the fast model's line ``text`` (voice/acks.py) ``after_ms`` after
    the turn's end."""

    event: Literal["ack"] = "ack"
    after_ms: float
    text: str | None = None


class AckFailed(SessionEvent):
    """The fast model's acknowledgement (``llm.slow``) could not be made (``error``): the answer comes unacknowledged."""

    event: Literal["ack_failed"] = "ack_failed"
    error: str


class LlmApology(SessionEvent):
    """The LLM failed (``error``); the bot apologised aloud instead of falling silent."""

    event: Literal["llm_apology"] = "llm_apology"
    error: str


class Duck(SessionEvent):
    """The playout lowered the bot's voice: the person may be barging in."""

    event: Literal["duck"] = "duck"


class Pause(SessionEvent):
    """The playout paused the bot's speech and rewound the last ``rewound_ms`` of it."""

    event: Literal["pause"] = "pause"
    rewound_ms: float


class DuckReleased(SessionEvent):
    """The duck or pause ended without a barge-in (``why``), ``after_ms`` after it began."""

    event: Literal["duck_released"] = "duck_released"
    why: str
    after_ms: float


class BargeInConfirmed(SessionEvent):
    """A barge-in was confirmed: the reply is cut; ``after_ms`` since the duck or pause (None: there was none)."""

    event: Literal["barge_in_confirmed"] = "barge_in_confirmed"
    after_ms: float | None


class Backchannel(SessionEvent):
    """The person's ``text`` while the bot spoke was a backchannel ("yeah", "ok"): the bot went on."""

    event: Literal["backchannel"] = "backchannel"
    text: str


class Speculation(SessionEvent):
    """A speculative reply to an early final: ``started`` on ``text``, ``kept`` (the final
    transcript matched) or ``cancelled`` (``reason``; ``final``: the differing final transcript)."""

    event: Literal["speculation"] = "speculation"
    state: Literal["started", "kept", "cancelled"]
    text: str | None = None
    reason: str | None = None
    final: str | None = None


class TurnEndedByWords(SessionEvent):
    """The person's turn was ended by its words (``text``), before the silence timeout."""

    event: Literal["turn_ended_by_words"] = "turn_ended_by_words"
    text: str


class TurnHeld(SessionEvent):
    """The turn was held open ``hold_ms`` longer: ``text`` sounded unfinished."""

    event: Literal["turn_held"] = "turn_held"
    text: str
    hold_ms: float


# ---- the agents (bus/, computer_agent/, phone_agent/) ------------------------------------------


class AgentEvent(SessionEvent):
    """An event of one agent: ``agent`` is its id (``phone``, ``computer``)."""

    agent: str


class BusIn(AgentEvent):
    """``agent`` received an envelope of ``type`` from ``sender``; ``payload`` its fields."""

    event: Literal["bus_in"] = "bus_in"
    type: str
    sender: str
    payload: dict[str, Any]


class BusOut(AgentEvent):
    """``agent`` sent an envelope of ``type``; ``payload`` its fields (the page shows the form's values from these)."""

    event: Literal["bus_out"] = "bus_out"
    type: str
    payload: dict[str, Any]


class AgentStarted(AgentEvent):
    """``agent`` started. The computer agent gives the form's ``url``, ``autonomous``, whether
    the task asks to ``submit``, the task's words about it (``task_words``) and the whole
    ``task`` (what a replay runs again); the phone agent
    its call's ``purpose`` and the ``fields`` (names) it asks for."""

    event: Literal["agent_started"] = "agent_started"
    url: str | None = None
    autonomous: bool | None = None
    submit: bool | None = None
    task_words: str | None = None
    task: str | None = None
    purpose: str | None = None
    fields: list[str] | None = None


class AgentFinished(AgentEvent):
    """``agent`` finished with ``status`` (``detail``: why, or what the page confirmed). The
    computer agent adds its browser ``actions`` by kind; the phone agent its
    ``waits_on_browser`` and ``explained_failures`` (counts)."""

    event: Literal["agent_finished"] = "agent_finished"
    status: ComputerStatus | PhoneStatus
    detail: str
    actions: dict[str, int] | None = None
    waits_on_browser: int | None = None
    explained_failures: int | None = None


DecisionWhat = Literal[
    # the computer agent
    "launch",
    "submit_authorized_ignored",
    "submit_authorized_received",
    "authorisation_withdrawn",
    "call_ended_in_review",
    "press_step_button",
    "await_authorisation",
    "press_final_submit",
    "submit_guarded",
    "preview_action_dropped",
    "submit_answer",
    "review",
    "review_ended",
    # the phone agent
    "typed_value",
    "answer_names_another_field",
    "field_given_up",
    "field_handed_over",
    "no_value",
    "press_opener_button",
    "item_requested",
    "choice_ambiguous",
    "dismiss_popup",
    "add_item_pressed",
    "add_item_refused",
    "asr_unsure",
    "answer_resumed",
    "implicit_read_back_rejected",
    "candidate_picked",
    "read_back_rejected",
    "read_back_cut",
    "read_back_in_summary",
    "summary_corrected",
    "summary_correction_refused",
    "summary_correction_unclear",
    "submit_stopped",
    "submit_authorized",
    "submit_declined",
    "submit_interrupted",
    "pick_option_failed",
    "pick_option",
    "side_question_failed",
    "side_question",
    "late_presence_ignored",
    "call_cancelled",
    "progress_told",
    "interview_held",
    "told",
    "told_failed",
    "answered_ahead",
    "field_asked",
    "read_back",
    "look_ahead_failed",
    "warm_failed",
]


class Decision(AgentEvent):
    """``agent`` decided ``what``; the other fields are that decision's details (a ``field``
    name, what was ``heard``, a ``button``'s text, an ``error``…).

    ``what`` is a closed vocabulary, but a decision's details are open (any JSON-able field):
    they differ for each of ~30 decisions, are read by people (the page's activity log shows
    every key) and by tests, never by code, and change as the agents' reasoning does — one
    model per decision would add ~30 classes that no reader dispatches on.
    """

    model_config = ConfigDict(extra="allow")

    event: Literal["decision"] = "decision"
    what: DecisionWhat


class BrowserClosed(AgentEvent):
    """The computer agent closed its browser in ``close_ms``; ``chromium_left``: Chromium processes still running."""

    event: Literal["browser_closed"] = "browser_closed"
    close_ms: float
    chromium_left: int


class BrowserLost(AgentEvent):
    """The browser stopped (``reason``); restart number ``restart`` puts ``values`` (field names) in again."""

    event: Literal["browser_lost"] = "browser_lost"
    reason: str
    restart: int
    values: list[str]


class TaskTakenOver(AgentEvent):
    """A pool task taken over from a worker that died: the earlier agent had announced ``fields``
    (names, kept); ``submitted``: the page had confirmed its submission (the task is over);
    ``unknown_press``: it pressed the final submit and died before the page answered."""

    event: Literal["task_taken_over"] = "task_taken_over"
    fields: list[str]
    submitted: bool
    unknown_press: bool


class PageLoaded(AgentEvent):
    """The form at ``url`` loaded, at ``attempt`` (1, 2)."""

    event: Literal["page_loaded"] = "page_loaded"
    url: str
    attempt: int


class PageLoadFailed(AgentEvent):
    """The form at ``url`` did not load at ``attempt`` (``reason``)."""

    event: Literal["page_load_failed"] = "page_load_failed"
    url: str
    attempt: int
    reason: str


class PageState(AgentEvent):
    """The page changed: now ``url``, ``title``, with these live ``fields`` (their idents)."""

    event: Literal["page_state"] = "page_state"
    url: str
    title: str
    fields: list[str]


class FieldNamed(AgentEvent):
    """The page's field ``ident`` (``label``) was named ``name`` by ``source`` (the mapper's LLM or a rule), ``ms`` after naming began."""

    event: Literal["field_named"] = "field_named"
    ident: str
    label: str
    name: str
    source: str
    ms: float


class Fill(AgentEvent):
    """The computer agent put ``value`` into ``field``. Read back as ``read_back``: accepted
    (``confirmed``: the person had confirmed it; ``fill_ms`` the fill took; ``fill_lag_ms``
    from its confirmation to the read-back, None if unconfirmed), refused by the page
    (``invalid``: its message) or different (``mismatch``); or it could not be put in at all
    (``problem`` ``format`` or ``error``, ``reason``, with widget ``strategy``);
    ``refused_twice``: the same refusal of the same value again, so the field was handed over."""

    event: Literal["fill"] = "fill"
    field: str
    value: FieldValue
    read_back: FieldValue | None = None
    confirmed: bool | None = None
    fill_ms: float | None = None
    fill_lag_ms: float | None = None
    invalid: str | None = None
    mismatch: bool | None = None
    problem: str | None = None
    reason: str | None = None
    strategy: str | None = None
    refused_twice: bool | None = None


class FillDeferred(AgentEvent):
    """``field`` was not filled now (``why``); it is filled when it is back on the page."""

    event: Literal["fill_deferred"] = "fill_deferred"
    field: str
    why: str


class FillRetry(AgentEvent):
    """``field`` is tried again, ``attempt`` (2, 3…) with widget ``strategy``, after the last one's problem (``after``)."""

    event: Literal["fill_retry"] = "fill_retry"
    field: str
    attempt: int
    strategy: str
    after: str


class PreviewFocus(AgentEvent):
    """The agent works on ``field`` (None: a button) labelled ``label``; ``box`` is its
    ``{field, x, y, width, height}`` in the page's CSS pixels (None: not visible)."""

    event: Literal["preview_focus"] = "preview_focus"
    field: str | None
    label: str
    box: dict[str, str | int] | None


class PressFailed(AgentEvent):
    """Pressing ``button`` (its text) failed: ``reason``."""

    event: Literal["press_failed"] = "press_failed"
    button: str
    reason: str


class GaveUp(AgentEvent):
    """The computer agent gave up on a step: ``problem`` (``page``: the form did not load) at
    ``field`` (None: the page), ``reason``; ``advice`` tells the person what to do."""

    event: Literal["gave_up"] = "gave_up"
    problem: StepProblem | Literal["page"]
    field: str | None
    reason: str
    advice: str = ""


class InternalError(AgentEvent):
    """The computer agent itself failed (a bug, a browser crash): ``error`` is the exception as
    text, for the log and the recording; the person hears only
    :data:`appliance.computer_agent.verdict.INTERNAL_FAILURE`."""

    event: Literal["internal_error"] = "internal_error"
    error: str


class PerceptionSkipped(AgentEvent):
    """Perception skipped elements the page script could not read (each ``{what, error}``);
    the rest of the page was read."""

    event: Literal["perception_skipped"] = "perception_skipped"
    skipped: list[dict[str, str]]


class FailureExplained(AgentEvent):
    """The phone agent told the person of a give-up (``problem`` at ``field``), ``delay_ms`` after it came (None: unknown)."""

    event: Literal["failure_explained"] = "failure_explained"
    problem: str
    field: str | None
    delay_ms: float | None


class SpellingRequested(AgentEvent):
    """The phone agent asked the person to spell ``field`` (``label``), the ``times``-th time."""

    event: Literal["spelling_requested"] = "spelling_requested"
    field: str
    label: str
    times: int


class TypeRequested(AgentEvent):
    """The phone agent offered the person ``field``'s box (``label``) on the page to type it in."""

    event: Literal["type_requested"] = "type_requested"
    field: str
    label: str


class WaitsOnBrowser(AgentEvent):
    """The phone agent held its next utterance for the computer agent (``count`` so far)."""

    event: Literal["waits_on_browser"] = "waits_on_browser"
    count: int


class Heard(AgentEvent):
    """The phone agent heard ``text`` from the person."""

    event: Literal["heard"] = "heard"
    text: str


class Say(AgentEvent):
    """The phone agent says ``text`` to the person."""

    event: Literal["say"] = "say"
    text: str


# ---- a form session (forms/) -------------------------------------------------------------------


class FormStarted(SessionEvent):
    """A form task began on ``url`` (``autonomous``: no call; ``task``: the person's words, "" if none)."""

    event: Literal["form_started"] = "form_started"
    url: str
    autonomous: bool
    task: str


class FormFinished(SessionEvent):
    """The form task ended with the computer agent's ``status`` (``detail``; a pooled task: the
    phone agent's, or ``busy``: no worker took it, :mod:`appliance.forms.pool`), after
    ``duration_s``, with ``actions`` (browser actions, all kinds together) and
    ``explained_failures`` (times the person was told a step failed)."""

    event: Literal["form_finished"] = "form_finished"
    status: ComputerStatus | PhoneStatus | Literal["busy"]  # pool: the phone agent's, or no worker took it
    detail: str
    duration_s: float
    actions: int
    explained_failures: int


class CallEnded(SessionEvent):
    """The appliance ends the call: ``reason`` (the task's status, or why it failed)."""

    event: Literal["call_ended"] = "call_ended"
    reason: str


class RecordingNotice(SessionEvent):
    """Whether the call is ``recorded``, and in which ``folder`` (None: not recorded)."""

    event: Literal["recording_notice"] = "recording_notice"
    recorded: bool
    folder: str | None


class TaskTaken(SessionEvent):
    """A pool ``worker`` took the call's task within ``wait_s`` (:mod:`appliance.forms.pool`)."""

    event: Literal["task_taken"] = "task_taken"
    worker: str
    wait_s: float


class PreviewClicked(SessionEvent):
    """The person clicked the live preview at (``x``, ``y``), CSS pixels of the page's viewport."""

    event: Literal["preview_click"] = "preview_click"
    x: float
    y: float


class PreviewKeyPressed(SessionEvent):
    """The person pressed ``key`` in the live preview."""

    event: Literal["preview_key"] = "preview_key"
    key: str


class PoolBusy(SessionEvent):
    """No pool worker took the call's task within ``wait_s``: the person was told, the call ends."""

    event: Literal["pool_busy"] = "pool_busy"
    wait_s: float


class WorkerStarted(SessionEvent):
    """``appliance worker computer``: ``worker`` (host:pid) takes up to ``max_tasks`` at a time from ``redis``."""

    event: Literal["worker_started"] = "worker_started"
    worker: str
    max_tasks: int
    redis: str


class WorkerStopped(SessionEvent):
    """The worker took no more tasks and finished the ones it held."""

    event: Literal["worker_stopped"] = "worker_stopped"
    worker: str


class PoolTaskStarted(SessionEvent):
    """A worker started task ``task_id``'s computer agent on ``url``."""

    event: Literal["task_started"] = "task_started"
    worker: str
    task_id: str
    url: str


class PoolTaskFinished(SessionEvent):
    """Task ``task_id`` ended on the worker after ``duration_s`` (its outcome is on its stream)."""

    event: Literal["task_finished"] = "task_finished"
    worker: str
    task_id: str
    duration_s: float


class PoolTaskFailed(SessionEvent):
    """Task ``task_id`` could not run on the worker (``error``: its page refused, its bus lost)."""

    event: Literal["task_failed"] = "task_failed"
    worker: str
    task_id: str
    error: str


class PoolTaskSkipped(SessionEvent):
    """The worker read task ``task_id`` and did not start it (``why``: withdrawn, not taken in time)."""

    event: Literal["task_skipped"] = "task_skipped"
    worker: str
    task_id: str
    why: str


class PhoneAgentStarted(SessionEvent):
    """The session started the phone agent, ``by`` a message type, for ``purpose``, asking for ``fields`` (names)."""

    event: Literal["phone_agent_started"] = "phone_agent_started"
    by: str
    purpose: str
    fields: list[str]


# ---- the simulated person (simulate/), in the person's own log ---------------------------------


class Simulation(SessionEvent):
    """A simulated session on ``url`` with the person of ``profile`` (``autonomous``: no call)."""

    event: Literal["simulation"] = "simulation"
    url: str
    profile: str
    autonomous: bool


class Report(SessionEvent):
    """The simulated run's report, as ``simulate form`` prints it less its ``messages``.

    Its keys are that report's (``fields``, ``field_accuracy``, ``accepted``, ``submitted``,
    ``stages_s``…), typed where the report is built (``simulate``), so they are left open here.
    """

    model_config = ConfigDict(extra="allow")

    event: Literal["report"] = "report"


class Person(SessionEvent):
    """One decision of the simulated person: it ``heard`` the bot, took it as ``topic`` of ``kind``, and ``said`` (None: nothing)."""

    event: Literal["person"] = "person"
    heard: str
    topic: str
    kind: str
    said: str | None


class PersonTyped(SessionEvent):
    """The simulated person typed ``value`` for ``topic`` in the page's box."""

    event: Literal["person_typed"] = "person_typed"
    topic: str
    value: str


class PersonHeard(SessionEvent):
    """The simulated person heard (or read) the bot say ``text``."""

    event: Literal["person_heard"] = "person_heard"
    text: str


class PersonSaid(SessionEvent):
    """The simulated person said ``written`` (``spoken``: as synthesised), ``audio_s`` long."""

    event: Literal["person_said"] = "person_said"
    written: str
    spoken: str
    audio_s: float


class PersonAsr(SessionEvent):
    """The person's ear: bot utterance ``n`` (``audio_s``, in ``pieces``) heard as ``text`` in
    ``asr_ms``; ``first_pass`` when a second pass changed it; ``bot_start_ts``/``bot_end_ts``
    (Unix ms) when the bot's speech span is known."""

    event: Literal["person_asr"] = "person_asr"
    n: int
    text: str
    audio_s: float
    asr_ms: float
    pieces: int
    first_pass: str | None
    bot_start_ts: int | None = None
    bot_end_ts: int | None = None


class PersonTypeRefused(SessionEvent):
    """The page refused the value the person typed for ``field``: HTTP ``status``, ``error`` its body."""

    event: Literal["person_type_refused"] = "person_type_refused"
    field: str
    value: str
    status: int
    error: str


# ---- a Werewolf game (werewolf/), the user seat's own view -------------------------------------


class WwStarted(SessionEvent):
    """A game began: the user is ``seat`` with ``role``, among ``seats``, dealt by ``seed``."""

    event: Literal["ww_started"] = "ww_started"
    seat: str
    role: str
    seats: list[str]
    seed: int


class WwTable(SessionEvent):
    """The user seat's table changed: its ``seat`` and ``role``, the ``seats``, who is ``alive`` and ``dead``, the ``phase`` and ``round``."""

    event: Literal["ww_table"] = "ww_table"
    seat: str
    role: str
    seats: list[str]
    alive: list[str]
    dead: list[str]
    phase: str
    round: int


class WwSpeaker(SessionEvent):
    """Whose public turn it is in ``phase``: ``seat`` (None: nobody the user sees, e.g. at night)."""

    event: Literal["ww_speaker"] = "ww_speaker"
    seat: str | None
    phase: str


class WwAsk(SessionEvent):
    """The judge asked the user ``question`` for ``tool``, ``attempt`` (0: first); the seat listens."""

    event: Literal["ww_ask"] = "ww_ask"
    tool: str
    question: str
    attempt: int


class WwHeard(SessionEvent):
    """The user's answer at ``attempt``, as ``transcript``."""

    event: Literal["ww_heard"] = "ww_heard"
    transcript: str
    attempt: int


class WwCaption(SessionEvent):
    """``seat``'s public speech ``text`` (the user's own is its transcript)."""

    event: Literal["ww_caption"] = "ww_caption"
    seat: str
    text: str


class WwClaim(SessionEvent):
    """``seat``'s last speech claimed something: ``text`` says what in a few words (its card shows it)."""

    event: Literal["ww_claim"] = "ww_claim"
    seat: str
    text: str


class WwBallots(SessionEvent):
    """Vote ``round``'s ballots, revealed once every vote is in: voter → the seat voted for (None: abstained)."""

    event: Literal["ww_ballots"] = "ww_ballots"
    round: int
    votes: dict[str, str | None]


class WwRecap(SessionEvent):
    """The person asked for a recap (``question``, as heard; its ``kind``: night, votes, claims,
    table) and was answered ``text`` on the line, from the user seat's own view only."""

    event: Literal["ww_recap"] = "ww_recap"
    question: str
    kind: str
    text: str


class WwPlaying(SessionEvent):
    """``seat``'s speech ``text`` is heard now, in its ``voice`` (a description; "" if none)."""

    event: Literal["ww_playing"] = "ww_playing"
    seat: str
    text: str
    voice: str


class WwLog(SessionEvent):
    """Any other line ``text`` of the user seat's view (deaths, ballots, its own checks)."""

    event: Literal["ww_log"] = "ww_log"
    text: str


class WwRetry(SessionEvent):
    """The user's answer was not a clear, legal choice: asked again (``attempt``)."""

    event: Literal["ww_retry"] = "ww_retry"
    attempt: int


class WwApplied(SessionEvent):
    """The user's ``action`` (the arguments of ``tool``) was applied."""

    event: Literal["ww_applied"] = "ww_applied"
    tool: str
    action: dict[str, Any]


class WwOver(SessionEvent):
    """The game ended: the judge's ``status`` (``finished``, ``failed_closed``), the ``winner``
    team (None: none), ``complete_rounds`` and every seat's ``roles``."""

    event: Literal["ww_over"] = "ww_over"
    status: str
    winner: str | None
    complete_rounds: int
    roles: dict[str, str]
