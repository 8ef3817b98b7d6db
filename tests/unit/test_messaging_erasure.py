"""A person's erasure from the messaging service (services/messaging/erasure.py, suppression.py) in the fast tier: the
suppression hash, the request's checks, the report's lines and the redaction of an event (plain functions); the
checks that ask whether a number may be texted or called, which ask of its hash too (on the in-memory database);
and the provider's redaction through the real client against the messaging simulator served in this process."""
import hashlib
import hmac
from datetime import timedelta

import pytest

from core.compliance import decision as compliance
from core.errors import ServiceError
from core.ids import new_id
from core.tenant import Tenant, acting_as
from providers.messaging.simulator.app import MESSAGES
from services.messaging import domain
from services.messaging.compliance_service import Compliance
from services.messaging.consent_service import Consents
from services.messaging.erasure import Erasures, Removed, marker, numbers_of, person, redacted_event
from services.messaging.records import CalleeFacts, National
from services.messaging.repositories.erasure import FoundText
from services.messaging.repositories.unit import messaging_uow
from services.messaging.suppression import Suppression, is_hashed, merged
from tests.memory.messaging import MEMORY
from tests.unit.conftest import MIDDAY

PHONE, OTHER, SENDER = "+14155550123", "+14155550124", "+14155550100"
KEY = "a-key-of-the-tests"


def test_the_suppression_hash_is_an_hmac_of_the_number_under_the_key_never_a_plain_hash():
    hashed = Suppression(KEY).hash(PHONE)
    assert hashed == "hmac-sha256:" + hmac.new(KEY.encode(), PHONE.encode(), hashlib.sha256).hexdigest()
    assert is_hashed(hashed) and not is_hashed(PHONE)
    assert hashlib.sha256(PHONE.encode()).hexdigest() not in hashed  # trying every number finds nothing
    assert Suppression("another key").hash(PHONE) != hashed != Suppression(KEY).hash(OTHER)
    assert Suppression(KEY).aliases([PHONE, OTHER]) == {hashed: PHONE, Suppression(KEY).hash(OTHER): OTHER}
    assert KEY not in repr(Suppression(KEY))
    with pytest.raises(ValueError):
        Suppression("")


def test_what_is_kept_under_the_number_and_under_its_hash_counts_as_one():
    early, late = MIDDAY - timedelta(days=2), MIDDAY - timedelta(days=1)
    number = CalleeFacts(late, [domain.ConsentEvidence("opt_in", late)], National(MIDDAY, False))
    hashed = CalleeFacts(early, [domain.ConsentEvidence("opt_out", early)], None)
    both = merged([number, hashed])
    assert both == CalleeFacts(early, [domain.ConsentEvidence("opt_out", early), domain.ConsentEvidence("opt_in", late)],
                               National(MIDDAY, False))
    assert merged([CalleeFacts(None, [], None), CalleeFacts(None, [], None)]) == CalleeFacts(None, [], None)


def test_the_request_is_checked_and_ids_that_name_nothing_are_dropped(business_id):
    message_id = new_id()
    who = person(business_id, "er_1", [PHONE, PHONE, OTHER], ["Dana@Example.COM", "dana@example.com"],
                 [message_id, "not-an-id", message_id], True)
    assert (who.phones, who.emails, who.message_ids, who.erasure_id) == (
        (PHONE, OTHER), ("dana@example.com",), (message_id,), "er_1")
    for bad in ({"phones": ["4155550123"]}, {"emails": ["not an address"]}, {"business_id": "x"}):
        asked = {"business_id": business_id, "phones": [], "emails": []} | bad
        with pytest.raises(ServiceError) as refused:
            person(asked["business_id"], "er_1", asked["phones"], asked["emails"], [], True)
        assert refused.value.code == "invalid_request"


def test_the_person_is_their_numbers_and_those_their_texts_were_with():
    texts = [FoundText("m1", "c1", "SM1", OTHER), FoundText("m2", "c1", None, PHONE)]
    assert numbers_of([PHONE], texts) == [PHONE, OTHER]
    assert marker("er_1") == "erased:er_1" and marker("") == "erased"


def test_an_event_about_their_text_loses_their_number_and_what_they_wrote():
    received = {"message_id": "m1", "from": PHONE, "to": SENDER, "body": "My card is 4111...", "keyword": None}
    assert redacted_event(received, [PHONE], "erased:er_1") == {
        "message_id": "m1", "from": "erased:er_1", "to": SENDER, "body": "", "keyword": None}
    sent = {"message_id": "m2", "from": SENDER, "to": PHONE, "message_sid": "SM2"}
    assert redacted_event(sent, [PHONE], "erased:er_1") == {**sent, "to": "erased:er_1"}
    assert redacted_event(sent, [OTHER], "erased:er_1") == sent  # another's text is left alone
    failed = {"message_id": "m3", "to": PHONE, "error_message": f"The 'To' number {PHONE} is not a valid phone number."}
    assert redacted_event(failed, [PHONE], "erased:er_1")["error_message"] == (
        "The 'To' number erased:er_1 is not a valid phone number.")


def test_the_report_has_every_line_even_at_zero():
    lines = Removed(provider_messages=2, texts=2, suppressed=1).items()
    assert ("provider.message", "redacted", 2) in lines and ("messaging.message_body", "redacted", 2) in lines
    assert ("messaging.dnc", "suppressed", 1) in lines and ("messaging.consent_events", "redacted", 0) in lines
    assert all(n == 0 for _, _, n in Removed().items()) and len(Removed().items()) == len(lines)


# -- the checks ask of the hash too ----------------------------------------------------------------------------

@pytest.fixture
def caller(business_id):
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,), api_key_id="fast")) as who:
        yield who


