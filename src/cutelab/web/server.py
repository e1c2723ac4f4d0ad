"""The playground's HTTP server: the standard library's threading HTTP server, on 127.0.0.1 only.

Routes (all GET; the /api/ ones are answered by ``api(path, query)``, which the static site
(``cutelab site``) calls in the browser too):

    /                    the page (static/index.html)
    /static/NAME         the page's JS and CSS (package data; figure.js/.css from cutelab.render)
    /api/tabs            the tab declarations (JSON)
    /api/figure?tab=T&F=V...   the picture of tab T for field values F=V: JSON
                         {"ok": true, "title", "html" (SVG + cell data), "ms": {...}} or
                         {"ok": false, "error": "<the LayoutError's text>", "field": the field it
                         blames or null} (status 400)
    /api/export?tab=T&format=svg|html|txt&F=V...   the picture as a file (a self-contained
                         interactive .html, .svg or .txt)

Nothing is written to disk and nothing outside this machine is contacted. Requests whose Host
header is not this server's loopback address, or that carry more than one Host header, are
refused (a web page elsewhere cannot reach the playground through DNS rebinding).

What one request may cost is capped: a picture is computed inside
``cutelab.limits.budget(REQUEST_ELEMENTS, REQUEST_SECONDS)``, and past either the answer is
413 with ``{"ok": false, "error": "... past its budget ..."}``. A connection idle for
IDLE_TIMEOUT seconds is closed, so idle clients hold no thread. A request line past 64 KiB
is answered 414 (http.server's own check), an unknown or overlong static name 404.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..errors import LayoutError
from ..limits import BudgetError, budget
from . import tabs as T

__all__ = ["make_server", "serve", "api", "DEFAULT_PORT", "figure_json", "REQUEST_ELEMENTS", "REQUEST_SECONDS", "IDLE_TIMEOUT"]

DEFAULT_PORT = 8765
HOST = "127.0.0.1"
#: the most elements one request may evaluate in all (offsets, cells: 8 bytes each, 256 MiB)
REQUEST_ELEMENTS = 1 << 25
#: the most seconds one request may compute
REQUEST_SECONDS = 20.0
#: a connection that sends nothing for this long is closed
IDLE_TIMEOUT = 30.0
_STATIC_NAME = re.compile(r"^[a-z0-9_-]{1,64}\.(?:html|js|css|svg|png)$")
_TYPES = {"html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8",
          "css": "text/css; charset=utf-8", "svg": "image/svg+xml", "png": "image/png",
          "json": "application/json; charset=utf-8", "txt": "text/plain; charset=utf-8"}


def _static(name: str) -> bytes | None:
    """A static file by name: the page's own (cutelab.web/static) or the figure layer's (cutelab.render/assets)."""
    if not _STATIC_NAME.match(name):
        return None
    for pkg, folder in (("cutelab.web", "static"), ("cutelab.render", "assets")):
        f = resources.files(pkg).joinpath(folder, name)
        try:
            if f.is_file():
                return f.read_bytes()
        except OSError:  # e.g. a name the file system refuses: not a file of ours
            return None
    return None


def _params(query: str) -> tuple[str, dict[str, str]]:
    q = dict(parse_qsl(query, keep_blank_values=True))
    return q.pop("tab", "layout"), q


def figure_json(tab_id: str, values: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON body) of /api/figure: the picture, or the error's text."""
    from ..render import html, svg

    t0 = time.perf_counter()
    try:
        with budget(REQUEST_ELEMENTS, REQUEST_SECONDS, "this request"):
            fig = T.compute(tab_id, values)
            t1 = time.perf_counter()
            s = svg.render(fig)
            t2 = time.perf_counter()
            frag = html.fragment(fig, script=False, svg_text=s)
            t3 = time.perf_counter()
    except BudgetError as e:  # past what one request may cost
        return HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"ok": False, "tab": tab_id, "error": str(e)}
    except LayoutError as e:  # ParseError, TensorError: the user's input
        return HTTPStatus.BAD_REQUEST, {"ok": False, "tab": tab_id, "error": str(e), "field": getattr(e, "field", None)}
    except (ValueError, TypeError, ZeroDivisionError, OverflowError, IndexError) as e:
        # bad input that reached a check without a LayoutError: still the user's to fix, said as it is
        return HTTPStatus.BAD_REQUEST, {"ok": False, "tab": tab_id, "error": f"{tab_id}: {type(e).__name__}: {e}"}
    except Exception as e:  # pragma: no cover - a bug of ours: say so, keep serving
        traceback.print_exc(file=sys.stderr)
        return HTTPStatus.INTERNAL_SERVER_ERROR, {
            "ok": False, "tab": tab_id, "error": f"internal error in tab {tab_id} ({type(e).__name__}: {e}); please report it"}
    ms = {"figure": round((t1 - t0) * 1e3, 2), "svg": round((t2 - t1) * 1e3, 2), "cells": round((t3 - t2) * 1e3, 2)}
    return HTTPStatus.OK, {"ok": True, "tab": tab_id, "title": fig.title, "html": frag, "ms": ms}


