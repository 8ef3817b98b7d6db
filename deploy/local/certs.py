"""`python -m deploy.local.certs [FOLDER]`: a private CA and one certificate for mutual TLS on the embedded stack.

Writes `ca.crt`, `tls.crt` and `tls.key` (the names cert-manager gives a Secret's keys) into FOLDER
(default `.switchboard/grpc-tls`) and prints the GRPC_TLS_* variables that point at them. The certificate names
127.0.0.1 and localhost (the hosts of the stack's addresses) and serves as both server and client certificate,
so one set serves every process. On Kubernetes cert-manager issues one per process instead (deploy/k8s/README.md).
"""
from __future__ import annotations

import datetime
import ipaddress
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LOCAL_HOSTS = ("127.0.0.1", "localhost")
VALIDITY = datetime.timedelta(days=365)


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _builder(subject: str, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer).public_key(public_key).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY))


@dataclass(frozen=True)
class Authority:
    """A certificate authority: its certificate (what peers trust) and its key (what signs their certificates)."""

    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @classmethod
    def new(cls, name: str) -> Authority:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        cert = (_builder(name, subject, key.public_key())
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                             crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .sign(key, hashes.SHA256()))
        return cls(cert, key)

    @property
    def pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def issue(self, name: str, hosts: Sequence[str]) -> tuple[bytes, bytes]:
        """A certificate for `hosts` (addresses or DNS names), good for serving and for presenting as a client, and
        its private key (PEM)."""
        key = ec.generate_private_key(ec.SECP256R1())
        names: list[x509.GeneralName] = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        cert = (_builder(name, self.cert.subject, key.public_key())
                .add_extension(x509.SubjectAlternativeName(names), critical=False)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                               critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                               critical=False)
                .sign(self.key, hashes.SHA256()))
        return cert.public_bytes(serialization.Encoding.PEM), _pem(key)


def write(folder: Path, authority: Authority, name: str, hosts: Sequence[str] = LOCAL_HOSTS) -> dict[str, str]:
    """The authority's certificate and one it issues for `hosts`, written into `folder`; the GRPC_TLS_* variables
    that name them."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = authority.issue(name, hosts)
    (folder / "ca.crt").write_bytes(authority.pem)
    (folder / "tls.crt").write_bytes(cert)
    key_file = folder / "tls.key"
    key_file.touch(mode=0o600)
    key_file.chmod(0o600)  # also when it was there before
    key_file.write_bytes(key)
    return {"GRPC_TLS_CERT": str(folder / "tls.crt"), "GRPC_TLS_KEY": str(folder / "tls.key"),
            "GRPC_TLS_CA": str(folder / "ca.crt")}


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else ".switchboard/grpc-tls").resolve()
    for variable, path in write(folder, Authority.new("switchboard-local-ca"), "switchboard-local").items():
        print(f"export {variable}={path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
