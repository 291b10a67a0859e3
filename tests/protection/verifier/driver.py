"""The driver inside one sandbox: runs line after line under strace, resetting the world after a line that changed it.

Started once per sandbox (``python3 -I -S -c SOURCE ROOT PRISTINE RUN``), so bubblewrap
starts once for thousands of lines. It reads one JSON request a line on stdin
(``{"line", "cwd", "env", "timeout", "shells"}``) and answers one JSON result a line on stdout:
the strace log, the first bytes of the line's output, its exit status, whether it
timed out, for the line run by each of its shells in turn. Standard library only: it
runs as a script, not as part of the tests' package.
"""

import codecs
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

#: The system calls traced: programs run, files opened (to write, or to read a protected path), changed, removed,
#: and the network. Reads by ``read(2)`` need no tracing: a file is read through an ``open`` first.
SYSCALLS = (
    "execve,execveat,open,openat,openat2,creat,truncate,ftruncate,unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,"
    "rmdir,link,linkat,symlink,symlinkat,chmod,fchmod,fchmodat,chown,fchown,lchown,fchownat,utime,utimes,utimensat,futimesat,"
    "mknod,mknodat,setxattr,lsetxattr,fsetxattr,removexattr,lremovexattr,fremovexattr,socket,connect,bind,chdir,fchdir"
)
#: System calls that change the world; opens that may (a write flag, and not a device).
_CHANGES = re.compile(
    r"^\d+\s+(?:<\.\.\. )?(?:creat|truncate|ftruncate|unlink|unlinkat|rename\w*|mkdir\w*|rmdir|link\w*|symlink\w*|\w*chmod\w*|"
    r"\w*chown\w*|utime\w*|futimesat|mknod\w*|\w*setxattr|\w*removexattr|open\w*)\b"
)
_WRITE_FLAGS = re.compile(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_DIR = re.compile(r"^(?:AT_FDCWD|\d+)<(.*)>$")
_RESULT = re.compile(r"= \d+<(.*)>$")
_OUTPUT_LIMIT = 64 * 1024
_FILE_LIMIT = 16 * 1024 * 1024


def _limits() -> None:
    resource.setrlimit(
        resource.RLIMIT_FSIZE, (_FILE_LIMIT, _FILE_LIMIT)
    )  # a runaway writer stops, the scratch does not fill
    resource.setrlimit(resource.RLIMIT_NPROC, (256, 256))


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _stop(process: "subprocess.Popen[bytes]") -> None:
    """Kill what strace traces (strace then writes its log and exits); strace itself only if it does not."""
    for pid in _descendants(process.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _read(path: str, limit: int) -> str:
    with open(path, "rb") as file:
        return file.read(limit).decode("latin-1")


def _changed(trace: str, cwd: str) -> set[str] | None:
    """Every path the trace may have changed (created, written, removed, renamed, its mode or times); None when one cannot be placed
    (a process changed its folder: ``mkdir -p a/b`` makes ``b`` from inside ``a``)."""
    changed: set[str] = set()
    for line in trace.splitlines():
        if re.match(r"^\d+\s+f?chdir\(.*\)\s+=\s+0", line):
            return None
        match = _CHANGES.match(line)
        if not match or (" open" in match.group(0) or "<... open" in match.group(0)) and not _WRITE_FLAGS.search(line):
            continue
        base = cwd
        for part in line[line.find("(") + 1 :].split(", "):
            folder = _DIR.match(part.strip())
            if folder:
                base = folder.group(1)
                if not part.startswith("AT_FDCWD") and re.match(r"^\d+\s+<?\.?\.?\.? ?f\w+\(", line):
                    changed.add(base)  # ftruncate(3</path>), fchmod(…): the fd's file itself
            for text in _QUOTED.findall(part):
                name = codecs.escape_decode(text.encode("latin-1"))[0].decode("latin-1")
                changed.add(os.path.normpath(os.path.join(base, name)))
        result = _RESULT.search(line)
        if result:
            changed.add(result.group(1))
    if any(not path.startswith("/") for path in changed):
        return None
    return {path for path in changed if not path.startswith(("/dev/", "/proc/"))}


def _open_up(path: str) -> None:
    """Make ``path`` and the folders below it listable again (a line may have made one unreadable)."""
    os.chmod(path, 0o700)
    for parent, folders, _ in os.walk(path):
        for name in folders:
            if not os.path.islink(os.path.join(parent, name)):
                os.chmod(os.path.join(parent, name), 0o700)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        _open_up(path)
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def _restore(path: str, root: str, pristine: str) -> None:
    """Put ``path`` (inside ``root``) back as it is in ``pristine``: removed if it was not there, copied back if it was."""
    parent = os.path.dirname(path)
    if os.path.isdir(parent):
        os.chmod(parent, 0o755)
    _remove(path)
    source = os.path.join(pristine, os.path.relpath(path, root))
    if os.path.islink(source):
        os.symlink(os.readlink(source), path)
    elif os.path.isdir(source):
        shutil.copytree(source, path, symlinks=True)
    elif os.path.exists(source):
        shutil.copy2(source, path)


def _reset(root: str, pristine: str, changed: set[str] | None) -> None:
    """Put the world back as planted after a line changed ``changed`` (everything, when None), and empty the private /tmp
    (but for the folders the world is mounted in)."""
    mounts = os.path.commonpath([root, pristine])
    if changed is None or any((root + "/").startswith(path + "/") for path in changed):
        changed = {os.path.join(root, entry) for entry in set(os.listdir(root)) | set(os.listdir(pristine))}
    for path in sorted(changed, key=len):
        if path.startswith(root + "/") and os.path.lexists(os.path.dirname(path)):
            _restore(path, root, pristine)
    os.chmod("/tmp", 0o1777)
    for entry in os.listdir("/tmp"):
        path = os.path.join("/tmp", entry)
        if not (mounts + "/").startswith(path + "/"):
            _remove(path)


def run(request: dict, run_dir: str, shell: str) -> dict:
    trace, out, err = (os.path.join(run_dir, name) for name in ("trace", "out", "err"))
    argv = [
        "strace",
        "-f",
        "--seccomp-bpf",
        "-qq",
        "-y",
        "-s",
        "4096",
        "-e",
        "signal=none",
        "-e",
        f"trace={SYSCALLS}",
        "-o",
        trace,
        "--",
        shell,
        "-c",
        request["line"],
    ]
    started = time.monotonic()
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        process = subprocess.Popen(
            argv,
            cwd=request["cwd"],
            env=request["env"],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            preexec_fn=_limits,
            start_new_session=True,
        )
        timed_out = False
        try:
            process.wait(timeout=request["timeout"])
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(process)
    return {
        "trace": _read(trace, _FILE_LIMIT),
        "stdout": _read(out, _OUTPUT_LIMIT),
        "stderr": _read(err, 4096),
        "rc": process.returncode,
        "timed_out": timed_out,
        "seconds": round(time.monotonic() - started, 4),
    }


def main() -> None:
    root, pristine, run_dir = sys.argv[1:4]
    _reset(root, pristine, None)
    for raw in sys.stdin:
        request = json.loads(raw)
        results = []
        for shell in request.get("shells", ["/bin/bash"]):
            result = run(request, run_dir, shell)
            changed = _changed(result["trace"], request["cwd"])
            if changed is None or changed:
                _reset(root, pristine, changed)
            results.append(result)
        sys.stdout.write(json.dumps(_merged(results, request.get("apart", "\n"))) + "\n")
        sys.stdout.flush()


def _merged(results: list, apart: str) -> dict:
    """One answer for a line run by each of its shells: every trace (``apart`` between them) and output, the first
    failing status."""
    return {
        "trace": apart.join(r["trace"] for r in results),
        "stdout": "".join(r["stdout"] for r in results)[:_OUTPUT_LIMIT],
        "stderr": "".join(r["stderr"] for r in results)[:4096],
        "rc": next((r["rc"] for r in results if r["rc"] != 0), results[-1]["rc"]),
        "timed_out": any(r["timed_out"] for r in results),
        "seconds": round(sum(r["seconds"] for r in results), 4),
    }


if __name__ == "__main__":
    main()
