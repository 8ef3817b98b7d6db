"""Signup takes the owner's address on trust, so the platform mails it once (a welcome with a link) and nothing else
until a mailed link is used; the magic link of the signup's answer (never mailed) confirms nothing."""
import uuid

from services.accounts.identity.sign_in import WELCOME_SUBJECT
from tests.api import mailed_link


async def queue_to_owner(api, account) -> dict:
    status, email, _ = await api.request("POST", "/api/v1/emails", key=account["key"], json={
        "to": account["email"], "subject": "Note to self", "body": "Call Dana back."})
    assert status == 201, email
    return email


async def test_only_a_mailed_link_confirms_the_owners_address(api, account, stack):
    # The signup's own magic link was used (the fixture's session): the address is not confirmed by it.
    assert (await queue_to_owner(api, account))["recipient"] == "other"
    [welcome] = await api.mails(stack, account["email"], WELCOME_SUBJECT, at_least=1)
    assert welcome["from"].startswith("Switchboard <") and "confirm" in welcome["body"]
    link = mailed_link(welcome)
    status, _, headers = await account["dashboard"].open_link(link)
    assert status == 303 and headers["Location"] == "/dashboard"
    assert (await queue_to_owner(api, account))["recipient"] == "owner"
    status, _, _ = await account["dashboard"].open_link(link)
    assert status == 401  # a link works once


async def test_a_signup_gets_one_welcome_mail(api, stack):
    address = f"Welcome.{uuid.uuid4().hex[:8]}@Example.com"
    await api.signup(email=address)
    assert len(await api.mails(stack, address, WELCOME_SUBJECT, at_least=1)) == 1
