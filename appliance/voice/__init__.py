"""The shared audio stack: pipecat processors and services, transports, the server, benchmarks.

Models and the session:

- :mod:`~appliance.voice.runtime` — ``VoiceRuntime``: ASR, TTS voice and LLM clients by slot name, loaded once.
- :mod:`~appliance.voice.asr` — faster-whisper fed only the audio there is; the silence rule.
- :mod:`~appliance.voice.piper_synth` — Piper synthesis, voice styles (length, noise, pitch), resampling.
- :mod:`~appliance.voice.session` — one conversation: event log, recording folder, LLM context.
- :mod:`~appliance.voice.events` — ``EventLog`` and ``TurnObserver`` (per-turn latency events).
- :mod:`~appliance.voice.wav` — writing mono 16-bit WAV files.

pipecat extensions (each a processor or service):

- :mod:`~appliance.voice.pipeline` — the flat processor list (``build_task``).
- :mod:`~appliance.voice.turns` — the user-turn strategies: Smart Turn + words (or the pause rule), speculation,
  barge-in that knows a backchannel.
- :mod:`~appliance.voice.stt` — streaming Whisper STT: interims, the early final.
- :mod:`~appliance.voice.markers` — control markers and the clause chunker (``SpeakableTextProcessor``).
- :mod:`~appliance.voice.clause_tts`, :mod:`~appliance.voice.piper_tts`, :mod:`~appliance.voice.fish_tts` —
  clause-level TTS with per-clause style; Piper (embedded) and Fish Audio (cloud).
- :mod:`~appliance.voice.line` — ``LineProcessor``: an agent speaks and hears in the LLM's place.
- :mod:`~appliance.voice.acks` — ``Acknowledger``: "One moment." when the answer is slow (``turn.ack``).
- :mod:`~appliance.voice.apology` — ``LLMApology``: a spoken apology when the LLM fails a reply.
- :mod:`~appliance.voice.playout` — ``Playout``: paces the bot's audio, pauses it on a duck or the VAD, resumes it.
- :mod:`~appliance.voice.decisions` — the frames one processor decides and another acts on (backchannel, ahead, ...).

Transports, server and clients:

- :mod:`~appliance.voice.server` — the page, WebRTC signalling, per-session event streams, modes.
- :mod:`~appliance.voice.transports` — WebSocket (with a declared input format), the local sound card, a WAV file.
- :mod:`~appliance.voice.ice` — the loopback ICE host-candidate adapter (aioice skips 127.0.0.1).
- :mod:`~appliance.simulate.webrtc_client` — an aiortc client that joins as a browser would.
- :mod:`~appliance.simulate.page_client` — headless Chromium at the page, its microphone a WAV or WebAudio clips.
- :mod:`~appliance.bench.replay`, :mod:`~appliance.bench.voice`, :mod:`~appliance.cli.voice` —
  ``appliance replay``, ``appliance bench voice``, ``appliance serve``.
"""
