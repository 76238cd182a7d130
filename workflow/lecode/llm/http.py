"""The HTTP side of an LLM endpoint: one ``aiohttp`` session per event loop and model entry.

Why ``aiohttp``: at the harness's maximum rate (the mock endpoint at latency 0) a bare
``aiohttp`` session spends about a quarter of the CPU per call of a bare ``httpx2`` client
on the same requests, and under a dialogue's traffic (few requests in flight, the other pooled
connections idle) ``httpx2``'s pool re-checks every idle connection at each request
(``benchmarks/harness_vs_raw.py``, ``benchmarks/README.md``).

The session is built with ``trust_env=False``: with it, ``aiohttp`` parses ``~/.netrc`` and
the proxy variables again on every request, in a worker thread. The proxy the environment
names (``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``, minus ``NO_PROXY``, as ``httpx`` and the
``openai`` SDK read them) is resolved once per session instead (:func:`proxy_for`).

Certificates are verified as ``httpx`` and the ``openai`` SDK verify them (:func:`ssl_context`):
against ``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set, else ``certifi``'s bundle.

``aiohttp`` is imported with the first session (about 0.3 s): a job whose roles make no HTTP
request (offline agents, a replay served by the store) does not pay for it.
"""

from __future__ import annotations

import os
import ssl
import sys
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit


@dataclass(frozen=True)
class TransportFailure:
    kind: Literal["timeout", "connection", "malformed"]
    detail: str
    retryable: bool = True


def transport_failure(exc: BaseException) -> TransportFailure | None:
    """The failure class of an exception raised while a request was sent or its reply read;
    None for any other exception.

    Timeouts (connect or read); a reply whose body could not be decoded (bad compression:
    malformed); any other failure of the connection (refused, reset, not HTTP, closed before
    or in the middle of the reply). A certificate that fails verification is a connection
    failure that no retry can fix (not retried); a URL the library cannot request at all is
    re-raised, a configuration error."""
    if isinstance(exc, TimeoutError):  # aiohttp's connect and read timeouts are ones too
        return TransportFailure(
            "timeout", f"request timed out ({exc})" if str(exc) else "request timed out"
        )
    aiohttp = sys.modules.get("aiohttp")  # no session yet: none of its exceptions can exist
    if aiohttp is not None:
        from aiohttp.http_exceptions import ContentLengthError, TransferEncodingError

        if isinstance(exc, aiohttp.InvalidURL):
            raise exc
        if isinstance(exc, aiohttp.ClientPayloadError) and not isinstance(
            exc.__cause__, ContentLengthError | TransferEncodingError
        ):
            return TransportFailure("malformed", f"undecodable response body: {exc}")
        if isinstance(exc, aiohttp.ClientConnectorCertificateError):
            return TransportFailure(
                "connection",
                f"TLS certificate of the endpoint not trusted ({exc}); set SSL_CERT_FILE or "
                "SSL_CERT_DIR to the CA that signed it",
                retryable=False,
            )
        if isinstance(exc, aiohttp.ClientError):
            return TransportFailure("connection", f"connection error: {type(exc).__name__}: {exc}")
    if isinstance(exc, ConnectionError):
        return TransportFailure("connection", f"connection error: {type(exc).__name__}: {exc}")
    return None


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    retry_after: str | None


def proxy_for(url: str) -> str | None:
    """The proxy URL the environment names for requests to ``url``, or None.

    ``<scheme>_proxy`` then ``all_proxy``, unless ``no_proxy`` lists the host, read as
    ``urllib`` reads them (either case, lower case first). Only HTTP(S) proxies are
    supported."""
    proxies = urllib.request.getproxies_environment()
    parts = urlsplit(url)
    # (urllib.request.proxy_bypass_environment is not in the type stubs)
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if "no" in proxies and bypass(parts.hostname or "", proxies):
        return None
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if proxy is None:
        return None
    if "://" not in proxy:
        proxy = "http://" + proxy
    if urlsplit(proxy).scheme not in ("http", "https"):
        raise ValueError(
            f"proxy {proxy!r} for {url}: only http:// and https:// proxies are supported"
        )
    return proxy


def ssl_context(environ: Mapping[str, str] | None = None) -> ssl.SSLContext:
    """The TLS settings of a session: the CA certificates of ``SSL_CERT_FILE`` and/or
    ``SSL_CERT_DIR`` when either is set, else ``certifi``'s bundle (a slim container may have no
    system store), else the system's."""
    env = os.environ if environ is None else environ
    cafile, capath = env.get("SSL_CERT_FILE") or None, env.get("SSL_CERT_DIR") or None
    if cafile or capath:
        return ssl.create_default_context(cafile=cafile, capath=capath)
    try:
        import certifi
    except ImportError:  # pragma: no cover - certifi comes with httpx, a dependency
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


class ChatSession:
    """POSTs JSON bodies to one URL with fixed headers, through a connection pool that lives
    in the event loop that created it (call :meth:`close` inside that loop)."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        timeout: float,
        *,
        read_timeout: float | None = None,
    ) -> None:
        """``timeout``: seconds to connect; ``read_timeout``: seconds to wait for the reply's
        next bytes (None: no limit here, the caller keeps time, as :class:`Endpoint` does)."""
        import aiohttp

        self.url = url
        self.proxy = proxy_for(url)
        # loading a CA bundle takes about 20 ms: only for sessions that need one
        needs_tls = any(u and u.startswith("https:") for u in (url, self.proxy))
        self._session = aiohttp.ClientSession(
            headers=dict(headers),
            # no overall limit: a long completion may take minutes; the socket-level limits
            # catch a stalled connection (as httpx's connect/read timeouts do)
            timeout=aiohttp.ClientTimeout(
                total=None,
                sock_connect=timeout,
                sock_read=read_timeout,
            ),
            # the endpoint's concurrency limit bounds the connections
            connector=aiohttp.TCPConnector(limit=0, ssl=ssl_context() if needs_tls else True),
            trust_env=False,
            auto_decompress=True,
        )

    async def post(self, body: bytes, headers: Mapping[str, str]) -> Reply:
        """Send ``body`` and read the whole reply, whatever its status."""
        async with self._session.post(
            self.url, data=body, headers=headers, proxy=self.proxy, allow_redirects=False
        ) as reply:
            return Reply(reply.status, await reply.read(), reply.headers.get("Retry-After"))

    @property
    def closed(self) -> bool:
        return self._session.closed

    async def close(self) -> None:
        await self._session.close()