def _export(query: str) -> tuple[int, bytes, str, dict[str, str]]:
    from .. import render as R

    tab_id, values = _params(query)
    fmt = values.pop("format", "html")
    kinds = {"html": ("html", "html"), "svg": ("svg", "svg"), "txt": ("text", "txt")}
    if fmt not in kinds:
        return HTTPStatus.BAD_REQUEST, f"export: format must be html, svg or txt, got {fmt!r}\n".encode(), _TYPES["txt"], {}
    name, ext = kinds[fmt]
    try:
        with budget(REQUEST_ELEMENTS, REQUEST_SECONDS, "this request"):
            fig = T.compute(tab_id, values)
            body = R.render(fig, name).encode()
    except BudgetError as e:
        return HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"{e}\n".encode(), _TYPES["txt"], {}
    except (LayoutError, ValueError, TypeError) as e:
        return HTTPStatus.BAD_REQUEST, f"{e}\n".encode(), _TYPES["txt"], {}
    return HTTPStatus.OK, body, _TYPES[ext], {"Content-Disposition": f'attachment; filename="cutelab-{tab_id}.{ext}"'}


def api(path: str, query: str) -> tuple[int, bytes, str, dict[str, str]]:
    """The answer to ``GET path?query`` for a path under /api/: (status, body, content type, extra headers).

    The server's handler sends it as it is; the static site (``cutelab site``, cutelab.web.site)
    calls this same function inside Pyodide, so both pages get the same answers.
    """
    if path == "/api/tabs":
        return HTTPStatus.OK, _dumps({"tabs": T.tabs_json()}), _TYPES["json"], {}
    if path == "/api/figure":
        status, data = figure_json(*_params(query))
        return status, _dumps(data), _TYPES["json"], {}
    if path == "/api/export":
        return _export(query)
    return HTTPStatus.NOT_FOUND, f"not found: {path}\n".encode(), _TYPES["txt"], {}


def _dumps(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


class _Handler(BaseHTTPRequestHandler):
    server_version = "cutelab-playground"
    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT  # StreamRequestHandler: the socket's timeout; an idle connection is closed

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _host_ok(self) -> bool:
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1:  # none, or two (a proxy and we could read different ones): refused
            return False
        host = hosts[0].strip().lower()
        port = self.server.server_address[1]
        return host in {f"127.0.0.1:{port}", f"localhost:{port}", "127.0.0.1", "localhost"}

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802
        if len(self.headers.get_all("Host") or []) > 1:
            self.close_connection = True
            self._send(HTTPStatus.BAD_REQUEST, b"cutelab playground: more than one Host header\n", _TYPES["txt"])
            return
        if not self._host_ok():
            self._send(HTTPStatus.FORBIDDEN, b"cutelab playground: only for 127.0.0.1\n", _TYPES["txt"])
            return
        url = urlsplit(self.path)
        path = url.path
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, _static("index.html"), _TYPES["html"])
        elif path.startswith("/static/"):
            name = path[len("/static/"):]
            body = _static(name)
            if body is None:
                self._send(HTTPStatus.NOT_FOUND, f"no static file {name!r}\n".encode(), _TYPES["txt"])
            else:
                self._send(HTTPStatus.OK, body, _TYPES[name.rsplit(".", 1)[1]])
        elif path.startswith("/api/"):
            self._send(*api(path, url.query))
        else:
            self._send(HTTPStatus.NOT_FOUND, f"not found: {path}\n".encode(), _TYPES["txt"])


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    verbose = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        # the page aborts a request when a newer keystroke supersedes it: not worth a traceback
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)):
            return
        super().handle_error(request, client_address)


def make_server(port: int | None = None, verbose: bool = False) -> ThreadingHTTPServer:
    """A playground server bound to 127.0.0.1 (not yet serving; call serve_forever).

    ``port=None`` takes DEFAULT_PORT when it is free, else a free port the OS picks; ``0``
    always lets the OS pick; any other port is taken as it is (OSError when busy).
    """
    if port is None:
        try:
            srv = _Server((HOST, DEFAULT_PORT), _Handler)
        except OSError:
            srv = _Server((HOST, 0), _Handler)
    else:
        srv = _Server((HOST, port), _Handler)
    srv.verbose = verbose
    return srv


def url_of(srv: ThreadingHTTPServer) -> str:
    return f"http://{HOST}:{srv.server_address[1]}/"


def serve(port: int | None = None, open_browser: bool = True, verbose: bool = False) -> None:
    """Run the playground until Ctrl-C: print its address, open it in the browser unless asked not to."""
    srv = make_server(port, verbose)
    url = url_of(srv)
    print(f"cutelab playground at {url}  (Ctrl-C to stop)", flush=True)
    if open_browser:
        import webbrowser

        threading.Timer(0.3, webbrowser.open, args=(url,)).start()
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        print("\ncutelab playground stopped", flush=True)
    finally:
        srv.server_close()
