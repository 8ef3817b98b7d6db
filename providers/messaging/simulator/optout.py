"""Twilio's opt-out keyword handling ("SMS STOP filtering"), on by default for long codes and toll-free numbers.

A text that is one keyword alone (its whole body, any case, spaces around it ignored) is handled by Twilio before
it reaches the number's inbound URL, which still receives it:

- an opt-out keyword (STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, REVOKE, OPTOUT) blocks the texter for that
  sender: Twilio answers with its own confirmation, and every later send from that number to them is refused
  with 400, code 21610, until they opt back in. A reply our server gives in its TwiML is refused the same way
  (recorded `failed`, 21610): it never reaches them;
- an opt-in keyword (START, YES, UNSTOP) lifts the block, with Twilio's confirmation;
- a help keyword (HELP, INFO) gets Twilio's help text (none while the texter is blocked).

So with the default handling a keyword gets Twilio's reply, and a reply of ours to START or HELP is a second one.

How a number is set up (`HANDLINGS`):

- `default`: as above, with Twilio's default replies;
- `advanced`: Advanced Opt-Out on the number's Messaging Service: the same blocking and replies (the simulator
  keeps Twilio's default texts and keywords), and the inbound webhook also carries `OptOutType` (STOP, START or
  HELP) for a keyword text;
- `off`: Twilio's built-in handling turned off for the account (Twilio Support does it on request): no block, no
  reply; keywords reach the inbound URL like any text and its TwiML answers them.

The simulator's handling is `default` unless started with `--opt-out` (SMS_SIM_OPT_OUT); the control plane sets it
for one number (`POST /_simulator/opt-out`). Its numbers are long codes: the carrier-level handling of toll-free
numbers (a "NETWORK MSG" reply, which no setting turns off) is not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass, field

HANDLINGS = ("default", "advanced", "off")
OPT_OUT = frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"})
OPT_IN = frozenset({"START", "YES", "UNSTOP"})
HELP = frozenset({"HELP", "INFO"})
REPLIES = {  # Twilio's default replies
    "STOP": "You have successfully been unsubscribed. You will not receive any more messages from this number. "
            "Reply START to resubscribe.",
    "START": "You have successfully been re-subscribed to messages from this number. Reply HELP for help. Reply "
             "STOP to unsubscribe. Msg&Data Rates May Apply.",
    "HELP": "Reply STOP to unsubscribe. Msg&Data Rates May Apply.",
}


def opt_out_type(body: str) -> str | None:
    """STOP, START or HELP when the text is one of Twilio's keywords (the webhook's OptOutType), else None."""
    word = body.strip().upper()
    if word in OPT_OUT:
        return "STOP"
    if word in OPT_IN:
        return "START"
    return "HELP" if word in HELP else None


@dataclass(frozen=True)
class Handled:
    """What Twilio did with an inbound text before passing it on."""

    opt_out_type: str | None  # the webhook's OptOutType, when it carries one (advanced)
    reply: str | None  # Twilio's own reply to the texter


@dataclass
class OptOuts:
    """Each sender's blocked recipients and how each number handles keywords."""

    handling: str = "default"
    numbers: dict[str, str] = field(default_factory=dict)  # a number's own handling (control plane)
    blocked: set[tuple[str, str]] = field(default_factory=set)  # (our number, the texter who opted out)

    def __post_init__(self) -> None:
        if self.handling not in HANDLINGS:
            raise ValueError(f"opt-out handling must be one of {', '.join(HANDLINGS)}")

    def handling_of(self, number: str) -> str:
        return self.numbers.get(number, self.handling)

    def is_blocked(self, sender: str, recipient: str) -> bool:
        return (sender, recipient) in self.blocked

    def take(self, texter: str, number: str, body: str) -> Handled:
        """A text from `texter` to our `number`, as Twilio's handling of `number` takes it."""
        handling, kind = self.handling_of(number), opt_out_type(body)
        if handling == "off" or kind is None:
            return Handled(None, None)
        if kind == "STOP":
            self.blocked.add((number, texter))
        elif kind == "START":
            self.blocked.discard((number, texter))
        reply = None if kind == "HELP" and self.is_blocked(number, texter) else REPLIES[kind]
        return Handled(kind if handling == "advanced" else None, reply)
