"""The server secret's keys: one subkey per purpose and version, derived with HKDF-SHA256 (`cryptography`), so that
what is made for one purpose is no use for another and the secret can be rotated without revoking what was made
under the one before.

SWITCHBOARD_SECRET_KEY is version SWITCHBOARD_SECRET_KEY_VERSION (1 unless set); during a rotation
SWITCHBOARD_SECRET_KEY_PREVIOUS is the version before it, still accepted. A stored hash names its version
(`v<N>:<hex>`, HMAC-SHA256 under the purpose's subkey of version N), and so does an access token (its `kid`).
Version 0 is how hashes were made before versions: HMAC-SHA256 under version 1's secret itself, for every purpose
(bare hex); they are recognised while version 1's secret is current or previous. A key or session found under an
older version is stored again under the current one when it is used (services.accounts.identity.service), so the previous
secret can go once the ones still wanted were used.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from core.settings import Settings

API_KEY, SESSION, SIGN_IN_LINK = "api key", "session", "sign-in link"
OAUTH_CODE, OAUTH_REFRESH_TOKEN, OAUTH_ACCESS_TOKEN = "oauth code", "oauth refresh token", "oauth access token"
ERASURE_REPLAY = "erasure replay"  # seals a completed erasure's subject for its replay after a restore
EXPORT_LINK = "export link"  # an export's signed download link (services.accounts.privacy.export_domain)
PURPOSES = (API_KEY, SESSION, SIGN_IN_LINK, OAUTH_CODE, OAUTH_REFRESH_TOKEN, OAUTH_ACCESS_TOKEN, ERASURE_REPLAY,
            EXPORT_LINK)
NONCE_BYTES = 12
LEGACY_VERSION = 1  # the secret version-0 hashes were made under


def _hmac(key: bytes, value: str) -> str:
    return hmac.new(key, value.encode(), hashlib.sha256).hexdigest()


class SecretKeys:
    def __init__(self, secret: str, version: int = 1, previous: str = ""):
        if previous and version < 2:
            raise ValueError("the previous secret is version - 1: the current version must be 2 or more")
        self.version = version
        self._secrets = {version: secret.encode(), **({version - 1: previous.encode()} if previous else {})}
        self._subkeys = {(purpose, v): self._derive(purpose, v) for purpose in PURPOSES for v in self._secrets}

    @classmethod
    def of(cls, settings: Settings) -> SecretKeys:
        return cls(settings.secret_key.reveal(), settings.secret_key_version, settings.secret_key_previous.reveal())

    def _derive(self, purpose: str, version: int) -> bytes:
        return HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                    info=f"switchboard/{purpose}/v{version}".encode()).derive(self._secrets[version])

    def hash(self, purpose: str, value: str) -> str:
        """How `value` is stored now: under the current version's subkey for `purpose`, naming the version."""
        return f"v{self.version}:{_hmac(self._subkeys[purpose, self.version], value)}"

    def hashes(self, purpose: str, value: str) -> list[str]:
        """Every stored form of `value` still accepted, the current one first: each version held, then version 0."""
        found = [f"v{v}:{_hmac(self._subkeys[purpose, v], value)}" for v in sorted(self._secrets, reverse=True)]
        if LEGACY_VERSION in self._secrets:
            found.append(_hmac(self._secrets[LEGACY_VERSION], value))
        return found

    def is_current(self, stored: str) -> bool:
        return stored.startswith(f"v{self.version}:")

    def seal(self, purpose: str, value: bytes, bound_to: bytes) -> str:
        """`value` encrypted (AES-256-GCM) under the current version's subkey for `purpose`, naming the version
        (`v<N>:<base64 of nonce and ciphertext>`); `bound_to` (e.g. the row's id) must be given again to open it."""
        nonce = os.urandom(NONCE_BYTES)
        sealed = AESGCM(self._subkeys[purpose, self.version]).encrypt(nonce, value, bound_to)
        return f"v{self.version}:{base64.urlsafe_b64encode(nonce + sealed).decode()}"

    def open(self, purpose: str, sealed: str, bound_to: bytes) -> bytes | None:
        """What `seal` sealed, or None when its version's secret is no longer held or it was not sealed for
        `purpose` and `bound_to` (tampered with, or moved to another row)."""
        version, _, text = sealed.partition(":")
        key = self._subkeys.get((purpose, int(version[1:]))) if version[1:].isdigit() else None
        if key is None:
            return None
        try:
            raw = base64.urlsafe_b64decode(text)
            return AESGCM(key).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], bound_to)
        except (InvalidTag, ValueError):
            return None

    def signing_key(self, purpose: str) -> tuple[str, bytes]:
        """(kid, key) a token for `purpose` is signed with now."""
        return f"v{self.version}", self._subkeys[purpose, self.version]

    def verifying_key(self, purpose: str, kid: str | None) -> bytes | None:
        """The key of a token signed under `kid` (None: version 0, the secret's HMAC of the purpose's old label), or
        None when that version is no longer held."""
        if kid is None:
            legacy = self._secrets.get(LEGACY_VERSION)
            return _hmac(legacy, LEGACY_LABELS[purpose]).encode() if legacy is not None and purpose in LEGACY_LABELS \
                else None
        version = kid.removeprefix("v")
        return self._subkeys.get((purpose, int(version))) if version.isdigit() else None


# The label a version-0 token key was the HMAC of.
LEGACY_LABELS = {OAUTH_ACCESS_TOKEN: "oauth access tokens"}
