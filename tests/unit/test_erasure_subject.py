"""core.erasure_subject: what every service's ErasePerson step reads of its request."""
import pytest

from core import erasure_subject as subject
from core.errors import ServiceError
from core.ids import new_id

PHONE = "+14155550123"


def test_numbers_are_read_in_any_international_form_addresses_in_lower_case_each_once():
    assert subject.phones([PHONE, "+1 (415) 555-0123", " "]) == (PHONE,)
    assert subject.emails([" Sam@Example.com", "sam@example.com", ""]) == ("sam@example.com",)


@pytest.mark.parametrize("phone", ["4155550123", "+1415", "not a number"])
def test_a_number_not_in_international_form_is_refused_not_guessed(phone):
    with pytest.raises(ServiceError) as err:
        subject.phones([PHONE, phone])
    assert err.value.code == "invalid_request" and "phones[1]" in err.value.message


def test_a_malformed_address_is_refused():
    with pytest.raises(ServiceError) as err:
        subject.emails(["not-an-address"])
    assert "emails[0]" in err.value.message


def test_ids_that_are_no_uuid_name_nothing():
    one = new_id()
    assert subject.ids([one.upper(), "call-1", one, "'; drop table calls", ""]) == (one,)
