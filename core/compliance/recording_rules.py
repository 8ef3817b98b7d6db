"""Recording consent by state, and whether a recorded call opens with a recording disclosure.

Every call is recorded. Federal law (18 U.S.C. § 2511(2)(d)) and most states let one party to a call (the business)
consent to recording it; the rows below are the states whose law needs every party's consent (or, where the statute
says so, every party's knowledge or a warning). A state not listed is one-party. The state of a callee is presumed
as the calling windows presume it (core.compliance.rules): the area code's state and the state the lead says they
live in, both applying, so a call to a 415 number of a lead who lives in New York is judged under California's law.

How the rows were read (each row's comment gives the facts and any doubt):

- A disclosure spoken at the start of the call, after which the callee stays on the line or says yes, is the
  consent (or the notice) these statutes ask for: CT § 52-570d(a)(2), WA RCW 9.73.030(3) and MT § 45-8-213(2)(a)
  say so in words; elsewhere courts and the usual business practice read continuing after a disclosure as implied
  consent. A callee who declines ends the call.
- Where a state's statutes conflict (CT, DE) or read one way for telephone calls and another in person (OR), the
  stricter reading is encoded and the comment says so: a disclosure refuses nothing, so a row too many costs a
  sentence on the call.
- A callee nothing places in a US state (a number outside the US or a toll-free one, and no lead's state) may be
  anywhere, an all-party state included, and many countries require notice of business call recording: the
  disclosure is spoken (reason `unplaced`).
- Sources: the statute text where it could be read (state code sites, casetext, lawserver), with the Reporters
  Committee's recording guide and law firms' summaries as corroboration. Not legal advice: counsel should confirm
  the rows.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

ONE_PARTY = "18 U.S.C. § 2511(2)(d) (one-party consent)"


@dataclass(frozen=True)
class RecordingRule:
    """One state whose law needs every party's consent to record a call."""

    state: str  # USPS code
    statute: str


ALL_PARTY_CONSENT: tuple[RecordingRule, ...] = (
    # "without the consent of all parties to a confidential communication ... by means of a ... telephone"; § 632.7
    # (cellular and cordless calls) needs all parties' consent whether or not the call is confidential.
    RecordingRule("CA", "Cal. Penal Code §§ 632(a), 632.7(a)"),
    # Civil: no recording of a private telephonic communication unless preceded by all parties' consent or by a
    # verbal notification recorded at the beginning (§ 52-570d(a)(1)-(2)). The criminal eavesdropping statute
    # (§ 53a-187) is one-party; the civil one is what makes CT all-party for calls.
    RecordingRule("CT", "Conn. Gen. Stat. § 52-570d(a)"),
    # Conflict: the wiretap act (§ 2402(c)(4)) is one-party, the privacy statute (§ 1335(a)(4)) bars intercepting a
    # private telephone message "without the consent of all parties thereto"; the stricter is encoded.
    RecordingRule("DE", "Del. Code tit. 11, § 1335(a)(4)"),
    # Interception is lawful only where "all of the parties to the communication have given prior consent".
    RecordingRule("FL", "Fla. Stat. § 934.03(2)(d)"),
    # Since 2014 (P.A. 98-1142): recording a private conversation "in a surreptitious manner" without the consent
    # of all parties; a disclosed recording is not surreptitious.
    RecordingRule("IL", "720 ILCS 5/14-2(a)"),
    # Lawful where the person is a party "and where all of the parties to the communication have given prior
    # consent" (Mustafa v. State, 323 Md. 65 (1991): two-party).
    RecordingRule("MD", "Md. Code, Cts. & Jud. Proc. § 10-402(c)(3)"),
    # The wiretap statute bars "secret" interception: any party unaware of it makes it secret (Commonwealth v.
    # Jackson, 370 Mass. 502 (1976)); a disclosure makes the recording not secret.
    RecordingRule("MA", "Mass. Gen. Laws ch. 272, § 99(B)(4), (C)(1)"),
    # No recording "without the knowledge of all parties to the conversation", except after a warning (then either
    # party may record, § 45-8-213(2)(a)).
    RecordingRule("MT", "Mont. Code Ann. § 45-8-213(1)(c)"),
    # NRS 200.620 allows a one-party interception of a wire communication only with a court's approval; Lane v.
    # Allstate, 114 Nev. 1176 (1998), reads it as all-party for telephone calls (in person, NRS 200.650, one-party).
    RecordingRule("NV", "NRS 200.620; Lane v. Allstate Ins. Co., 114 Nev. 1176 (1998)"),
    # Interception "without the consent of all parties to the communication" is a crime.
    RecordingRule("NH", "N.H. Rev. Stat. § 570-A:2(I)"),
    # Doubt: ORS 165.540(1)(a) lets a participant record a telecommunication (one-party), while (1)(c) requires
    # that all participants in a conversation be specifically informed, and ORS 165.535 counts video calls as
    # conversations. The issue lists OR; the stricter reading is encoded.
    RecordingRule("OR", "ORS 165.540(1)(c)"),
    # Interception is a felony (§ 5703) unless "all parties to the communication have given prior consent"
    # (§ 5704(4)).
    RecordingRule("PA", "18 Pa.C.S. §§ 5703, 5704(4)"),
    # All participants' consent; an announcement "in any reasonably effective manner" is consent, and when the
    # call is recorded "such announcement shall also be recorded" (RCW 9.73.030(3)). Doubt: a provider that starts
    # recording only once the callee consents (Vapi's consent plan) does not record the announcement itself; the
    # call's transcript keeps it.
    RecordingRule("WA", "RCW 9.73.030(1)(a), (3)"),
)
RULES_BY_STATE = {row.state: row for row in ALL_PARTY_CONSENT}

