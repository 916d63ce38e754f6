"""aiortc's audio receive buffer without prefetch (appliance/voice/rtp.py), on the pinned aiortc."""

from __future__ import annotations

from aiortc import RTCPeerConnection
from aiortc.rtp import RtpPacket

from appliance.voice.rtp import _BUFFER, receive_at_once


def _frames_out(buffer, sequence: list[int]) -> list[int | None]:
    """For each 20 ms Opus packet of ``sequence`` (sequence numbers) added in turn: the RTP
    timestamp of the frame the buffer lets go (None: it holds it)."""
    out = []
    for seq in sequence:
        packet = RtpPacket(sequence_number=seq, timestamp=seq * 960, payload=b"x")
        packet._data = b"x"  # as the receiver depayloads it
        _, frame = buffer.add(packet)
        out.append(None if frame is None else frame.timestamp)
    return out


async def test_an_audio_packet_is_let_go_when_the_next_one_comes_not_four_later():
    pc = RTCPeerConnection()
    try:
        pc.addTransceiver("audio", direction="recvonly")
        pc.addTransceiver("video", direction="recvonly")
        receiver = pc.getReceivers()[0]
        assert _frames_out(getattr(receiver, _BUFFER), list(range(6))) == [
            None,
            None,
            None,
            None,
            0,
            960,
        ]  # aiortc's own: 80 ms
        assert receive_at_once(pc) == 1  # the audio receiver only
        assert _frames_out(getattr(receiver, _BUFFER), list(range(4))) == [None, 0, 960, 1920]
    finally:
        await pc.close()


async def test_packets_out_of_order_still_go_out_in_order():
    pc = RTCPeerConnection()
    try:
        pc.addTransceiver("audio", direction="recvonly")
        receive_at_once(pc)
        buffer = getattr(pc.getReceivers()[0], _BUFFER)
        assert _frames_out(buffer, [0, 2, 1, 3]) == [None, None, 0, 960]  # 0 waits for the late 1
    finally:
        await pc.close()
