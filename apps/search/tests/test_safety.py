"""Which addresses may be called. Everything here is decided without any network
traffic: addresses are checked as values, names are resolved by stand-in resolvers."""

import ipaddress
import socket

import pytest

from apps.search import AddressRefused, addresses_to_call, blocked_reason, check_addresses
from apps.search.safety import refused_without_lookup, resolve_host

BLOCKED = {
    "127.0.0.1": "loopback",
    "127.8.9.10": "loopback",
    "::1": "loopback",
    "10.0.0.1": "private",
    "172.16.5.4": "private",
    "192.168.1.1": "private",
    "169.254.169.254": "link-local",  # cloud metadata
    "fe80::1": "link-local",
    "fc00::1": "private",
    "fd12:3456::1": "private",
    "0.0.0.0": "unspecified",
    "::": "unspecified",
    "224.0.0.1": "multicast",
    "ff02::1": "multicast",
    "240.0.0.1": "reserved",
    "255.255.255.255": "reserved",  # broadcast
    "100.64.0.1": "not a public",  # carrier-grade NAT
    "192.0.2.10": "private",  # documentation range
    "::ffff:127.0.0.1": "loopback",  # IPv4-mapped
    "::ffff:10.1.2.3": "private",
    "::ffff:169.254.169.254": "link-local",
    "64:ff9b::7f00:1": "loopback",  # NAT64 of 127.0.0.1
    "2002:c0a8:101::": "private",  # 6to4 of 192.168.1.1
    "::7f00:1": "reserved",  # deprecated IPv4-compatible ::127.0.0.1
    "198.18.0.1": "private",  # benchmarking range
}

PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.215.14", "2606:4700:4700::1111", "::ffff:8.8.8.8"]


@pytest.mark.parametrize(("address", "kind"), BLOCKED.items())
def test_non_public_addresses_are_blocked_with_their_kind(address, kind):
    reason = blocked_reason(ipaddress.ip_address(address))
    assert reason is not None
    assert kind in reason


def test_an_embedded_ipv4_address_is_named_in_the_reason():
    reason = blocked_reason(ipaddress.ip_address("::ffff:127.0.0.1"))
    assert reason == "127.0.0.1 is a loopback address, inside the IPv6 address ::ffff:7f00:1"


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are_allowed(address):
    assert blocked_reason(ipaddress.ip_address(address)) is None


def test_one_private_address_among_public_ones_refuses_the_host():
    addresses = [ipaddress.ip_address("8.8.8.8"), ipaddress.ip_address("10.0.0.5")]
    with pytest.raises(AddressRefused, match="10.0.0.5 is a private address"):
        check_addresses(addresses, allow_private=False)


def test_allow_private_lets_any_address_through():
    check_addresses([ipaddress.ip_address("10.0.0.5")], allow_private=True)


def test_a_host_without_addresses_is_refused():
    with pytest.raises(AddressRefused, match="no addresses"):
        check_addresses([], allow_private=True)


def resolver_to(*addresses):
    def resolve(host, port):
        return [ipaddress.ip_address(address) for address in addresses]

    return resolve


def must_not_resolve(host, port):
    raise AssertionError(f"{host} should have been refused without a lookup")


@pytest.mark.parametrize("name", ["localhost", "LOCALHOST", "localhost.", "api.localhost"])
def test_localhost_names_are_refused_without_a_lookup(name):
    with pytest.raises(AddressRefused, match="is the local machine"):
        addresses_to_call(name, 80, allow_private=False, resolver=must_not_resolve)


@pytest.mark.parametrize("address", ["127.0.0.1", "10.9.8.7", "192.168.0.10", "169.254.169.254"])
def test_a_public_looking_name_that_resolves_inside_is_refused(address):
    # DNS rebinding and internal names: what counts is where the name points.
    with pytest.raises(AddressRefused):
        addresses_to_call("search.example", 443, allow_private=False, resolver=resolver_to(address))


def test_a_public_name_gives_its_checked_addresses_in_order():
    resolver = resolver_to("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c")
    addresses = addresses_to_call("search.example", 443, allow_private=False, resolver=resolver)
    assert [str(a) for a in addresses] == [
        "93.184.215.14",
        "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    ]


def test_an_ip_literal_is_parsed_not_looked_up(monkeypatch):
    def no_dns(*args, **kwargs):
        raise AssertionError("an IP literal must not be looked up")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    assert resolve_host("10.1.2.3", 80) == [ipaddress.ip_address("10.1.2.3")]
    assert resolve_host("::ffff:127.0.0.1", 80) == [ipaddress.ip_address("::ffff:127.0.0.1")]


def test_odd_spellings_of_loopback_are_caught_by_resolving_them(monkeypatch):
    # getaddrinfo reads "2130706433" and "127.1" as 127.0.0.1, so the check must look at
    # what they resolve to. AI_NUMERICHOST makes sure no DNS query could leave.
    real_getaddrinfo = socket.getaddrinfo

    def numeric_only(host, port, family=0, type=0, proto=0, flags=0):
        return real_getaddrinfo(host, port, family, type, proto, flags | socket.AI_NUMERICHOST)

    monkeypatch.setattr(socket, "getaddrinfo", numeric_only)
    for spelling in ("2130706433", "127.1", "0x7f.1"):
        with pytest.raises(AddressRefused, match="loopback"):
            addresses_to_call(spelling, 80, allow_private=False)


@pytest.mark.parametrize("host", ["127.1", "0x7f.0.0.1", "2130706433", "0177.0.0.1"])
def test_older_spellings_of_loopback_are_refused_when_typed_without_a_lookup(host, monkeypatch):
    def no_lookup(*args):
        raise AssertionError("looked up")

    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    assert refused_without_lookup(host) == "127.0.0.1 is a loopback address"


@pytest.mark.parametrize("host", ["example.com", "1e100.net", "8.8.8.8", "0x"])
def test_names_and_public_addresses_are_left_to_the_lookup_at_call_time(host):
    assert refused_without_lookup(host) is None
