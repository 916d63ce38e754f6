"""aiortc's audio receive buffer, cut to what a call needs.

aiortc (1.14, ``aiortc/rtcrtpreceiver.py``) gives each audio receiver
``JitterBuffer(capacity=16, prefetch=4)``: a packet is decoded only once four later packets
have come, so every uplink waits 80 ms at 20 ms a packet (issue 28, transport). pipecat's
input takes frames as they come, and the VAD and the ASR need no even pacing, so a client
may let each packet go as soon as the next one has come (``prefetch=0``: a frame is known
whole then). The simulated person's client does (it hears the bot as a browser would). The
server does not, yet: with its uplink 60 ms sooner, the barge-in ear's first interims came
on less of a short sound, and "mm-hm" took the turn in 2 of 3 runs of
``test_mm_hm_lets_the_bot_go_on_and_stop_wait_a_moment_stops_it`` (0 of 4 without); the
interims' timing has to be tuned against it first. Packets that arrive out of order still go out in order (the buffer waits
for the missing one); a lost one still holds the rest until the 16-packet buffer overflows,
as before. aiortc has no setting for it: the receiver's private buffer is replaced, in this
one place; ``tests/test_rtp.py`` checks it on the pinned aiortc.
"""

from __future__ import annotations

import logging

from aiortc import RTCPeerConnection
from aiortc.jitterbuffer import JitterBuffer

log = logging.getLogger(__name__)

_BUFFER = "_RTCRtpReceiver__jitter_buffer"  # the receiver's private JitterBuffer
CAPACITY = 16  # packets, as aiortc's own audio buffer


def receive_at_once(pc: RTCPeerConnection) -> int:
    """Give each audio receiver of ``pc`` a buffer without prefetch (call it once the remote
    description is set: that makes the receivers, before any packet comes). Returns how many
    receivers changed; an aiortc whose receiver no longer has the buffer is logged and left."""
    changed = 0
    for transceiver in pc.getTransceivers():
        if transceiver.kind != "audio":
            continue
        receiver = transceiver.receiver
        if not isinstance(getattr(receiver, _BUFFER, None), JitterBuffer):
            log.warning("aiortc's audio receiver has no %s: its 80 ms prefetch stays", _BUFFER)
            continue
        setattr(receiver, _BUFFER, JitterBuffer(capacity=CAPACITY, prefetch=0))
        changed += 1
    return changed
