"""The one packaging step pyproject.toml cannot say: the top-level prompts/ folder is the package guard.prompts.

The judge prompts stay where the project's layout puts them (prompts/ beside guard/) and reach
the wheel, the sdist and an editable install as guard/prompts/ (see guard/judge/prompts.py).
"""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["guard*"]), "guard.prompts"], package_dir={"guard.prompts": "prompts"})
