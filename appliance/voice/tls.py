"""HTTPS for callers on other devices: a certificate for a LAN name, the server's TLS context,
and the warning when a remote browser would be refused the microphone.

A browser gives a page the microphone only in a secure context: ``https://…``, or
``http://127.0.0.1`` / ``http://localhost`` on the same machine. A person on a laptop or a
phone that opens ``http://<the appliance's LAN address>:8765`` gets a page that cannot hear
them. So the server speaks TLS when ``server.tls_cert`` and ``server.tls_key`` are set
(:func:`server_context`), and ``appliance cert`` makes a pair for a LAN name or address
(:func:`make_certificate`): a small certificate authority of its own (``ca.pem``, the file a
device trusts; its key is thrown away, so it can vouch for nothing else) and the server's
certificate signed by it (``cert.pem``, ``key.pem``), as mkcert does.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from appliance.config import Config, ConfigError
from appliance.voice.access import is_loopback

#: browsers refuse server certificates valid for more than 398 days (CA/Browser Forum, 2020)
CERT_DAYS = 397


@dataclass(frozen=True)
class CertificateFiles:
    """What :func:`make_certificate` wrote: the server's ``cert`` and ``key`` (PEM) and the
    ``ca`` certificate a device imports to trust it."""

    cert: Path
    key: Path
    ca: Path


def _name(host: str):
    from cryptography import x509

    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def make_certificate(host: str, folder: Path, days: int = CERT_DAYS) -> CertificateFiles:
    """Write ``folder/ca.pem`` (a certificate authority made for this one certificate), and
    ``folder/cert.pem`` / ``folder/key.pem`` (the server's, for ``host`` — a DNS name or an IP
    address — and ``localhost``/``127.0.0.1``, valid ``days`` days). ``key.pem`` is readable by
    its owner only.

    Raises:
        ValueError: ``host`` is empty or has a space, or ``days`` is not 1–398.
        OSError: the folder cannot be written.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    if not host or any(c.isspace() for c in host):
        raise ValueError(f"--host {host!r}: give the name or address other devices open, e.g. appliance.lan")
    if not 1 <= days <= 398:
        raise ValueError(f"{days} days: browsers accept a certificate valid for at most 398 days")
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"appliance local CA for {host}")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [_name(host)] + [_name(h) for h in ("localhost", "127.0.0.1") if h != host]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    files = CertificateFiles(folder / "cert.pem", folder / "key.pem", folder / "ca.pem")
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    files.key.touch(mode=0o600)
    files.key.chmod(0o600)
    files.key.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return files


def how_to_use(files: CertificateFiles, host: str) -> str:
    """What ``appliance cert`` prints: the config lines, and how a device trusts the certificate."""
    return (
        f"Wrote {files.cert}, {files.key} and {files.ca}.\n"
        "Serve over HTTPS with, in your --config file:\n"
        "  server:\n"
        f"    host: {host}        # the page answers to this name (and 127.0.0.1, localhost)\n"
        f"    tls_cert: {files.cert}\n"
        f"    tls_key: {files.key}\n"
        f"and open the https://{host}:… URL that `appliance serve` prints (it carries the token) on the other device.\n"
        f"To trust it, import {files.ca} there as a certificate authority:\n"
        "  Chrome/Chromium (desktop): Settings → Privacy and security → Security → Manage certificates →\n"
        "    Authorities → Import; Firefox: Settings → Certificates → View Certificates → Authorities → Import;\n"
        "  Android: Settings → Security → Encryption & credentials → Install a certificate → CA certificate;\n"
        "  iPhone/iPad: open the file, install the profile, then Settings → General → About →\n"
        "    Certificate Trust Settings → turn it on.\n"
        "Or accept the browser's warning once on that device (Advanced → Proceed): the page then gets the microphone too."
    )


def server_context(cfg: Config) -> ssl.SSLContext | None:
    """The TLS context for ``server.tls_cert``/``server.tls_key`` (PEM), or None when unset.

    Raises:
        ConfigError: a file is missing or unreadable, or the two do not make a key pair.
    """
    srv = cfg.server
    if srv.tls_cert is None or srv.tls_key is None:
        return None
    cert, key = Path(srv.tls_cert).expanduser(), Path(srv.tls_key).expanduser()
    for name, path in (("server.tls_cert", cert), ("server.tls_key", key)):
        if not path.is_file():
            raise ConfigError(
                f"{name} {str(path)!r}: no such file (make one with: appliance cert --host NAME --dir DIR)"
            )
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        ctx.load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as e:
        raise ConfigError(
            f"server.tls_cert {str(cert)!r} / server.tls_key {str(key)!r}: not a PEM certificate and its key ({e})"
        ) from None
    return ctx


def plain_http_warning(cfg: Config) -> str | None:
    """One line for an operator whose page other devices cannot use: ``server.host`` is not
    loopback, the page is plain HTTP (no ``server.tls_cert``), no TLS proxy is in front
    (``server.behind_proxy``) and the transport is the browser page's (WebRTC). None otherwise."""
    srv = cfg.server
    if cfg.transport.kind != "webrtc" or is_loopback(srv.host) or srv.tls_cert is not None or srv.behind_proxy:
        return None
    return (
        f"appliance: warning: the page is served over plain HTTP on {srv.host}: a browser on another device "
        "will refuse it the microphone (only https:// or this machine's own 127.0.0.1 may use it). Make a "
        "certificate with `appliance cert --host NAME --dir DIR` and set server.tls_cert and server.tls_key, "
        "or put a TLS proxy in front and set server.behind_proxy: true."
    )
