"""The Werewolf voice library (``voices/werewolf.yaml``): one distinct voice per seat.

Every voice is the one offline Piper speaker with its own :class:`VoiceStyle`; the file
maps ``P1``…``P8``, ``user_sim`` (the simulated person) and ``narrator`` (the judge, in
human mode) to styles and describes each.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from appliance.config import DEFAULT_CONFIG, ConfigError
from appliance.voice.piper_synth import VoiceStyle

REPO_ROOT = DEFAULT_CONFIG.parent.parent


@dataclass(frozen=True)
class VoiceBook:
    """Seat id → style, the simulated user's and the narrator's styles, and each voice's description."""

    seats: dict[str, VoiceStyle]
    user_sim: VoiceStyle
    narrator: VoiceStyle
    descriptions: dict[str, str]


def load(path: str | Path) -> VoiceBook:
    """Read a voice library; a relative ``path`` is relative to the repository root.

    Raises:
        ConfigError: unreadable file, a bad style, a seat missing among P1–P8, or two
            voices that are the same (the user's and the narrator's included).
    """
    p = Path(path) if Path(path).is_absolute() else REPO_ROOT / path
    try:
        data = yaml.safe_load(p.read_text())
        seats = {seat: _style(v) for seat, v in data["seats"].items()}
        user = _style(data["user_sim"])
        narrator = _style(data["narrator"])
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"{p}: not a voice library: {e}") from None
    missing = [f"P{i}" for i in range(1, 9) if f"P{i}" not in seats]
    if missing:
        raise ConfigError(f"{p}: no voice for {', '.join(missing)}")
    styles = list(seats.values()) + [user, narrator]
    if len(set(styles)) != len(styles):
        raise ConfigError(f"{p}: two voices have the same style; every seat, user_sim and the narrator must differ")
    desc = {seat: str(v.get("description", "")) for seat, v in data["seats"].items()}
    desc["user_sim"] = str(data["user_sim"].get("description", ""))
    desc["narrator"] = str(data["narrator"].get("description", ""))
    return VoiceBook(seats=seats, user_sim=user, narrator=narrator, descriptions=desc)


def _style(v: dict) -> VoiceStyle:
    return VoiceStyle(
        length_scale=float(v["length_scale"]),
        pitch_semitones=float(v["pitch_semitones"]),
        noise_scale=float(v["noise_scale"]),
        noise_w_scale=float(v["noise_w_scale"]),
    )
