"""Signing secrets we keep to sign requests (webhook subscriptions, an agent's custom tools) are sealed at rest
with the sealing key (WEBHOOK_SECRETS_KEY, a Fernet key): never stored in plain text."""
from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken


class SecretBox:
    """Encrypts signing secrets at rest with the sealing key (WEBHOOK_SECRETS_KEY, a Fernet key)."""

    def __init__(self, key: str):
        self._fernet = Fernet(key)

    def seal(self, secret: str) -> str:
        return self._fernet.encrypt(secret.encode()).decode()

    def open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise RuntimeError("a sealed secret cannot be decrypted: was WEBHOOK_SECRETS_KEY changed?") from None
