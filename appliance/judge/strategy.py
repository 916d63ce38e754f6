"""The rules and role strategies as a seat's prompt states them (in our own words): pure text."""

from __future__ import annotations

from appliance.judge.state import Role

RULES = (
    "Rules: two werewolves, one seer, one witch, the rest villagers. Each night the werewolves attack a seat, "
    "the seer learns whether one seat is a werewolf, and the witch may save the victim once and poison a seat "
    "once. Each day every living seat speaks once, then everyone votes; the most votes is out, a tie saves "
    "everyone. Villagers win when no werewolf is left; werewolves win when they are as many as the others."
)

#: role strategies, in our own words
STRATEGIES = {
    Role.WEREWOLF: (
        "Keep your role hidden: talk like a worried villager and never name your partner. Go along with the "
        "table's suspicion of a villager, never of a seat you attacked that survived. If a seer claimant names "
        "you, or the whole table suspects you, claim to be the seer and name your accuser a werewolf; a partner "
        "nobody named stays quiet. Leave a seer the table believes alone by day and attack her at night. Vote "
        "for your partner only when the village votes it out anyway."
    ),
    Role.SEER: (
        "Check a different seat each night, starting with the seats you trust least. When a check finds a "
        "werewolf, say so in the day, name it and ask everyone to vote it out. Until then keep your role quiet "
        "and vote for the seat whose words or votes look most suspicious."
    ),
    Role.WITCH: (
        "Saving the first night's victim is usually worth your antidote. Poison only a seat that the talk and "
        "the votes show is very likely a werewolf. Keep your role quiet unless revealing it saves the village."
    ),
    Role.VILLAGER: (
        "You have no night power, so reason. Notice who accuses without reason, who defends whom and who votes "
        "together. Trust a seer claim that fits the votes. Vote for the seat whose words and votes fit a "
        "werewolf best, never at random."
    ),
}
