"""What the person at the table hears, in order: each AI seat's speech in its own voice as
soon as it is made, the judge's announcements in the narrator's voice.

A :class:`TableVoice` plays one queue on the person's voice line
(:class:`~appliance.voice.line.LineProcessor`): the judge *queues* what happens (so the
next seat's LLM may work while a speech plays) and the person's own question is said
only after everything queued before it (:meth:`TableVoice.say`). Each item is one
``line.say`` — one utterance, in its speaker's voice from ``voices/werewolf.yaml`` — and
a seat's speech emits ``ww_playing {seat, text, voice}`` as it starts, so the page can
put the seat's name on the card while it is heard. One utterance plays at a time: a recap
queued while the question is said (the person asked during it) waits for its end.
"""

from __future__ import annotations

import asyncio
import logging
import re

from appliance.protocol import Emit
from appliance.voice.piper_synth import VoiceStyle
from appliance.werewolf.voices import VoiceBook

log = logging.getLogger(__name__)


def spoken(line: str) -> str:
    """A line of the seat's view as it is read out (``== Night 2 ==`` → ``Night 2.``)."""
    m = re.fullmatch(r"== (.*) ==", line)
    return f"{m.group(1)}." if m else line


class TableVoice:
    """The person's line as a queue of utterances (see the module docstring).

    ``line``: ``say(text, voice=)``; ``book``: the voices; ``emit``: the session's events.
    """

    def __init__(self, line, book: VoiceBook, emit: Emit):
        self.line = line
        self.book = book
        self.emit = emit
        self.last = ""  # the last utterance queued (the question may skip a phase it repeats)
        self._queue: asyncio.Queue[tuple[str | None, str]] = asyncio.Queue()
        self._worker: asyncio.Task | None = None
        self._saying = asyncio.Lock()  # held while one utterance plays: the line says one thing at a time

    def speech(self, seat: str, text: str) -> None:
        """Queue ``seat``'s speech, in the seat's own voice."""
        self._put(seat, text)

    def announce(self, text: str) -> None:
        """Queue one of the judge's announcements, in the narrator's voice."""
        self._put(None, text)

    async def say(self, text: str) -> None:
        """Say ``text`` (the question to the person, narrator's voice) after everything
        queued before it; return once it was played (or cut off by the person)."""
        await self.drain()
        self.last = text
        async with self._saying:
            await self.line.say(text, voice=self.book.narrator)

    async def drain(self) -> None:
        """Wait until everything queued has been played."""
        await self._queue.join()

    async def close(self, drain: bool = True) -> None:
        """Play what is queued (unless ``drain`` is False: the game failed), then stop the worker."""
        if self._worker is not None:
            if drain:
                await self.drain()
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
            self._worker = None

    def _put(self, seat: str | None, text: str) -> None:
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._play(), name="werewolf-table-voice")
        self.last = text
        self._queue.put_nowait((seat, text))

    def _voice(self, seat: str | None) -> VoiceStyle:
        return self.book.narrator if seat is None else self.book.seats[seat]

    async def _play(self) -> None:
        while True:
            seat, text = await self._queue.get()
            try:
                async with self._saying:
                    if seat is not None:
                        self.emit("ww_playing", seat=seat, text=text, voice=self.book.descriptions.get(seat, ""))
                    await self.line.say(text, voice=self._voice(seat))
            except Exception:  # a failed utterance must not stop the table; the next say reports it
                log.exception("werewolf: could not play %r", text)
            finally:
                self._queue.task_done()
