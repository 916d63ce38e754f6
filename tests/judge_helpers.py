"""Shared by the judge's strategy tests: scripted games (no LLM)."""

from appliance.judge import views
from appliance.judge.beliefs import Beliefs, beliefs_of
from appliance.judge.rules import act, advance, new_game, next_turn
from appliance.judge.state import GameState, Phase, Role, Speak

W, S, X, V = Role.WEREWOLF, Role.SEER, Role.WITCH, Role.VILLAGER
# P1, P2 werewolves; P3 seer; P4 witch; P5–P8 villagers
ROLES_8 = (W, W, S, X, V, V, V, V)


def scripted(*actions, roles=ROLES_8, seed=7) -> GameState:
    """Apply ``(seat, action)`` pairs in order, advancing phases whenever no seat is due
    (also after the last); a ``str`` action is a speech."""
    s = new_game(seed, len(roles), user_seat="P8", roles=roles)
    for seat, action in actions:
        s = settle(s)
        s = act(s, seat, Speak(action) if isinstance(action, str) else action)
    return settle(s)


def settle(s: GameState) -> GameState:
    """Advance until some seat must act (or the game is over)."""
    while next_turn(s) is None and s.phase is not Phase.OVER:
        s = advance(s)
    return s


def beliefs(state: GameState, seat: str) -> Beliefs:
    return beliefs_of(views.view(state, seat))
