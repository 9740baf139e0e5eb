"""Which addresses Relevo may call: the guard against server-side request forgery.

A team lead types any URL into an endpoint, and Relevo's servers call it. Without a
guard, "http://169.254.169.254/" (cloud metadata), "http://localhost:6379/" (our Redis)
or any host inside our network would be one form away. So, unless the deployment allows
private addresses (a self-hosted Relevo searching an internal system):

- `localhost` and `*.localhost` names are refused without a lookup;
- the host is resolved and refused if ANY of its addresses is not public, IPv4 and IPv6
  alike, looking through IPv6 forms that carry an IPv4 address (IPv4-mapped
  ``::ffff:127.0.0.1``, NAT64 ``64:ff9b::/96``, 6to4 ``2002::/16``);
- the client then connects to the address checked here, not to the name, so a DNS
  answer that changes between check and connect (DNS rebinding) cannot slip through.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[IPAddress]]

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class AddressRefused(Exception):
    """The host is not one Relevo may call; the message says which address and why."""


def blocked_reason(address: IPAddress) -> str | None:
    """Why `address` may not be called without allow_private, or None if it is public.

    The named categories come first so the message is specific ("a loopback address",
    reserved before private because Python counts 240.0.0.0/4 as both);
    `is_global` then catches the rest that is not routable on the internet (shared
    100.64/10, documentation ranges, ...).
    """
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv6 address that carries an IPv4 one reaches that IPv4 host, so the
        # IPv4 address decides. (For IPv4-mapped ones it is the only thing that can:
        # the ::ffff:0:0/96 block itself counts as reserved.)
        mapped = address.ipv4_mapped or _nat64_ipv4(address)
        embedded = mapped or address.sixtofour
        inner = blocked_reason(embedded) if embedded is not None else None
        if inner is not None:
            return f"{inner}, inside the IPv6 address {address}"
        if mapped is not None:
            return None
    if address.is_unspecified:
        return f"{address} is an unspecified address"
    if address.is_loopback:
        return f"{address} is a loopback address"
    if address.is_link_local:
        return f"{address} is a link-local address"
    if address.is_multicast:
        return f"{address} is a multicast address"
    if address.is_reserved:
        return f"{address} is a reserved address"
    if address.is_private:
        return f"{address} is a private address"
    if not address.is_global:
        return f"{address} is not a public address"
    return None


def _nat64_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_localhost_name(host: str) -> bool:
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def refused_without_lookup(host: str) -> str | None:
    """Why `host` may not be called, when that can be told without a DNS lookup (the
    local machine by name, a non-public address literal), else None. What a form checks
    when a URL is typed; the full check, with the name resolved, runs on every call."""
    if is_localhost_name(host):
        return f"'{host}' is the local machine"
    address: IPAddress | None
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        address = _legacy_ipv4(host)
    if address is None:
        return None  # a name: checked, resolved, on every call
    return blocked_reason(address)


_LEGACY_IPV4 = re.compile(r"[0-9][0-9a-fA-FxX.]*")


def _legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address the system resolver reads, without a lookup, from an IPv4 address in
    an older spelling ("127.1", "0x7f.0.0.1", "2130706433", "0177.0.0.1"), else None."""
    if not _LEGACY_IPV4.fullmatch(host):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def resolve_host(host: str, port: int) -> list[IPAddress]:
    """All addresses of `host` in the system resolver's preferred order, no duplicates.

    An IP literal is parsed, not looked up, so checking one never touches the network.
    """
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    addresses: list[IPAddress] = []
    for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        # An IPv6 link-local answer may carry a zone ("fe80::1%eth0"); the zone does not
        # change what kind of address it is.
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def check_addresses(addresses: list[IPAddress], *, allow_private: bool) -> None:
    """Raise `AddressRefused` unless every address may be called.

    All of them, not just the first: a name answering with one public and one private
    address is either misconfigured or an attempt to get through.
    """
    if not addresses:
        raise AddressRefused("the host has no addresses")
    if allow_private:
        return
    for address in addresses:
        reason = blocked_reason(address)
        if reason is not None:
            raise AddressRefused(f"{reason}; calls to private addresses are not allowed")


def addresses_to_call(
    host: str, port: int, *, allow_private: bool, resolver: Resolver | None = None
) -> list[IPAddress]:
    """The checked addresses to connect to for `host`, in order of preference.

    Raises `AddressRefused`, or OSError (socket.gaierror) when the name does not resolve.
    """
    if not allow_private and is_localhost_name(host):
        raise AddressRefused(f"'{host}' is the local machine; calls to it are not allowed")
    addresses = (resolver or resolve_host)(host, port)
    check_addresses(addresses, allow_private=allow_private)
    return addresses
