"""A user's URL is read in one place (core.urls): what urllib or yarl cannot read is the caller's 400 naming the
field, never a ValueError out of a request (issue 50: POST /api/v1/calls with a bracketed host that is no IP address
answered 500). Each place that takes a user's URL is checked with the inputs that once raised."""
import pytest

from core.errors import ServiceError
from core.urls import split_url, url_parts
from services.accounts import domain as accounts
from services.accounts.identity import oauth_domain as oauth
from services.accounts.identity.oauth_domain import OAuthError
from services.calls import domain as calls
from services.webhooks import domain as webhooks

# Each raised ValueError in urllib (urlsplit or .port) or yarl at some time.
UNREADABLE = ("Https://[4:60b2AbdAe295:A1fc]", "https://[7]/x", "https://[::1/x", "https://[::1]x/",
              "https://a.example:99999/", "https://a.example:x/", "https://\uff03.example/")


@pytest.mark.parametrize("url", UNREADABLE)
def test_an_unreadable_url_is_the_fields_400(url):
    assert url_parts(url) is None
    with pytest.raises(ServiceError) as refused:
        split_url(url, "webhook_url")
    assert refused.value.code == "invalid_request" and refused.value.message.startswith("webhook_url is not a valid URL: ")


def test_a_readable_url_gives_its_parts():
    parts = split_url("HTTPS://[2001:db8::1]:8443/hooks?x=1", "webhook_url")
    assert (parts.scheme, parts.hostname, parts.port, parts.path, parts.query) == (
        "https", "2001:db8::1", 8443, "/hooks", "x=1")


@pytest.mark.parametrize("url", UNREADABLE)
def test_every_place_that_takes_a_users_url_names_the_field(url):
    for check, field in ((calls.check_webhook_url, "webhook_url"), (webhooks.check_url, "webhook_url"),
                         (lambda u: accounts.validate_signup("Acme", "a@acme.example", website=u), "website")):
        with pytest.raises(ServiceError) as refused:
            check(url)
        assert refused.value.http_status == 400 and refused.value.message.startswith(f"{field} is not a valid URL"), \
            (field, refused.value.message)
    oauth_checks = ((lambda u: oauth.check_registration({"redirect_uris": [u]}), "invalid_redirect_uri", "redirect_uris"),
                    (lambda u: oauth.redirect_matches(["http://127.0.0.1:3000/cb"], u), "invalid_request",
                     "redirect_uri"),
                    (oauth.is_metadata_document_id, "invalid_client", "client_id"))
    for check, error, field in oauth_checks:
        with pytest.raises(OAuthError) as refused:
            check(url)
        assert refused.value.error == error and refused.value.description.startswith(field), refused.value
