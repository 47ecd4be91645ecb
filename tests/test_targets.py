"""Target policy: production refuses non-public addresses, also for names that resolve there."""

from __future__ import annotations

import pytest

from shared.errors import TargetRefused
from shared.targets import check_target


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://localhost:8080/x",
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[fe80::1]/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
        "ftp://example.com/",
        "file:///etc/passwd",
        "http:///nohost",
    ],
)
def test_refused_in_production(url: str) -> None:
    with pytest.raises(TargetRefused):
        check_target(url, allow_private=False)


def test_allowed_when_private_targets_enabled() -> None:
    check_target("http://127.0.0.1:1234/", allow_private=True)


def test_bad_scheme_refused_even_when_private_allowed() -> None:
    with pytest.raises(TargetRefused):
        check_target("javascript:alert(1)", allow_private=True)


def test_a_temporary_dns_failure_is_not_a_refusal() -> None:
    import socket

    from shared import targets
    from shared.errors import TargetUnresolved

    def flaky(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    def nxdomain(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    try:
        targets.use_resolver(flaky)
        with pytest.raises(TargetUnresolved):
            check_target("http://example.com/", allow_private=False)
        targets.use_resolver(nxdomain)
        with pytest.raises(TargetRefused):
            check_target("http://example.com/", allow_private=False)
    finally:
        targets.use_resolver(None)
