"""SASL/GSSAPI (Kerberos V5, RFC 4752) as Kafka's clients log in with it, over MIT Kerberos through the
``gssapi`` package (the ``kerberos`` extra), and Kafka's Kerberos principal names.

Settings, as Kafka reads them (``SaslClientAuthenticator``, ``KerberosLogin``, ``LoginManager``):

* ``sasl.mechanism=GSSAPI`` (Kafka's default) with ``sasl.jaas.config`` naming
  ``com.sun.security.auth.module.Krb5LoginModule``: ``useKeyTab=true keyTab="..." principal="..."``
  logs in with a keytab, ``useTicketCache=true`` with the user's ``kinit`` ticket cache (``ticketCache``
  names another one); with both, the cache is tried first, as Java's module does. Other options of the
  module (``storeKey``, ``doNotPrompt``, ...) change nothing here.
* ``sasl.kerberos.service.name`` (or the JAAS option ``serviceName``; both set must agree): Kafka
  refuses a GSSAPI client without one. The server's principal is ``<service name>/<host>``, ``host``
  being what Kafka's ``SaslChannelBuilder`` takes, the connected socket's
  ``InetAddress.getHostName()``: the host name the client was given, or for an IP address the name
  a reverse look-up gives (the address itself when there is none).
* The exchange: the GSS-API context is established (mutual authentication), then the server offers its
  security layers in a wrapped 4-byte message and the client, wrapping its answer, chooses none and
  names itself as the authorization id (RFC 4752 section 3.1).

Where the machine's Kerberos settings are (``/etc/krb5.conf``, ``KRB5_CONFIG``, ``KRB5CCNAME``) is
MIT's business, as ``java.security.krb5.conf`` is the JVM's. ``gssapi`` is imported only when a GSSAPI
exchange or login runs: nothing of it loads on the tools' start-up path.

The principal a Kafka node sees is the short name of the client's Kerberos name by
``sasl.kerberos.principal.to.local.rules`` (Kafka's ``KerberosShortNamer`` and ``KerberosRule``;
``DEFAULT``: the first component of a name of the default realm).
"""

from __future__ import annotations

import importlib.util
import ipaddress
import re
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from kafka_admin_kraft.client.sasl_base import SaslFailure, SaslMechanism
from kafka_admin_kraft.errors import ConfigError

if TYPE_CHECKING:
    import gssapi

__all__ = [
    "EXTRA",
    "GssapiMechanism",
    "KerberosFailure",
    "KerberosName",
    "KerberosShortNamer",
    "check_settings",
    "client_principal",
    "default_realm",
    "explain",
    "service_host",
    "service_name",
    "short_principal",
]

EXTRA: Final = "pip install 'kafka-admin-kraft[kerberos]'"
NO_LAYER: Final = 1
"""RFC 4752's bit for "no security layer", the only one Kafka's clients and servers use."""

# MIT Kerberos error codes (com_err table krb5, base -1765328384) as GSS-API minor status codes.
_KRB5: Final = (1 << 32) - 1765328384
C_PRINCIPAL_UNKNOWN: Final = _KRB5 + 6
S_PRINCIPAL_UNKNOWN: Final = _KRB5 + 7
PREAUTH_FAILED: Final = _KRB5 + 24
TKT_EXPIRED: Final = _KRB5 + 32
TKT_NOT_YET_VALID: Final = _KRB5 + 33
CLOCK_SKEW: Final = _KRB5 + 37
KDC_REPLY_SKEW: Final = _KRB5 + 148
KDC_UNREACHABLE: Final = _KRB5 + 156

Store = dict[bytes | str, bytes | str]
"""A credential store of MIT's ``gss_acquire_cred_from``: ``ccache``, ``client_keytab``, ``keytab``."""


def _flag(options: Mapping[str, str], name: str) -> bool:
    return options.get(name, "false").strip().lower() == "true"


