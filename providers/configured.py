"""The providers' clients as the settings configure them: one place that builds each from `core.settings`, for the
services and the workers (each closes what it builds at shutdown, `Runtime.closing`)."""
from __future__ import annotations

from core.settings import Settings
from providers.email.smtp import SmtpSender
from providers.messaging.client import TwilioClient
from providers.payments.client import StripePayments
from providers.voice.port import VoiceProvider
from providers.voice.vapi.client import VapiClient
from providers.voice.vapi.server_messages import WebhookAuth
from providers.voice.vapi.voice import VapiVoice
from providers.x402.server import X402Gate


def voice(s: Settings, *, server_messages: bool = True) -> VoiceProvider:
    """The voice provider as its port: services depend on `VoiceProvider`, in our types, not on the Vapi adapter
    behind it. With `server_messages`, the calls it places and the numbers it imports send their messages to
    PUBLIC_BASE_URL, signed as VOICE_WEBHOOK_AUTH says (the process must be given VOICE_WEBHOOK_SECRET); without, it
    places no call and imports no number."""
    client = VapiClient(s.voice_api_url, s.voice_api_key.reveal(), timeout=s.voice_timeout_seconds)
    auth = WebhookAuth.of(s) if server_messages else None
    return VapiVoice(client, auth, s.public_base_url, s.voice_sip_credential_id)


def sms(s: Settings) -> TwilioClient:
    return TwilioClient(s.sms_api_url, s.sms_account_sid, s.sms_auth_token.reveal(), timeout=s.sms_timeout_seconds)


def mail(s: Settings) -> SmtpSender:
    return SmtpSender(s.smtp_host, s.smtp_port, sender=s.email_from, username=s.smtp_username,
                      password=s.smtp_password.reveal(), starttls=s.smtp_starttls)


def payments(s: Settings) -> StripePayments:
    return StripePayments(s.payments_api_url, s.payments_api_key.reveal(), timeout=s.payments_timeout_seconds)


def x402_gate(s: Settings) -> X402Gate | None:
    """The x402 gate, or None when no receiving address is configured (x402 is then off)."""
    if not s.x402_pay_to:
        return None
    return X402Gate(s.x402_facilitator_url, s.x402_pay_to, network=s.x402_network, asset=s.x402_asset,
                    asset_name=s.x402_asset_name, asset_version=s.x402_asset_version, timeout=s.x402_timeout_seconds)
