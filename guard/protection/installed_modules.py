"""The top-level modules Python imports from the environments a project runs in, to tell a written file that stands in for one.

``python3 -m pytest`` run in the project imports ``./pytest.py`` (or ``./pytest/__init__.py``) instead of the
installed pytest: the folder a script or ``-m`` runs from comes first on ``sys.path``, and pytest puts test
folders there too. A tool the judge is later told is running would run the agent's code. So a written file
whose module name is one Python would otherwise find installed, or in its standard library, is not a plain
project write (:func:`stands_in`).

Where the names come from: ``$VIRTUAL_ENV``, ``$CONDA_PREFIX``, the project's ``.venv``/``venv``/``env`` and
its tox and nox environments, every ``python3``/``python`` on the hook's ``PATH`` (a pyenv, asdf or mise shim:
every version it holds) and guard's own interpreter; in each, the site-packages and dist-packages folders
(and the base's, for a venv that includes the system's packages) and the user's site folder; in those, every
package, module and extension module, and those of the folders their ``.pth`` files add. A name whose only
home is a folder a ``.pth`` file or an editable install's finder points into (the project's own package,
installed with ``pip install -e .``) counts only for a file outside that home: the project's own code is
what the agent is there to write.

Listing some 500 entries costs about a millisecond, so the names are cached in guard's cache folder, keyed by
every folder's path and modification time and those of the ``.pth`` files and the folders they add (``pip
install`` and ``uninstall`` change the site folder's), and sealed with guard's secret: a file the agent
rewrote is not believed, but built again. Standard library only: it runs on the ``guard hook`` path, only for
a Python file the write lane would otherwise decide.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping

from guard.core.regular_file import read_text

__all__ = ["Installed", "installed", "stands_in"]

#: What the cache file is sealed for (:func:`guard.storage.secret.seal`), and its format's version.
_PURPOSE = "python-modules-v1"
#: Importable file endings (``importlib.machinery.all_suffixes()`` on CPython for Linux and macOS).
_SUFFIXES = (".py", ".pyc", ".so", ".pyd")
_VERSION = re.compile(r"python(\d+\.\d+)$")
_LIB_VERSION = re.compile(r"python3\.\d+$")
_MAPPING = re.compile(r"""['"]([A-Za-z_][\w.]*)['"]\s*:\s*['"]([^'"]+)['"]""")
#: The project's environments, by folder; and folders of environments (tox's, nox's).
_PROJECT_ENVS = (".venv", "venv", "env")
_ENV_FOLDERS = (".tox", ".nox")
#: Bounds: interpreters and prefixes looked at, entries listed, folders a .pth may add, the cache file's size.
_MAX_PREFIXES, _MAX_ENTRIES, _MAX_PTH_FOLDERS, _MAX_CACHE = 64, 20_000, 64, 8 * 1024 * 1024


class Installed:
    """Top-level module names: found in a site folder (``names``, ``namespaces`` the folders without ``__init__``),
    and homes (``homes``: name -> folders or files it lives in, for a name found only where a .pth or an
    editable finder points); ``complete``: no folder held more entries than are listed (a folder the agent filled
    to push the real site-packages past the bound leaves it False)."""

    __slots__ = ("names", "namespaces", "homes", "complete")

    def __init__(
        self,
        names: frozenset[str] = frozenset(),
        namespaces: frozenset[str] = frozenset(),
        homes: Mapping[str, tuple[str, ...]] | None = None,
        complete: bool = True,
    ) -> None:
        self.names, self.namespaces, self.homes, self.complete = names, namespaces, dict(homes or {}), complete


def stands_in(parts: list[str], root: str, env: Mapping[str, str]) -> str | None:
    """Why writing ``root/parts…`` puts a module where Python would import it instead of its own or an installed one:
    the file's module name (``pytest.py``, ``json.py``), or a package folder on its path (``pytest/__init__.py``), is
    one the standard library or the project's environments hold. None for a file Python does not import."""
    module = _module_name(parts[-1])
    if module is None:
        return None
    target = os.path.join(root, *parts)
    candidates: list[tuple[str, str, bool]] = [] if module == "__init__" else [(module, target, True)]
    for at, part in enumerate(parts[:-1]):
        folder = os.path.join(root, *parts[: at + 1])
        package = (at == len(parts) - 2 and module == "__init__") or any(
            os.path.exists(os.path.join(folder, "__init__" + s)) for s in (".py", ".pyc")
        )
        candidates.append((part, folder, package))
    for name, _, package in candidates:
        if package and name in sys.stdlib_module_names:
            return f"Python would import it instead of its own {name!r} module"
    found = installed(root, env)
    if not found.complete:
        return "the modules of the project's environments could not all be listed"
    for name, where, package in candidates:
        if (package or name in found.namespaces) and name in found.names:
            return f"Python would import it instead of the installed {name!r}"
        homes = found.homes.get(name, ())
        if (
            homes
            and (package or name in found.namespaces)
            and not any(where == home or where.startswith(home.rstrip("/") + "/") for home in homes)
        ):
            return f"Python would import it instead of the installed {name!r} ({homes[0]})"
    return None


def _module_name(name: str) -> str | None:
    """The module a file of this name is imported as (``x.py``, ``x.cpython-311-x86_64-linux-gnu.so``), or None."""
    if not name.endswith(_SUFFIXES):
        return None
    module = name.split(".", 1)[0]
    return module if module.isidentifier() else None


def installed(root: str, env: Mapping[str, str]) -> Installed:
    """The modules of the environments the project in ``root`` may run in: from guard's sealed cache when no folder changed."""
    folders = sorted(set(_site_folders(root, env)))
    key: list[list[str | int]] = [[folder, _mtime(folder)] for folder in folders]
    cache = _cache_file(folders)
    cached = _load(cache, key) if cache is not None else None
    if cached is not None:
        return cached
    found, watched = _build(folders)
    if cache is not None:
        _store(cache, key, watched, found)
    return found


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


# --- where --------------------------------------------------------------------------------------------------------------


def _site_folders(root: str, env: Mapping[str, str]) -> Iterator[str]:
    """Every existing site-packages or dist-packages folder of the environments the project may use."""
    own = f"{sys.version_info[0]}.{sys.version_info[1]}"
    prefixes: list[tuple[str, str | None]] = [(sys.prefix, own), (sys.base_prefix, own)]
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        if env.get(variable):
            prefixes.append((env[variable], None))
    prefixes += [(os.path.join(root, name), None) for name in _PROJECT_ENVS]
    for name in _ENV_FOLDERS:
        prefixes += [(os.path.join(root, name, sub), None) for sub in _listing(os.path.join(root, name))[:16]]
    for interpreter in _interpreters(env):
        prefixes += _prefixes(interpreter)
    home = env.get("HOME") or os.path.expanduser("~")
    seen: set[str] = set()
    versions: set[str] = set()
    for prefix, version in prefixes[:_MAX_PREFIXES]:
        if prefix in seen or not os.path.isdir(prefix):
            continue
        seen.add(prefix)
        for folder, found in _prefix_sites(prefix, version):
            versions.add(found)
            yield folder
    for version in versions:
        user = os.path.join(home, ".local", "lib", f"python{version}", "site-packages")
        if os.path.isdir(user):
            yield user


def _interpreters(env: Mapping[str, str]) -> Iterator[str]:
    """What a bare ``python3`` and ``python`` run: the first of each on PATH."""
    for name in ("python3", "python"):
        for folder in env.get("PATH", os.defpath).split(os.pathsep)[:64]:
            candidate = os.path.join(folder, name)
            if folder and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                yield candidate
                break


def _prefixes(interpreter: str) -> list[tuple[str, str | None]]:
    """The installation(s) an interpreter on PATH runs: its venv, what a version manager's shim may pick, the real one."""
    found: list[tuple[str, str | None]] = []
    bin_folder = os.path.dirname(os.path.abspath(interpreter))
    venv = os.path.dirname(bin_folder)
    if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        found.append((venv, None))
    if os.path.basename(bin_folder) == "shims":  # pyenv (versions/*), asdf and mise (installs/python/*)
        for holder in (os.path.join(venv, "versions"), os.path.join(venv, "installs", "python")):
            found += [(os.path.join(holder, name), None) for name in _listing(holder)[:16]]
    real = os.path.realpath(interpreter)
    version = _VERSION.search(os.path.basename(real))
    found.append((os.path.dirname(os.path.dirname(real)), version.group(1) if version else None))
    return found


def _prefix_sites(prefix: str, version: str | None) -> Iterator[tuple[str, str]]:
    """(site folder, its Python version) of an installation, and of the base one a venv includes (Debian's
    dist-packages and Fedora's lib64 for the system's)."""
    names = (
        [f"python{version}"]
        if version
        else [n for n in _listing(os.path.join(prefix, "lib")) if _LIB_VERSION.match(n)][:8]
    )
    system = prefix == "/usr"
    for name in names:
        found = name[len("python") :]
        libs = [os.path.join(prefix, "lib", name)] + (
            [os.path.join(prefix, "lib64", name), os.path.join(prefix, "local", "lib", name)] if system else []
        )
        for lib in libs:
            for sub in ("site-packages", "dist-packages"):
                folder = os.path.join(lib, sub)
                if os.path.isdir(folder):
                    yield folder, found
    if system and os.path.isdir("/usr/lib/python3/dist-packages"):
        yield "/usr/lib/python3/dist-packages", version or "3"
    config = _venv_config(prefix)
    if config.get("include-system-site-packages", "").lower() == "true" and config.get("home"):
        base = os.path.dirname(config["home"].rstrip("/"))
        if base != prefix:
            yield from _prefix_sites(base, None)


def _venv_config(prefix: str) -> dict[str, str]:
    path = os.path.join(prefix, "pyvenv.cfg")
    lines = (read_text(path, 64 * 1024) or "").splitlines()
    return {key.strip().lower(): value.strip() for key, eq, value in (line.partition("=") for line in lines) if eq}


def _listing(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


# --- what ---------------------------------------------------------------------------------------------------------------


def _build(folders: list[str]) -> tuple[Installed, list[list[str | int]]]:
    """The names in ``folders`` and the folders their .pth files add; with the .pth files and those folders, to watch."""
    names: set[str] = set()
    namespaces: set[str] = set()
    homes: dict[str, list[str]] = {}
    watched: list[list[str | int]] = []
    added: list[str] = []
    complete = True
    for folder in folders:
        entries = _entries(folder)
        complete = complete and entries is not None
        for entry in entries or []:
            name = entry.name
            if name.endswith(".pth"):
                watched.append([entry.path, _mtime(entry.path)])
                added += _pth_folders(entry.path, folder)
            elif name.startswith("__editable__") and name.endswith("finder.py"):
                watched.append([entry.path, _mtime(entry.path)])
                for module, home in _finder_mapping(entry.path):
                    homes.setdefault(module, []).append(home)
            elif _entry_is_dir(entry):
                if name.isidentifier():
                    names.add(name)
                    if not any(os.path.exists(os.path.join(entry.path, "__init__" + s)) for s in (".py", ".pyc")):
                        namespaces.add(name)
            elif _module_name(name) is not None:
                names.add(name.split(".", 1)[0])
    for folder in list(dict.fromkeys(added))[:_MAX_PTH_FOLDERS]:
        watched.append([folder, _mtime(folder)])
        entries = _entries(folder)
        complete = complete and entries is not None
        for entry in entries or []:
            module = entry.name if _entry_is_dir(entry) else _module_name(entry.name) or ""
            if module.isidentifier() and module not in names:
                homes.setdefault(module, []).append(entry.path)
    return Installed(
        frozenset(names), frozenset(namespaces), {k: tuple(v) for k, v in homes.items()}, complete
    ), watched


def _entries(folder: str) -> list[os.DirEntry[str]] | None:
    """The entries of ``folder`` (none when it cannot be listed), or None when it holds more than :data:`_MAX_ENTRIES`."""
    try:
        with os.scandir(folder) as found:
            entries = [entry for _, entry in zip(range(_MAX_ENTRIES + 1), found, strict=False)]
    except OSError:
        return []
    return entries if len(entries) <= _MAX_ENTRIES else None


def _entry_is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _pth_folders(pth: str, site: str) -> list[str]:
    """The folders a .pth file adds to ``sys.path`` (its lines that are not comments or ``import`` lines)."""
    lines = (read_text(pth, 64 * 1024) or "").splitlines()
    folders = []
    for line in lines[:_MAX_PTH_FOLDERS]:
        line = line.strip()
        if line and not line.startswith(("#", "import ", "import\t")):
            folder = os.path.normpath(os.path.join(site, line))
            if os.path.isdir(folder):
                folders.append(folder)
    return folders


def _finder_mapping(finder: str) -> list[tuple[str, str]]:
    """The ``MAPPING`` of a setuptools editable finder: top-level name -> the folder (or file) it is imported from."""
    text = read_text(finder, 256 * 1024) or ""
    start = text.find("MAPPING")
    end = text.find("}", start)
    return [(name.split(".", 1)[0], path) for name, path in _MAPPING.findall(text[start:end])] if start >= 0 else []


# --- the cache ----------------------------------------------------------------------------------------------------------


def _cache_file(folders: list[str]) -> str | None:
    from guard.core.settings import user_dir

    try:
        base = str(user_dir("cache"))
    except (OSError, RuntimeError):
        return None
    digest = hashlib.sha256("\0".join(folders).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return os.path.join(base, "python-modules", f"{digest}.json")


def _payload(key: list[list[str | int]], watched: list[list[str | int]], found: Installed) -> str:
    return json.dumps(
        {
            "key": key,
            "watched": watched,
            "names": sorted(found.names),
            "namespaces": sorted(found.namespaces),
            "homes": {k: list(v) for k, v in sorted(found.homes.items())},
            "complete": found.complete,
        },
        sort_keys=True,
        separators=(",", ":"),
    )


def _load(path: str, key: list[list[str | int]]) -> Installed | None:
    """The cached names, when the file is guard's (its seal verifies) and nothing it was built from changed."""
    from guard.storage.secret import verify

    text = read_text(path, _MAX_CACHE)
    if text is None or len(text) > _MAX_CACHE:
        return None
    mac, _, payload = text.partition("\n")
    try:
        data = json.loads(payload)
        if (
            data["key"] != key
            or any(_mtime(str(p)) != m for p, m in data["watched"])
            or not verify(mac, _PURPOSE, payload)
        ):
            return None
        return Installed(
            frozenset(data["names"]),
            frozenset(data["namespaces"]),
            {k: tuple(v) for k, v in data["homes"].items()},
            bool(data["complete"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _store(path: str, key: list[list[str | int]], watched: list[list[str | int]], found: Installed) -> None:
    """Write the cache file (its seal, a line, then the names as JSON) whole (a temporary file renamed over it); a failure only means building again next time."""
    from guard.storage.secret import TrustError, seal

    payload = _payload(key, watched, found)
    try:
        text = seal(_PURPOSE, payload) + "\n" + payload
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except (OSError, TrustError):
        pass