def service_name(options: Mapping[str, str], properties: Mapping[str, str]) -> str:
    """The Kerberos service name of the servers (Kafka's ``KerberosLogin.getServiceName``)."""
    in_jaas = options.get("serviceName")
    in_config = properties.get("sasl.kerberos.service.name")
    if in_jaas is not None and in_config is not None and in_jaas != in_config:
        raise ConfigError(f"Conflicting serviceName values: {in_jaas!r} in sasl.jaas.config, {in_config!r} "
                          "in sasl.kerberos.service.name (set one of them)",
                          ["sasl.jaas.config", "sasl.kerberos.service.name"])
    name = in_jaas if in_jaas is not None else in_config
    if not name:
        raise ConfigError("No serviceName defined in either JAAS or Kafka config: set "
                          "sasl.kerberos.service.name to the first part of the servers' Kerberos principal "
                          "(kafka for kafka/<host>@REALM)", ["sasl.kerberos.service.name"])
    return name


def check_settings(options: Mapping[str, str], properties: Mapping[str, str]) -> None:
    """ConfigError when a GSSAPI client cannot log in with these ``Krb5LoginModule`` options and
    ``sasl.*`` properties, or without the ``gssapi`` package."""
    service_name(options, properties)
    if _flag(options, "useKeyTab"):
        if not options.get("principal"):
            raise ConfigError("sasl.jaas.config: useKeyTab=true needs principal=\"<name>@<REALM>\" (the "
                              "keytab's principal)", ["sasl.jaas.config"])
    elif not _flag(options, "useTicketCache"):
        raise ConfigError("sasl.jaas.config: Krb5LoginModule needs useKeyTab=true with keyTab and principal, "
                          "or useTicketCache=true (after kinit): this client cannot ask for a password",
                          ["sasl.jaas.config"])
    if importlib.util.find_spec("gssapi") is None:
        raise ConfigError(f"sasl.mechanism=GSSAPI needs the gssapi package (MIT Kerberos): {EXTRA}",
                          ["sasl.mechanism"])


def service_host(host: str) -> str:
    """The host part of the server's principal for a connection to ``host``: Java's
    ``InetAddress.getHostName()`` of the connected address (see the module's docstring)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return host
    try:
        return socket.gethostbyaddr(host)[0]
    except OSError:
        return host


# --------------------------------------------------------------------------- failures


def explain(exc: Exception, *, principal: str, keytab: str | None, cache: str | None = None) -> str:
    """One line for a failed Kerberos login or context: the cause and the setting to change."""
    minor = getattr(exc, "min_code", 0)
    who = principal or "the client"
    where = f"the keytab {keytab}" if keytab else f"the ticket cache {cache}" if cache else "the ticket cache"
    if minor == KDC_UNREACHABLE:
        return ("cannot reach a KDC of the realm (KDC unreachable): check the realm's kdc entries in "
                "krb5.conf (KRB5_CONFIG) and that the KDC is up")
    if minor in (CLOCK_SKEW, KDC_REPLY_SKEW, TKT_NOT_YET_VALID):
        return ("the clocks of this machine and of the KDC or server differ by more than the allowed skew "
                "(Clock skew too great): synchronize the clocks (NTP)")
    if minor == S_PRINCIPAL_UNKNOWN:
        return (f"{_gss_text(exc)}: the server's principal must be "
                "<sasl.kerberos.service.name>/<the host name the client connects to>@REALM; connect with "
                "the host name of that principal or fix sasl.kerberos.service.name")
    if minor == C_PRINCIPAL_UNKNOWN:
        return f"the KDC does not know the client principal {who}: check principal in sasl.jaas.config"
    if minor == PREAUTH_FAILED:
        return f"the KDC refused the key of {who} in {where} (a stale keytab?): export a fresh keytab"
    if minor == TKT_EXPIRED:
        return f"the ticket of {who} has expired: run kinit again"
    if keytab:
        return (f"cannot log in as {who} with {where}: it is missing, unreadable or has no key for that "
                "principal (check keyTab and principal in sasl.jaas.config; klist -kt lists its keys)")
    if getattr(exc, "maj_code", 0) and "credentials" in str(exc).lower():
        return (f"no Kerberos ticket{f' for {principal}' if principal else ''} in {where}: run kinit (or set "
                "KRB5CCNAME, or ticketCache or useKeyTab=true with keyTab and principal in sasl.jaas.config)")
    return f"Kerberos failed: {_gss_text(exc)}"


def _gss_text(exc: Exception) -> str:
    """The most specific part of a GSS-API error's text."""
    text = str(exc)
    minor = re.search(r"Minor \(\d+\): (.*)$", text)
    return minor.group(1).strip() if minor else text


