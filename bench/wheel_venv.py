"""Run a benchmark with guard as users install it: the wheel, in a fresh venv, not this editable checkout.

A dev venv's interpreter starts slower (its ``.pth`` files, an editable finder, the system
site-packages), which hides guard's own share of a ``guard hook`` call behind a higher
``python -c pass``. This builds the wheel of this checkout (``pip wheel --no-deps``), makes a
venv without system site-packages, installs the wheel there with its dependencies, and runs
the benchmark script with that venv's interpreter, so every ratio is against its start-up.

    python bench/wheel_venv.py [--venv DIR] [--rebuild] bench_cache_hook.py [--runs 30 …]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_wheel(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(ROOT)], check=True
    )
    return max(out.glob("plainguard-*.whl"), key=lambda p: p.stat().st_mtime)


def make_venv(venv: Path, wheel: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--force-reinstall", "--no-deps", str(wheel)], check=True
    )
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", f"{wheel}[serve,redis]"], check=True
    )  # its dependencies, guard serve's and the fleet row's (Redis)
    return python


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--venv", type=Path, default=Path(tempfile.gettempdir()) / "guard-wheel-venv", help="the venv to make or reuse"
    )
    parser.add_argument("script", help="a benchmark in bench/, e.g. bench_cache_hook.py")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        python = make_venv(args.venv, build_wheel(Path(out)))
    installed = subprocess.run(
        [str(python), "-c", "import guard, sys; print(guard.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    )
    print(f"guard from {installed.stdout.strip()} ({python})\n", flush=True)
    sys.exit(
        subprocess.run(
            [str(python), str(Path(__file__).parent / args.script), *args.args], cwd=Path(__file__).parent, check=False
        ).returncode
    )


if __name__ == "__main__":
    main()
