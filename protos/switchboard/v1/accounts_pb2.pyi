import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from switchboard.v1 import common_pb2 as _common_pb2
from switchboard.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SignupRequest(_message.Message):
    __slots__ = ("business_name", "email", "business_type", "website", "phone_forward_to", "plan_id", "client_ip", "payment_signature", "x402")
    BUSINESS_NAME_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_TYPE_FIELD_NUMBER: _ClassVar[int]
    WEBSITE_FIELD_NUMBER: _ClassVar[int]
    PHONE_FORWARD_TO_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_IP_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    X402_FIELD_NUMBER: _ClassVar[int]
    business_name: str
    email: str
    business_type: str
    website: str
    phone_forward_to: str
    plan_id: str
    client_ip: str
    payment_signature: str
    x402: bool
    def __init__(self, business_name: _Optional[str] = ..., email: _Optional[str] = ..., business_type: _Optional[str] = ..., website: _Optional[str] = ..., phone_forward_to: _Optional[str] = ..., plan_id: _Optional[str] = ..., client_ip: _Optional[str] = ..., payment_signature: _Optional[str] = ..., x402: _Optional[bool] = ...) -> None: ...

class SignupReply(_message.Message):
    __slots__ = ("api_key", "business_id", "agent_id", "phone_number", "dashboard_url", "trial_ends_at", "provisioning_deferred", "payment_capture", "dashboard_magic_link", "checkout_url", "payment_response", "payment_status")
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DASHBOARD_URL_FIELD_NUMBER: _ClassVar[int]
    TRIAL_ENDS_AT_FIELD_NUMBER: _ClassVar[int]
    PROVISIONING_DEFERRED_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_CAPTURE_FIELD_NUMBER: _ClassVar[int]
    DASHBOARD_MAGIC_LINK_FIELD_NUMBER: _ClassVar[int]
    CHECKOUT_URL_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_STATUS_FIELD_NUMBER: _ClassVar[int]
    api_key: str
    business_id: str
    agent_id: str
    phone_number: str
    dashboard_url: str
    trial_ends_at: _timestamp_pb2.Timestamp
    provisioning_deferred: bool
    payment_capture: str
    dashboard_magic_link: str
    checkout_url: str
    payment_response: str
    payment_status: str
    def __init__(self, api_key: _Optional[str] = ..., business_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., phone_number: _Optional[str] = ..., dashboard_url: _Optional[str] = ..., trial_ends_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., provisioning_deferred: _Optional[bool] = ..., payment_capture: _Optional[str] = ..., dashboard_magic_link: _Optional[str] = ..., checkout_url: _Optional[str] = ..., payment_response: _Optional[str] = ..., payment_status: _Optional[str] = ...) -> None: ...

class CheckPaymentsProviderRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PaymentsProviderStatus(_message.Message):
    __slots__ = ("status", "checkout", "x402")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHECKOUT_FIELD_NUMBER: _ClassVar[int]
    X402_FIELD_NUMBER: _ClassVar[int]
    status: str
    checkout: str
    x402: str
    def __init__(self, status: _Optional[str] = ..., checkout: _Optional[str] = ..., x402: _Optional[str] = ...) -> None: ...