class KerberosFailure(SaslFailure):
    """A Kerberos login or GSS-API step failed; the message says why and what to change."""


# --------------------------------------------------------------------------- the mechanism


@dataclass(frozen=True)
class _Login:
    principal: str
    keytab: str | None
    cache: str | None
    use_cache: bool
    use_keytab: bool


def _login(options: Mapping[str, str]) -> _Login:
    return _Login(options.get("principal", ""), options.get("keyTab"), options.get("ticketCache"),
                  _flag(options, "useTicketCache"), _flag(options, "useKeyTab"))


def _credentials(login: _Login) -> gssapi.Credentials:
    """Initiator credentials: the ticket cache first when it is to be used, then the keytab, whose
    tickets MIT keeps in a memory cache of this process (renewed from the keytab when they expire)."""
    import gssapi
    from gssapi.raw.misc import GSSError

    name = (gssapi.Name(login.principal, gssapi.NameType.kerberos_principal) if login.principal else None)
    failure: Exception | None = None
    if login.use_cache:
        store: Store | None = {"ccache": login.cache} if login.cache else None
        try:
            return gssapi.Credentials(name=name, usage="initiate", store=store)
        except GSSError as exc:
            failure = exc
    if login.use_keytab:
        own: Store = {"ccache": f"MEMORY:kafka-admin-kraft-{login.principal}-{login.keytab or ''}"}
        try:
            if login.keytab:
                with open(login.keytab, "rb"):  # MIT says only "no credentials cache" when it cannot
                    own["client_keytab"] = login.keytab
            return gssapi.Credentials(name=name, usage="initiate", store=own)
        except OSError as exc:
            raise KerberosFailure(f"cannot read the keytab {login.keytab} ({exc.strerror or exc}): check "
                                  "keyTab in sasl.jaas.config") from None
        except GSSError as exc:
            raise KerberosFailure(explain(exc, principal=login.principal, keytab=login.keytab)) from None
    assert failure is not None
    raise KerberosFailure(explain(failure, principal=login.principal, keytab=None,
                                  cache=login.cache)) from None


