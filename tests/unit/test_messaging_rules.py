"""Messaging rules: status order, keywords, consent and content (quiet hours: tests/unit/test_compliance_decision.py)."""
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from core.errors import ServiceError
from providers.messaging.adapter import carrier_error
from providers.messaging.simulator import optout
from services.messaging import domain
from services.messaging.domain import ConsentEvidence, sent_match

NOW = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)  # 10:00 in Los Angeles, 13:00 in New York


def test_a_message_status_only_moves_forward():
    assert domain.moves_forward("pending", "queued") and domain.moves_forward("queued", "delivered")
    assert domain.moves_forward("queued", "sending") and domain.moves_forward("sending", "sent")
    assert domain.moves_forward("sent", "undelivered")
    assert not domain.moves_forward("delivered", "sent")  # a late callback
    assert not domain.moves_forward("delivered", "failed") and not domain.moves_forward("sent", "sent")
    assert not domain.moves_forward("received", "delivered") and not domain.moves_forward("sent", "no-such")
    assert [domain.event_of_status(s) for s in ("sent", "delivered", "undelivered", "failed")] == [
        None, "sms.delivered", "sms.failed", "sms.failed"]


@pytest.mark.parametrize("body, kind", [
    ("STOP", "opt_out"), ("  stop ", "opt_out"), ("Unsubscribe", "opt_out"), ("quit", "opt_out"),
    ("STOPALL", "opt_out"), ("cancel", "opt_out"), ("end", "opt_out"), ("start", "opt_in"), ("Yes", "opt_in"),
    ("UNSTOP", "opt_in"), ("help", "help"), (" INFO", "help"), ("please stop texting", None), ("hello", None),
    ("revoke", "opt_out"), ("OptOut", "opt_out")])
def test_keywords_are_the_whole_message_in_any_case(body, kind):
    assert domain.keyword(body) == kind


def test_our_keywords_are_the_ones_the_providers_opt_out_handling_blocks_on():
    """What the provider blocks on (Twilio's default keywords, as the simulator's opt-out handling has them) is what
    we record as an opt-out: a keyword only one side knew would leave our consent history and the provider's block
    list disagreeing."""
    assert domain.OPT_OUT_KEYWORDS == optout.OPT_OUT and domain.OPT_IN_KEYWORDS == optout.OPT_IN
    assert domain.HELP_KEYWORDS == optout.HELP
    assert {domain.keyword(word) for word in optout.OPT_OUT} == {"opt_out"}
    assert {domain.OPT_OUT_TYPES[optout.opt_out_type(word)] for word in optout.OPT_IN} == {"opt_in"}


@pytest.mark.parametrize("body, opt_out_type, kind", [
    ("ARRET", "STOP", "opt_out"), ("Commencer", "start", "opt_in"), ("AIDE", "HELP", "help"),
    ("STOP", "", "opt_out"), ("hello", None, None), ("STOP", "SOMETHING-NEW", "opt_out")])
def test_the_providers_opt_out_type_names_the_keyword(body, opt_out_type, kind):
    """Advanced Opt-Out lets a business add keywords of its own (another language's): the webhook's OptOutType says
    which kind the provider took the text for, and wins over our own list."""
    assert domain.keyword(body, opt_out_type) == kind


def test_a_carrier_error_is_told_in_the_providers_words():
    assert carrier_error("30006") == "Landline or unreachable carrier (30006)"
    assert carrier_error("30999") == "the carrier reported error 30999"
    assert carrier_error("not-a-number") == "the carrier reported error not-a-number"


def test_an_opt_out_is_confirmed_once_then_silence():
    assert "unsubscribed" in domain.keyword_reply("opt_out", "Acme", already=False)
    assert domain.keyword_reply("opt_out", "Acme", already=True) is None
    assert "resubscribed" in domain.keyword_reply("opt_in", "Acme", already=False)
    assert domain.keyword_reply("help", "Acme", already=False).startswith("Acme: Reply STOP")


def evidence(kind: str, days_ago: float) -> ConsentEvidence:
    return ConsentEvidence(kind, NOW - timedelta(days=days_ago))


def test_consent_follows_the_latest_explicit_choice_then_conversation():
    assert domain.consent_state([], NOW) == "none"
    assert domain.consent_state([evidence("conversational", 2)], NOW) == "conversational"
    assert domain.consent_state([evidence("conversational", 31)], NOW) == "none"  # the window passed
    assert domain.consent_state([evidence("opt_in", 400)], NOW) == "opted_in"
    # STOP wins over any later conversation until START.
    assert domain.consent_state([evidence("opt_out", 5), evidence("conversational", 1)], NOW) == "opted_out"
    assert domain.consent_state([evidence("opt_in", 1), evidence("opt_out", 5)], NOW) == "opted_in"
    assert domain.consent_state([evidence("opt_out", 1), evidence("opt_in", 5)], NOW) == "opted_out"
    assert [domain.may_text(s) for s in domain.CONSENT_STATES] == [True, False, True, False]


@pytest.mark.parametrize("body, rule", [
    ("   ", "empty"), ("x" * 1601, "too_long"), ("See https://bit.ly/abc123", "link_shortener"),
    ("tinyurl.com/x for details", "link_shortener"), ("Best CBD oil in town", "prohibited_cannabis"),
    ("Need a PAYDAY LOAN?", "prohibited_high_risk_lending")])
def test_content_rules_name_the_rule_that_matched(body, rule):
    refusal = domain.content_refusal(body)
    assert refusal.code == "content_blocked" and refusal.message.startswith(f"rule {rule}:")


def test_ordinary_messages_and_full_links_pass():
    assert domain.content_refusal("Your quote is ready: https://acme.example.com/quotes/42") is None
    assert domain.content_refusal("x" * 1600) is None
    assert domain.content_refusal("The thermostat is in the hallway") is None  # "thc" only as a word


def test_a_text_of_unknown_outcome_is_found_among_the_providers_messages():
    at = datetime(2026, 11, 24, 22, 30, tzinfo=UTC)

    def listed(sid: str, body: str, seconds: int) -> dict:
        return {"sid": sid, "body": body, "date_created": format_datetime(at + timedelta(seconds=seconds), usegmt=True)}
    messages = [listed("SM3", "Other", 5), listed("SM2", "Hi", 2), listed("SM1", "Hi", -600)]
    assert sent_match(messages, "Hi", at, set())["sid"] == "SM2"
    assert sent_match(messages, "Hi", at, {"SM2"}) is None  # another text of ours; SM1 is from before the send
    assert sent_match([{"sid": "SM9", "body": "Hi", "date_created": "not a date"}], "Hi", at, set()) is None


def test_a_businesss_calling_hours_are_whole_hours_in_order():
    assert domain.calling_hours(None) is None
    assert str(domain.calling_hours((9, 17))) == "09:00-17:00" and str(domain.calling_hours((0, 23))) == "00:00-23:00"
    for wrong in ((17, 9), (9, 9), (-1, 5), (8, 24)):
        with pytest.raises(ServiceError) as refused:
            domain.calling_hours(wrong)
        assert refused.value.code == "invalid_request" and "business_hours" in refused.value.message, wrong
