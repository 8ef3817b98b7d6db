"""Signing secrets we keep to sign requests (webhook subscriptions, an agent's custom tools) are sealed at rest
with the sealing key (WEBHOOK_SECRETS_KEY, a Fernet key): never stored in plain text."""
from __future__ import annotations

from datetime import datetime

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

    def in_force(self, sealed: str, previous_sealed: str | None, previous_expires_at: datetime | None,
                 now: datetime) -> list[str]:
        """The secrets a request is signed with: the current one, plus the previous one while a rotation's overlap
        lasts (until `previous_expires_at`)."""
        keys = [self.open(sealed)]
        if previous_sealed and previous_expires_at is not None and previous_expires_at > now:
            keys.append(self.open(previous_sealed))
        return keys