class GssapiMechanism(SaslMechanism):
    """The client side of one GSSAPI exchange with the server at ``host``."""

    name = "GSSAPI"
    blocking_prepare = True

    def __init__(self, options: Mapping[str, str], properties: Mapping[str, str], host: str) -> None:
        self._login = _login(options)
        self.service = f"{service_name(options, properties)}/{service_host(host)}"
        self._context: gssapi.SecurityContext | None = None
        self._first: bytes | None = None
        self._step = 0

    def _failure(self, exc: Exception) -> KerberosFailure:
        """A failed context step: the login worked, so no keytab or cache is to blame."""
        login = self._login
        return KerberosFailure(explain(exc, principal=login.principal, keytab=None, cache=login.cache))

    def prepare(self) -> None:
        """The login and the first context step, which may wait for the KDC (a ticket for the
        service)."""
        import gssapi
        from gssapi.raw.misc import GSSError

        creds = _credentials(self._login)
        target = gssapi.Name(self.service.replace("/", "@", 1), gssapi.NameType.hostbased_service)
        self._context = gssapi.SecurityContext(name=target, creds=creds, usage="initiate",
                                               mech=gssapi.MechType.kerberos)
        try:
            self._first = self._context.step() or b""
        except GSSError as exc:
            raise self._failure(exc) from None

    def initial(self) -> bytes:
        if self._first is None:
            self.prepare()
        assert self._first is not None
        return self._first

    def respond(self, challenge: bytes) -> bytes | None:
        from gssapi.raw.misc import GSSError

        context = self._context
        if context is None:
            raise SaslFailure("a GSSAPI server message came before the client's first one")
        try:
            if not context.complete:
                return context.step(challenge) or b""
            if self._step == 0:
                self._step = 1
                return self._security_layer(context, challenge)
        except GSSError as exc:
            raise self._failure(exc) from None
        self.complete = True
        return None

    def _security_layer(self, context: gssapi.SecurityContext, challenge: bytes) -> bytes:
        """RFC 4752: the server's offer unwrapped; the answer (no security layer, no buffer, the client's
        name as the authorization id) wrapped with integrity only."""
        offer = context.unwrap(challenge).message
        if len(offer) != 4:
            raise SaslFailure(f"the server's security layer offer has {len(offer)} bytes, not 4")
        if not offer[0] & NO_LAYER:
            raise SaslFailure(f"the server offers no way without a security layer (layers {offer[0]:#04x}); "
                              "this client supports none")
        answer = bytes([NO_LAYER, 0, 0, 0]) + str(context.initiator_name).encode()
        return bytes(context.wrap(answer, False).message)


# --------------------------------------------------------------------------- principal names


@dataclass(frozen=True)
class KerberosName:
    """``service/host@REALM`` split as Kafka's ``KerberosName.parse`` does (a name without ``@`` is a
    service name alone)."""

    service: str
    host: str | None
    realm: str | None

    @classmethod
    def parse(cls, name: str) -> KerberosName:
        match = re.fullmatch(r"([^/@]*)(/([^/@]*))?@([^/@]*)", name)
        if match is None:
            if "@" in name:
                raise ValueError(f"Malformed Kerberos name: {name}")
            return cls(name, None, None)
        return cls(match.group(1), match.group(3), match.group(4))

    def __str__(self) -> str:
        host = f"/{self.host}" if self.host is not None else ""
        realm = f"@{self.realm}" if self.realm is not None else ""
        return f"{self.service}{host}{realm}"


_RULE = re.compile(r"((DEFAULT)|(RULE:\[(\d*):([^\]]*)](\(([^)]*)\))?(s/([^/]*)/([^/]*)/(g)?)?))/?(L)?")


@dataclass(frozen=True)
class _Rule:
    default: bool
    components: int = 0
    format: str = ""
    match: re.Pattern[str] | None = None
    source: re.Pattern[str] | None = None
    target: str = ""
    repeat: bool = False
    lower: bool = False
    text: str = ""

    def apply(self, params: Sequence[str], default_realm: str) -> str | None:
        result: str | None = None
        if self.default:
            if params[0] == default_realm:
                result = params[1]
        elif len(params) - 1 == self.components:
            base = _replace_parameters(self.format, params)
            if self.match is None or self.match.fullmatch(base):
                result = base if self.source is None else self.source.sub(
                    lambda found: _java_replacement(self.target, found), base, count=0 if self.repeat else 1)
        if result is not None and re.search(r"[/@]", result):
            raise ValueError(f"Non-simple name {result} after auth_to_local rule {self.text}")
        return result.lower() if result is not None and self.lower else result


def _replace_parameters(format_text: str, params: Sequence[str]) -> str:
    def one(match: re.Match[str]) -> str:
        index = int(match.group(1))
        if index >= len(params):
            raise ValueError(f"index {index} from {format_text} is outside of the valid range 0 to "
                             f"{len(params) - 1}")
        return params[index]

    return re.sub(r"\$(\d+)", one, format_text)