@pytest.fixture
def suppression() -> Suppression:
    return Suppression(KEY)


async def kept_under_the_hash(database, business_id, suppression, *, listed: bool, opted_out: bool,
                              at=MIDDAY) -> None:
    """What an erasure leaves of PHONE: its entry on the list and its STOP, under the hash."""
    async with messaging_uow(database, MEMORY).transaction() as work:
        if listed:
            await work.consent.add_dnc(id=new_id(), business_id=business_id, phone=suppression.hash(PHONE),
                                       reason="erased", added_by="privacy:er_1", created_at=at)
        if opted_out:
            await work.consent.add_consent(business_id=business_id, phone=suppression.hash(PHONE), kind="opt_out",
                                           source="keyword", actor=suppression.hash(PHONE), created_at=at)


@pytest.mark.parametrize(("listed", "opted_out", "code"), [(True, False, "number_on_dnc"),
                                                             (False, True, "number_opted_out")])
async def test_an_erased_number_on_the_list_or_opted_out_is_refused_a_call(database, business_id, caller, clock,
                                                                           suppression, listed, opted_out, code):
    uow = messaging_uow(database, MEMORY)
    consents = Consents(uow, frozenset(), suppression=suppression)
    await consents.record(PHONE, None, "opted_in", None)  # before the STOP
    clock.now += timedelta(minutes=1)
    await kept_under_the_hash(database, business_id, suppression, listed=listed, opted_out=opted_out, at=clock.now)
    rules = Compliance(uow, frozenset(), compliance.Policy(), suppression=suppression)
    decided = await rules.decide_call(domain.CallToDecide(business_id=business_id, phone=PHONE, actor="enforced_call"))
    assert (decided.outcome, decided.code) == ("refuse", code)
    assert decided.phone == suppression.hash(PHONE) and PHONE not in decided.message  # not written back
    [standing] = await rules.standings(business_id, [PHONE])
    assert standing.standing.consent == ("opted_out" if opted_out else "opted_in")
    assert (standing.standing.business_dnc_since is not None) == listed
    unkeyed = Compliance(uow, frozenset(), compliance.Policy())  # without the key the hash is never asked of
    assert (await unkeyed.decide_call(domain.CallToDecide(business_id=business_id, phone=PHONE,
                                                          actor="enforced_call"))).outcome != "refuse"


async def test_the_list_and_the_consent_history_of_a_number_show_what_its_hash_keeps(database, business_id, caller,
                                                                                    clock, suppression):
    await kept_under_the_hash(database, business_id, suppression, listed=True, opted_out=True)
    consents = Consents(messaging_uow(database, MEMORY), frozenset(), suppression=suppression)
    checked = await consents.check_dnc(PHONE, None)
    assert checked.listed and checked.entry is not None and checked.entry.phone == suppression.hash(PHONE)
    _, _, history = await consents.get(PHONE, None)
    assert [row.kind for row in history] == ["opt_out"]
    removed = await consents.remove_dnc(PHONE, None, "they asked to hear from us again")
    assert removed.removed_at is not None and not (await consents.check_dnc(PHONE, None)).listed
    assert not (await consents.check_dnc(OTHER, None)).listed


# -- the provider's redaction ----------------------------------------------------------------------------------

async def test_the_provider_redacts_the_body_and_deletes_the_media_as_twilio_does(sms):
    sent = await sms.client.send_message(to=PHONE, from_=SENDER, body="Your code is 123456")
    messages = sms.server.app[MESSAGES]
    messages.attach_media(sent["sid"], ["image/jpeg", "image/png"])
    redacted = await sms.client.redact_message(sent["sid"])
    assert redacted is not None and redacted["body"] == "" and redacted["sid"] == sent["sid"]
    shown = await sms.client.get_message(sent["sid"])
    assert (shown["body"], shown["to"], shown["num_segments"]) == ("", PHONE, "1")  # kept for billing
    assert messages.media_page(sent["sid"], {})["media_list"] == []
    assert (await sms.client.redact_message(sent["sid"]))["body"] == ""  # again: the same
    assert await sms.client.redact_message("SM" + "0" * 32) is None  # nothing there


async def test_the_simulator_refuses_an_update_twilio_refuses(sms):
    sent = await sms.client.send_message(to=PHONE, from_=SENDER, body="Hi")
    url = f"{sms.url}/2010-04-01/Accounts/{sms.client.account_sid}/Messages/{sent['sid']}.json"
    auth = sms.client._http().headers["Authorization"]
    for form, code in (({"Body": "something else"}, 30400), ({}, 30400), ({"Body": "", "Status": "canceled"}, 30400)):
        async with sms.session.post(url, data=form, headers={"Authorization": auth}) as r:
            assert (r.status, (await r.json())["code"]) == (400, code)
    assert (await sms.client.get_message(sent["sid"]))["body"] == "Hi"


async def test_a_provider_that_cannot_redact_stops_the_erasure_before_anything_here(sms, business_id):
    """Provider first: when it fails, the erasure answers unavailable (the privacy job asks again) having written
    nothing here, so the next attempt finds the texts again."""
    sent = await sms.client.send_message(to=PHONE, from_=SENDER, body="Hi")
    await sms.fail_next(503)
    erasures = Erasures(None, sms.client, Suppression(KEY))  # never reaches the database: the provider fails first
    with pytest.raises(ServiceError) as failed:
        await erasures._at_the_provider(person(business_id, "er_1", [PHONE], [], [], True),
                                        [FoundText(new_id(), new_id(), sent["sid"], PHONE)])
    assert failed.value.code == "unavailable" and "er_1" in failed.value.message
    assert (await sms.client.get_message(sent["sid"]))["body"] == "Hi"
