"""What a service's ApplyRetention reads of its request (core.data_retention): the cutoffs (unset: that kind kept),
the batch's bounds, the business the caller acts for; and the report's lines."""
import uuid
from datetime import UTC, datetime

import pytest

from core import data_retention
from core.errors import ServiceError
from core.messages import set_timestamp
from core.tenant import Tenant, acting_as, acting_for
from services.messaging.data_retention import page
from switchboard.v1 import common_pb2

BUSINESS = str(uuid.uuid4())
AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def request(batch: int = 10, business_id: str = BUSINESS, **cutoffs: datetime) -> common_pb2.RetentionRequest:
    made = common_pb2.RetentionRequest(business_id=business_id, run_id=" rr_1 ", batch=batch)
    for name, at in cutoffs.items():
        set_timestamp(made, name, at)
    return made


def test_a_set_cutoff_is_read_and_an_unset_one_keeps_its_kind():
    with acting_as(acting_for(BUSINESS, "retention")):
        asked = data_retention.asked(request(message_bodies_before=AT))
    assert (asked.business_id, asked.run_id, asked.batch) == (BUSINESS, "rr_1", 10)
    assert asked.message_bodies_before == AT
    assert (asked.recordings_before, asked.transcripts_before, asked.webhook_events_before,
            asked.evidence_before) == (None, None, None, None)


@pytest.mark.parametrize("batch", [0, -1, data_retention.MAX_BATCH + 1])
def test_a_batch_out_of_bounds_is_refused(batch):
    with acting_as(acting_for(BUSINESS, "retention")), pytest.raises(ServiceError) as refused:
        data_retention.asked(request(batch))
    assert refused.value.code == "invalid_request" and "batch must be between 1" in str(refused.value)


def test_only_the_business_the_caller_acts_for_and_only_a_uuid():
    with acting_as(acting_for(BUSINESS, "retention")), pytest.raises(ServiceError) as another:
        data_retention.asked(request(business_id=str(uuid.uuid4())))
    assert another.value.code == "forbidden"
    with acting_as(Tenant()), pytest.raises(ServiceError) as bad:
        data_retention.asked(request(business_id="not-a-business"))
    assert bad.value.code == "invalid_request"


def test_the_report_has_a_line_per_kind_and_says_more():
    report = data_retention.report([("webhooks.event", "deleted", 2), ("webhooks.delivery", "deleted", 0)], True)
    assert [(i.what, i.action, i.count) for i in report.items] == [("webhooks.event", "deleted", 2),
                                                                     ("webhooks.delivery", "deleted", 0)]
    assert report.more
    assert data_retention.summary([("a", "deleted", 0)]) == "nothing"


def test_a_page_read_with_one_more_than_the_batch_says_whether_there_is_more():
    assert page([1, 2, 3], 2) == ([1, 2], True)
    assert page([1, 2], 2) == ([1, 2], False)