def _java_replacement(target: str, match: re.Match[str]) -> str:
    """``target`` expanded as Java's ``Matcher.replaceAll`` does: ``$n`` is group n, ``\\x`` is x."""
    out = []
    pos = 0
    while pos < len(target):
        char = target[pos]
        if char == "\\" and pos + 1 < len(target):
            out.append(target[pos + 1])
            pos += 2
        elif char == "$" and pos + 1 < len(target) and target[pos + 1].isdigit():
            digits = re.match(r"\d+", target[pos + 1:])
            assert digits is not None
            out.append(match.group(int(digits.group())) or "")
            pos += 1 + len(digits.group())
        else:
            out.append(char)
            pos += 1
    return "".join(out)


class KerberosShortNamer:
    """Kafka's ``sasl.kerberos.principal.to.local.rules``: the first rule that applies names the user."""

    def __init__(self, rules: Sequence[str], default_realm: str) -> None:
        self.default_realm = default_realm
        self.texts = tuple(rules) or ("DEFAULT",)
        self.rules = tuple(self._parse(rule) for rule in self.texts)

    @staticmethod
    def _parse(rule: str) -> _Rule:
        match = _RULE.match(rule)
        if match is None:
            raise ValueError(f"Invalid rule: {rule}")
        if match.end() != len(rule):
            raise ValueError(f"Invalid rule: `{rule}`, unmatched substring: `{rule[match.end():]}`")
        lower = match.group(12) == "L"
        if match.group(2) is not None:
            return _Rule(True, lower=lower, text=rule)
        return _Rule(False, int(match.group(4)), match.group(5),
                     re.compile(match.group(7)) if match.group(7) is not None else None,
                     re.compile(match.group(9)) if match.group(9) is not None else None,
                     match.group(10) or "", match.group(11) == "g", lower, rule)

    def short_name(self, name: str) -> str:
        """ValueError when no rule applies (Kafka's ``NoMatchingRule``)."""
        parsed = KerberosName.parse(name)
        if parsed.host is None:
            if parsed.realm is None:
                return parsed.service
            params: list[str] = [parsed.realm, parsed.service]
        else:
            params = [parsed.realm or "", parsed.service, parsed.host]
        for rule in self.rules:
            result = rule.apply(params, self.default_realm)
            if result is not None:
                return result
        raise ValueError(f"No rules apply to {parsed}, rules [{', '.join(self.texts)}]")


def default_realm() -> str:
    """The default realm of the Kerberos configuration in effect (``default_realm`` of krb5.conf)."""
    import gssapi

    name = gssapi.Name("x", gssapi.NameType.user).canonicalize(gssapi.MechType.kerberos)
    return str(name).partition("@")[2]


def client_principal(options: Mapping[str, str]) -> str:
    """The Kerberos name a client with these JAAS options logs in as: its ``principal`` option, else
    the principal of its ticket cache (empty when there is none to read)."""
    if options.get("principal"):
        return options["principal"]
    try:
        import gssapi
        from gssapi.raw.misc import GSSError
    except ImportError:
        return ""
    login = _login(options)
    try:
        store: Store | None = {"ccache": login.cache} if login.cache else None
        return str(gssapi.Credentials(usage="initiate", store=store).name)
    except GSSError:
        return ""


def short_principal(options: Mapping[str, str]) -> str:
    """The user name a Kafka node with the ``DEFAULT`` rule sees a client with these JAAS options as."""
    name = client_principal(options)
    if not name:
        return "<the short name of the client's Kerberos principal>"
    try:
        realm = default_realm()
    except Exception:  # gssapi missing or no usable krb5.conf: assume the principal's own realm
        realm = KerberosName.parse(name).realm or ""
    try:
        return KerberosShortNamer(["DEFAULT"], realm).short_name(name)
    except ValueError:
        return name