class AuthenticateKeyRequest(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    def __init__(self, key: _Optional[str] = ...) -> None: ...

class AuthenticateSessionRequest(_message.Message):
    __slots__ = ("session_token",)
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_token: str
    def __init__(self, session_token: _Optional[str] = ...) -> None: ...

class KeyPrincipal(_message.Message):
    __slots__ = ("key_id", "account_id", "business_ids", "scopes", "business_id", "expires_at", "standings")
    class StandingsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_IDS_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    account_id: str
    business_ids: _containers.RepeatedScalarFieldContainer[str]
    scopes: _containers.RepeatedScalarFieldContainer[str]
    business_id: str
    expires_at: _timestamp_pb2.Timestamp
    standings: _containers.ScalarMap[str, str]
    def __init__(self, key_id: _Optional[str] = ..., account_id: _Optional[str] = ..., business_ids: _Optional[_Iterable[str]] = ..., scopes: _Optional[_Iterable[str]] = ..., business_id: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., standings: _Optional[_Mapping[str, str]] = ...) -> None: ...

class RedeemMagicLinkRequest(_message.Message):
    __slots__ = ("token",)
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: str
    def __init__(self, token: _Optional[str] = ...) -> None: ...

class SendSignInLinkRequest(_message.Message):
    __slots__ = ("email", "next_path")
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    NEXT_PATH_FIELD_NUMBER: _ClassVar[int]
    email: str
    next_path: str
    def __init__(self, email: _Optional[str] = ..., next_path: _Optional[str] = ...) -> None: ...

class SendSignInLinkReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DashboardSession(_message.Message):
    __slots__ = ("session_token", "account_id", "expires_at")
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    session_token: str
    account_id: str
    expires_at: _timestamp_pb2.Timestamp
    def __init__(self, session_token: _Optional[str] = ..., account_id: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class OpenCheckoutRequest(_message.Message):
    __slots__ = ("business_id",)
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    def __init__(self, business_id: _Optional[str] = ...) -> None: ...

class CheckoutLink(_message.Message):
    __slots__ = ("business_id", "checkout_url", "checkout_session_id", "expires_at", "invoice_id")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    CHECKOUT_URL_FIELD_NUMBER: _ClassVar[int]
    CHECKOUT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    INVOICE_ID_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    checkout_url: str
    checkout_session_id: str
    expires_at: _timestamp_pb2.Timestamp
    invoice_id: str
    def __init__(self, business_id: _Optional[str] = ..., checkout_url: _Optional[str] = ..., checkout_session_id: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., invoice_id: _Optional[str] = ...) -> None: ...

class PayByX402Request(_message.Message):
    __slots__ = ("business_id", "payment_signature")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    payment_signature: str
    def __init__(self, business_id: _Optional[str] = ..., payment_signature: _Optional[str] = ...) -> None: ...

class X402Renewal(_message.Message):
    __slots__ = ("business_id", "payment_status", "subscription_status", "lifecycle_state", "paid_through", "transaction", "payment_response")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_STATUS_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_STATUS_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_STATE_FIELD_NUMBER: _ClassVar[int]
    PAID_THROUGH_FIELD_NUMBER: _ClassVar[int]
    TRANSACTION_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    payment_status: str
    subscription_status: str
    lifecycle_state: str
    paid_through: _timestamp_pb2.Timestamp
    transaction: str
    payment_response: str
    def __init__(self, business_id: _Optional[str] = ..., payment_status: _Optional[str] = ..., subscription_status: _Optional[str] = ..., lifecycle_state: _Optional[str] = ..., paid_through: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., transaction: _Optional[str] = ..., payment_response: _Optional[str] = ...) -> None: ...

class SignOutRequest(_message.Message):
    __slots__ = ("session_token", "everywhere")
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    EVERYWHERE_FIELD_NUMBER: _ClassVar[int]
    session_token: str
    everywhere: bool
    def __init__(self, session_token: _Optional[str] = ..., everywhere: _Optional[bool] = ...) -> None: ...

class SignOutReply(_message.Message):
    __slots__ = ("sessions_ended",)
    SESSIONS_ENDED_FIELD_NUMBER: _ClassVar[int]
    sessions_ended: int
    def __init__(self, sessions_ended: _Optional[int] = ...) -> None: ...

class ApiKey(_message.Message):
    __slots__ = ("id", "prefix", "name", "scopes", "business_id", "created_at", "last_used_at", "expires_at", "is_active", "key")
    ID_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_AT_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    IS_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    id: str
    prefix: str
    name: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    business_id: str
    created_at: _timestamp_pb2.Timestamp
    last_used_at: _timestamp_pb2.Timestamp
    expires_at: _timestamp_pb2.Timestamp
    is_active: bool
    key: str
    def __init__(self, id: _Optional[str] = ..., prefix: _Optional[str] = ..., name: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., business_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_used_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., is_active: _Optional[bool] = ..., key: _Optional[str] = ...) -> None: ...

class ListKeysRequest(_message.Message):
    __slots__ = ("session_token",)
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_token: str
    def __init__(self, session_token: _Optional[str] = ...) -> None: ...

class ListKeysReply(_message.Message):
    __slots__ = ("keys",)
    KEYS_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[ApiKey]
    def __init__(self, keys: _Optional[_Iterable[_Union[ApiKey, _Mapping]]] = ...) -> None: ...

class CreateKeyRequest(_message.Message):
    __slots__ = ("session_token", "name", "business_id", "scopes", "scopes_given", "expires_at")
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    SCOPES_GIVEN_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    session_token: str
    name: str
    business_id: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    scopes_given: bool
    expires_at: _timestamp_pb2.Timestamp
    def __init__(self, session_token: _Optional[str] = ..., name: _Optional[str] = ..., business_id: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., scopes_given: _Optional[bool] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class UpdateKeyRequest(_message.Message):
    __slots__ = ("session_token", "id", "name", "scopes", "scopes_given", "business_id", "expires_at", "expire", "revoke", "clear_expires_at")
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    SCOPES_GIVEN_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_FIELD_NUMBER: _ClassVar[int]
    REVOKE_FIELD_NUMBER: _ClassVar[int]
    CLEAR_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    session_token: str
    id: str
    name: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    scopes_given: bool
    business_id: str
    expires_at: _timestamp_pb2.Timestamp
    expire: bool
    revoke: bool
    clear_expires_at: bool
    def __init__(self, session_token: _Optional[str] = ..., id: _Optional[str] = ..., name: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., scopes_given: _Optional[bool] = ..., business_id: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expire: _Optional[bool] = ..., revoke: _Optional[bool] = ..., clear_expires_at: _Optional[bool] = ...) -> None: ...

class RevokeKeyRequest(_message.Message):
    __slots__ = ("session_token", "id")
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    session_token: str
    id: str
    def __init__(self, session_token: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class RevokeKeyReply(_message.Message):
    __slots__ = ("success",)
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    success: bool
    def __init__(self, success: _Optional[bool] = ...) -> None: ...

class Workspace(_message.Message):
    __slots__ = ("id", "name", "lifecycle_state", "metadata", "external_ref", "created_at", "updated_at", "subscription_status", "provisioning", "timezone", "standing", "plan_id", "paid_through", "trial_ends_at", "retention", "data_deletion_due_at", "data_deleted_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_STATE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_STATUS_FIELD_NUMBER: _ClassVar[int]
    PROVISIONING_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    STANDING_FIELD_NUMBER: _ClassVar[int]
    PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    PAID_THROUGH_FIELD_NUMBER: _ClassVar[int]
    TRIAL_ENDS_AT_FIELD_NUMBER: _ClassVar[int]
    RETENTION_FIELD_NUMBER: _ClassVar[int]
    DATA_DELETION_DUE_AT_FIELD_NUMBER: _ClassVar[int]
    DATA_DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    lifecycle_state: str
    metadata: _struct_pb2.Struct
    external_ref: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    subscription_status: str
    provisioning: Provisioning
    timezone: str
    standing: str
    plan_id: str
    paid_through: _timestamp_pb2.Timestamp
    trial_ends_at: _timestamp_pb2.Timestamp
    retention: Retention
    data_deletion_due_at: _timestamp_pb2.Timestamp
    data_deleted_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., lifecycle_state: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., external_ref: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., subscription_status: _Optional[str] = ..., provisioning: _Optional[_Union[Provisioning, _Mapping]] = ..., timezone: _Optional[str] = ..., standing: _Optional[str] = ..., plan_id: _Optional[str] = ..., paid_through: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., trial_ends_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., retention: _Optional[_Union[Retention, _Mapping]] = ..., data_deletion_due_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., data_deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreatedWorkspace(_message.Message):
    __slots__ = ("workspace", "payment_response")
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    workspace: Workspace
    payment_response: str
    def __init__(self, workspace: _Optional[_Union[Workspace, _Mapping]] = ..., payment_response: _Optional[str] = ...) -> None: ...

class Provisioning(_message.Message):
    __slots__ = ("status", "step", "agent_id", "phone_number", "forward_to", "attempts", "last_error", "next_attempt_at")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    FORWARD_TO_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    status: str
    step: str
    agent_id: str
    phone_number: str
    forward_to: str
    attempts: int
    last_error: str
    next_attempt_at: _timestamp_pb2.Timestamp
    def __init__(self, status: _Optional[str] = ..., step: _Optional[str] = ..., agent_id: _Optional[str] = ..., phone_number: _Optional[str] = ..., forward_to: _Optional[str] = ..., attempts: _Optional[int] = ..., last_error: _Optional[str] = ..., next_attempt_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListWorkspacesRequest(_message.Message):
    __slots__ = ("page",)
    PAGE_FIELD_NUMBER: _ClassVar[int]
    page: _common_pb2.PageRequest
    def __init__(self, page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class GetWorkspaceRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class WorkspaceOwner(_message.Message):
    __slots__ = ("business_id", "business_name", "account_id", "email", "email_confirmed", "phone_forward_to")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_NAME_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    EMAIL_CONFIRMED_FIELD_NUMBER: _ClassVar[int]
    PHONE_FORWARD_TO_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    business_name: str
    account_id: str
    email: str
    email_confirmed: bool
    phone_forward_to: str
    def __init__(self, business_id: _Optional[str] = ..., business_name: _Optional[str] = ..., account_id: _Optional[str] = ..., email: _Optional[str] = ..., email_confirmed: _Optional[bool] = ..., phone_forward_to: _Optional[str] = ...) -> None: ...

class ListWorkspacesReply(_message.Message):
    __slots__ = ("workspaces", "page")
    WORKSPACES_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    workspaces: _containers.RepeatedCompositeFieldContainer[Workspace]
    page: _common_pb2.PageInfo
    def __init__(self, workspaces: _Optional[_Iterable[_Union[Workspace, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class CreateWorkspaceRequest(_message.Message):
    __slots__ = ("name", "metadata", "external_ref", "timezone", "payment_signature")
    NAME_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_REF_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    PAYMENT_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    name: str
    metadata: _struct_pb2.Struct
    external_ref: str
    timezone: str
    payment_signature: str
    def __init__(self, name: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., external_ref: _Optional[str] = ..., timezone: _Optional[str] = ..., payment_signature: _Optional[str] = ...) -> None: ...

class UpdateWorkspaceRequest(_message.Message):
    __slots__ = ("id", "name", "metadata", "action", "timezone", "retention")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    RETENTION_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    metadata: _struct_pb2.Struct
    action: str
    timezone: str
    retention: Retention
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., action: _Optional[str] = ..., timezone: _Optional[str] = ..., retention: _Optional[_Union[Retention, _Mapping]] = ...) -> None: ...

class Retention(_message.Message):
    __slots__ = ("recordings_days", "transcripts_days", "message_bodies_days", "webhook_events_days", "evidence_days")
    RECORDINGS_DAYS_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPTS_DAYS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_BODIES_DAYS_FIELD_NUMBER: _ClassVar[int]
    WEBHOOK_EVENTS_DAYS_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_DAYS_FIELD_NUMBER: _ClassVar[int]
    recordings_days: int
    transcripts_days: int
    message_bodies_days: int
    webhook_events_days: int
    evidence_days: int
    def __init__(self, recordings_days: _Optional[int] = ..., transcripts_days: _Optional[int] = ..., message_bodies_days: _Optional[int] = ..., webhook_events_days: _Optional[int] = ..., evidence_days: _Optional[int] = ...) -> None: ...

class BusinessZonesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ZonedBusiness(_message.Message):
    __slots__ = ("business_id", "name", "timezone")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    name: str
    timezone: str
    def __init__(self, business_id: _Optional[str] = ..., name: _Optional[str] = ..., timezone: _Optional[str] = ...) -> None: ...

class BusinessZonesReply(_message.Message):
    __slots__ = ("businesses",)
    BUSINESSES_FIELD_NUMBER: _ClassVar[int]
    businesses: _containers.RepeatedCompositeFieldContainer[ZonedBusiness]
    def __init__(self, businesses: _Optional[_Iterable[_Union[ZonedBusiness, _Mapping]]] = ...) -> None: ...

class UsageEntry(_message.Message):
    __slots__ = ("id", "endpoint", "method", "status_code", "call_id", "cost_cents", "created_at", "api_key_id", "account_id", "business_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    COST_CENTS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    API_KEY_ID_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    endpoint: str
    method: str
    status_code: int
    call_id: str
    cost_cents: int
    created_at: _timestamp_pb2.Timestamp
    api_key_id: str
    account_id: str
    business_id: str
    def __init__(self, id: _Optional[str] = ..., endpoint: _Optional[str] = ..., method: _Optional[str] = ..., status_code: _Optional[int] = ..., call_id: _Optional[str] = ..., cost_cents: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., api_key_id: _Optional[str] = ..., account_id: _Optional[str] = ..., business_id: _Optional[str] = ...) -> None: ...

class RecordUsageRequest(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[UsageEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[UsageEntry, _Mapping]]] = ...) -> None: ...

class RecordUsageReply(_message.Message):
    __slots__ = ("recorded",)
    RECORDED_FIELD_NUMBER: _ClassVar[int]
    recorded: int
    def __init__(self, recorded: _Optional[int] = ...) -> None: ...

class ListUsageRequest(_message.Message):
    __slots__ = ("start", "end", "page")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    page: _common_pb2.PageRequest
    def __init__(self, start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ...) -> None: ...

class ListUsageReply(_message.Message):
    __slots__ = ("usage", "page")
    USAGE_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    usage: _containers.RepeatedCompositeFieldContainer[UsageEntry]
    page: _common_pb2.PageInfo
    def __init__(self, usage: _Optional[_Iterable[_Union[UsageEntry, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class GetBalanceRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BalanceEntry(_message.Message):
    __slots__ = ("business_id", "minutes_used", "phone_numbers", "subscription_status")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    MINUTES_USED_FIELD_NUMBER: _ClassVar[int]
    PHONE_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_STATUS_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    minutes_used: int
    phone_numbers: int
    subscription_status: str
    def __init__(self, business_id: _Optional[str] = ..., minutes_used: _Optional[int] = ..., phone_numbers: _Optional[int] = ..., subscription_status: _Optional[str] = ...) -> None: ...

class GetBalanceReply(_message.Message):
    __slots__ = ("businesses",)
    BUSINESSES_FIELD_NUMBER: _ClassVar[int]
    businesses: _containers.RepeatedCompositeFieldContainer[BalanceEntry]
    def __init__(self, businesses: _Optional[_Iterable[_Union[BalanceEntry, _Mapping]]] = ...) -> None: ...

class RegisterOAuthClientRequest(_message.Message):
    __slots__ = ("metadata",)
    METADATA_FIELD_NUMBER: _ClassVar[int]
    metadata: _struct_pb2.Struct
    def __init__(self, metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class OAuthClient(_message.Message):
    __slots__ = ("client_id", "client_name", "redirect_uris", "grant_types", "client_uri", "created_at")
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_NAME_FIELD_NUMBER: _ClassVar[int]
    REDIRECT_URIS_FIELD_NUMBER: _ClassVar[int]
    GRANT_TYPES_FIELD_NUMBER: _ClassVar[int]
    CLIENT_URI_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    client_id: str
    client_name: str
    redirect_uris: _containers.RepeatedScalarFieldContainer[str]
    grant_types: _containers.RepeatedScalarFieldContainer[str]
    client_uri: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, client_id: _Optional[str] = ..., client_name: _Optional[str] = ..., redirect_uris: _Optional[_Iterable[str]] = ..., grant_types: _Optional[_Iterable[str]] = ..., client_uri: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class OAuthAuthorization(_message.Message):
    __slots__ = ("response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "resource")
    RESPONSE_TYPE_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    REDIRECT_URI_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CODE_CHALLENGE_FIELD_NUMBER: _ClassVar[int]
    CODE_CHALLENGE_METHOD_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    response_type: str
    client_id: str
    redirect_uri: str
    scope: str
    state: str
    code_challenge: str
    code_challenge_method: str
    resource: str
    def __init__(self, response_type: _Optional[str] = ..., client_id: _Optional[str] = ..., redirect_uri: _Optional[str] = ..., scope: _Optional[str] = ..., state: _Optional[str] = ..., code_challenge: _Optional[str] = ..., code_challenge_method: _Optional[str] = ..., resource: _Optional[str] = ...) -> None: ...

class OAuthConsentRequest(_message.Message):
    __slots__ = ("session_token", "authorization")
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_FIELD_NUMBER: _ClassVar[int]
    session_token: str
    authorization: OAuthAuthorization
    def __init__(self, session_token: _Optional[str] = ..., authorization: _Optional[_Union[OAuthAuthorization, _Mapping]] = ...) -> None: ...

class OAuthBusiness(_message.Message):
    __slots__ = ("id", "name")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class OAuthConsent(_message.Message):
    __slots__ = ("signed_in", "client", "redirect_uri", "scopes", "businesses")
    SIGNED_IN_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    REDIRECT_URI_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    BUSINESSES_FIELD_NUMBER: _ClassVar[int]
    signed_in: bool
    client: OAuthClient
    redirect_uri: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    businesses: _containers.RepeatedCompositeFieldContainer[OAuthBusiness]
    def __init__(self, signed_in: _Optional[bool] = ..., client: _Optional[_Union[OAuthClient, _Mapping]] = ..., redirect_uri: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., businesses: _Optional[_Iterable[_Union[OAuthBusiness, _Mapping]]] = ...) -> None: ...

class OAuthDecision(_message.Message):
    __slots__ = ("session_token", "authorization", "approve", "scopes", "business_ids")
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_FIELD_NUMBER: _ClassVar[int]
    APPROVE_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_IDS_FIELD_NUMBER: _ClassVar[int]
    session_token: str
    authorization: OAuthAuthorization
    approve: bool
    scopes: _containers.RepeatedScalarFieldContainer[str]
    business_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, session_token: _Optional[str] = ..., authorization: _Optional[_Union[OAuthAuthorization, _Mapping]] = ..., approve: _Optional[bool] = ..., scopes: _Optional[_Iterable[str]] = ..., business_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class OAuthRedirect(_message.Message):
    __slots__ = ("location",)
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    location: str
    def __init__(self, location: _Optional[str] = ...) -> None: ...

class OAuthTokenRequest(_message.Message):
    __slots__ = ("form",)
    class FormEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    FORM_FIELD_NUMBER: _ClassVar[int]
    form: _containers.ScalarMap[str, str]
    def __init__(self, form: _Optional[_Mapping[str, str]] = ...) -> None: ...

class OAuthTokens(_message.Message):
    __slots__ = ("access_token", "expires_in", "refresh_token", "scopes")
    ACCESS_TOKEN_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_IN_FIELD_NUMBER: _ClassVar[int]
    REFRESH_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    access_token: str
    expires_in: int
    refresh_token: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, access_token: _Optional[str] = ..., expires_in: _Optional[int] = ..., refresh_token: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ...) -> None: ...

class RevokeOAuthTokenRequest(_message.Message):
    __slots__ = ("token", "client_id")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    token: str
    client_id: str
    def __init__(self, token: _Optional[str] = ..., client_id: _Optional[str] = ...) -> None: ...

class RevokeOAuthTokenReply(_message.Message):
    __slots__ = ("account_id",)
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    account_id: str
    def __init__(self, account_id: _Optional[str] = ...) -> None: ...

class AuthenticateAccessTokenRequest(_message.Message):
    __slots__ = ("token",)
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: str
    def __init__(self, token: _Optional[str] = ...) -> None: ...

class ListOAuthConnectionsRequest(_message.Message):
    __slots__ = ("session_token",)
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_token: str
    def __init__(self, session_token: _Optional[str] = ...) -> None: ...

class OAuthConnection(_message.Message):
    __slots__ = ("id", "client_id", "client_name", "scopes", "business_ids", "created_at", "last_used_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_NAME_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_IDS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    client_id: str
    client_name: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    business_ids: _containers.RepeatedScalarFieldContainer[str]
    created_at: _timestamp_pb2.Timestamp
    last_used_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., client_id: _Optional[str] = ..., client_name: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., business_ids: _Optional[_Iterable[str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_used_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListOAuthConnectionsReply(_message.Message):
    __slots__ = ("connections",)
    CONNECTIONS_FIELD_NUMBER: _ClassVar[int]
    connections: _containers.RepeatedCompositeFieldContainer[OAuthConnection]
    def __init__(self, connections: _Optional[_Iterable[_Union[OAuthConnection, _Mapping]]] = ...) -> None: ...

class RevokeOAuthConnectionRequest(_message.Message):
    __slots__ = ("session_token", "id")
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    session_token: str
    id: str
    def __init__(self, session_token: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class RevokeOAuthConnectionReply(_message.Message):
    __slots__ = ("account_id",)
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    account_id: str
    def __init__(self, account_id: _Optional[str] = ...) -> None: ...

class CreateErasureRequest(_message.Message):
    __slots__ = ("business_id", "phone", "email", "suppress", "idempotency_key")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    PHONE_FIELD_NUMBER: _ClassVar[int]
    EMAIL_FIELD_NUMBER: _ClassVar[int]
    SUPPRESS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    phone: str
    email: str
    suppress: bool
    idempotency_key: str
    def __init__(self, business_id: _Optional[str] = ..., phone: _Optional[str] = ..., email: _Optional[str] = ..., suppress: _Optional[bool] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ErasureStep(_message.Message):
    __slots__ = ("service", "what", "action", "count")
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    WHAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    service: str
    what: str
    action: str
    count: int
    def __init__(self, service: _Optional[str] = ..., what: _Optional[str] = ..., action: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class Erasure(_message.Message):
    __slots__ = ("id", "business_id", "status", "phone_masked", "email_masked", "suppress", "created_at", "completed_at", "report", "steps_done", "attempts", "error", "next_attempt_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PHONE_MASKED_FIELD_NUMBER: _ClassVar[int]
    EMAIL_MASKED_FIELD_NUMBER: _ClassVar[int]
    SUPPRESS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    STEPS_DONE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPT_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    business_id: str
    status: str
    phone_masked: str
    email_masked: str
    suppress: bool
    created_at: _timestamp_pb2.Timestamp
    completed_at: _timestamp_pb2.Timestamp
    report: _containers.RepeatedCompositeFieldContainer[ErasureStep]
    steps_done: _containers.RepeatedScalarFieldContainer[str]
    attempts: int
    error: str
    next_attempt_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., business_id: _Optional[str] = ..., status: _Optional[str] = ..., phone_masked: _Optional[str] = ..., email_masked: _Optional[str] = ..., suppress: _Optional[bool] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., report: _Optional[_Iterable[_Union[ErasureStep, _Mapping]]] = ..., steps_done: _Optional[_Iterable[str]] = ..., attempts: _Optional[int] = ..., error: _Optional[str] = ..., next_attempt_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreatedErasure(_message.Message):
    __slots__ = ("erasure", "existing")
    ERASURE_FIELD_NUMBER: _ClassVar[int]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    erasure: Erasure
    existing: bool
    def __init__(self, erasure: _Optional[_Union[Erasure, _Mapping]] = ..., existing: _Optional[bool] = ...) -> None: ...

class GetErasureRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ListErasuresRequest(_message.Message):
    __slots__ = ("page", "business_id")
    PAGE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    page: _common_pb2.PageRequest
    business_id: str
    def __init__(self, page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ..., business_id: _Optional[str] = ...) -> None: ...

class ListErasuresReply(_message.Message):
    __slots__ = ("erasures", "page")
    ERASURES_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    erasures: _containers.RepeatedCompositeFieldContainer[Erasure]
    page: _common_pb2.PageInfo
    def __init__(self, erasures: _Optional[_Iterable[_Union[Erasure, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class ErasureCompleted(_message.Message):
    __slots__ = ("erasure_id", "business_id", "report")
    ERASURE_ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    erasure_id: str
    business_id: str
    report: _containers.RepeatedCompositeFieldContainer[ErasureStep]
    def __init__(self, erasure_id: _Optional[str] = ..., business_id: _Optional[str] = ..., report: _Optional[_Iterable[_Union[ErasureStep, _Mapping]]] = ...) -> None: ...

class CreateExportRequest(_message.Message):
    __slots__ = ("business_id", "idempotency_key")
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    business_id: str
    idempotency_key: str
    def __init__(self, business_id: _Optional[str] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ExportKind(_message.Message):
    __slots__ = ("kind", "records", "done")
    KIND_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    kind: str
    records: int
    done: bool
    def __init__(self, kind: _Optional[str] = ..., records: _Optional[int] = ..., done: _Optional[bool] = ...) -> None: ...

class Export(_message.Message):
    __slots__ = ("id", "business_id", "status", "kinds", "records", "bytes", "created_at", "completed_at", "expires_at", "error", "download_query", "download_expires_at", "sha256")
    ID_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DOWNLOAD_QUERY_FIELD_NUMBER: _ClassVar[int]
    DOWNLOAD_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    id: str
    business_id: str
    status: str
    kinds: _containers.RepeatedCompositeFieldContainer[ExportKind]
    records: int
    bytes: int
    created_at: _timestamp_pb2.Timestamp
    completed_at: _timestamp_pb2.Timestamp
    expires_at: _timestamp_pb2.Timestamp
    error: str
    download_query: str
    download_expires_at: _timestamp_pb2.Timestamp
    sha256: str
    def __init__(self, id: _Optional[str] = ..., business_id: _Optional[str] = ..., status: _Optional[str] = ..., kinds: _Optional[_Iterable[_Union[ExportKind, _Mapping]]] = ..., records: _Optional[int] = ..., bytes: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., completed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., error: _Optional[str] = ..., download_query: _Optional[str] = ..., download_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., sha256: _Optional[str] = ...) -> None: ...

class GetExportRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ListExportsRequest(_message.Message):
    __slots__ = ("page", "business_id")
    PAGE_FIELD_NUMBER: _ClassVar[int]
    BUSINESS_ID_FIELD_NUMBER: _ClassVar[int]
    page: _common_pb2.PageRequest
    business_id: str
    def __init__(self, page: _Optional[_Union[_common_pb2.PageRequest, _Mapping]] = ..., business_id: _Optional[str] = ...) -> None: ...

class ListExportsReply(_message.Message):
    __slots__ = ("exports", "page")
    EXPORTS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    exports: _containers.RepeatedCompositeFieldContainer[Export]
    page: _common_pb2.PageInfo
    def __init__(self, exports: _Optional[_Iterable[_Union[Export, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class ReadExportPartRequest(_message.Message):
    __slots__ = ("id", "expires", "signature", "part")
    ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    PART_FIELD_NUMBER: _ClassVar[int]
    id: str
    expires: int
    signature: str
    part: int
    def __init__(self, id: _Optional[str] = ..., expires: _Optional[int] = ..., signature: _Optional[str] = ..., part: _Optional[int] = ...) -> None: ...

class ExportPart(_message.Message):
    __slots__ = ("data", "parts", "bytes", "filename")
    DATA_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    parts: int
    bytes: int
    filename: str
    def __init__(self, data: _Optional[bytes] = ..., parts: _Optional[int] = ..., bytes: _Optional[int] = ..., filename: _Optional[str] = ...) -> None: ...