# The agent's setting (services.agents): when the disclosure is spoken.
AUTO, ALWAYS, OFF = "auto", "always", "off"
MODES = (AUTO, ALWAYS, OFF)
# How the callee consents: by staying on the line after the message, or by saying yes (a no ends the call).
STAY_ON_LINE, VERBAL = "stay-on-line", "verbal"
CONSENT_TYPES = (STAY_ON_LINE, VERBAL)
DEFAULT_MESSAGES = {
    STAY_ON_LINE: "This call is recorded for quality and training purposes. If you do not wish to be recorded, "
                  "please hang up now.",
    VERBAL: "This call is recorded for quality and training purposes. Is that all right with you? Please say yes "
            "or no.",
}
# Why a call had (or had no) disclosure.
ALL_PARTY, UNPLACED, ALWAYS_SPOKEN = "all_party_consent", "unplaced", "always"
ONE_PARTY_ONLY, TURNED_OFF = "one_party_consent", "off"
SPOKEN_REASONS = (ALL_PARTY, UNPLACED, ALWAYS_SPOKEN)
REASONS = (*SPOKEN_REASONS, ONE_PARTY_ONLY, TURNED_OFF)


@dataclass(frozen=True)
class Setting:
    """An agent's recording disclosure: when it is spoken (MODES), the words, and how the callee consents."""

    mode: str = AUTO
    message: str = DEFAULT_MESSAGES[STAY_ON_LINE]
    consent: str = STAY_ON_LINE


DEFAULT_SETTING = Setting()


@dataclass(frozen=True)
class Disclosure:
    """Whether a call opens with the disclosure, and the rule that decided it."""

    spoken: bool
    reason: str  # REASONS
    states: tuple[str, ...]  # the US states the other party may be in
    rules: tuple[RecordingRule, ...]  # the all-party rows among them (listed even when the agent turned it off)

    def record(self) -> dict[str, Any]:
        """As the call record and the decision log keep it."""
        return {"spoken": self.spoken, "reason": self.reason, "states": list(self.states),
                "rules": [{"state": r.state, "statute": r.statute} for r in self.rules]}


def disclosure(states: Iterable[str], mode: str = AUTO) -> Disclosure:
    """The disclosure of a recorded call whose other party may be in any of `states` (USPS codes: the area code's
    and the lead's), under the agent's `mode`: spoken where any of them needs every party's consent, or where no
    state places them; never when the agent turned it off (the business then answers for consent, as with
    compliance skip); always with `always`."""
    placed = tuple(dict.fromkeys(states))
    rules = tuple(RULES_BY_STATE[s] for s in placed if s in RULES_BY_STATE)
    if mode == OFF:
        return Disclosure(False, TURNED_OFF, placed, rules)
    if rules:
        return Disclosure(True, ALL_PARTY, placed, rules)
    if not placed:
        return Disclosure(True, UNPLACED, placed, rules)
    if mode == ALWAYS:
        return Disclosure(True, ALWAYS_SPOKEN, placed, rules)
    return Disclosure(False, ONE_PARTY_ONLY, placed, rules)
