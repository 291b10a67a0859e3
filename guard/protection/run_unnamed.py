"""Files that build, test and docs tools run (or read as instructions) without being told their name.

``pytest`` runs every ``conftest.py`` it passes, ``make`` runs the ``Makefile``, ``npm test`` runs
``package.json``'s script, ``mkdocs build`` the hooks ``mkdocs.yml`` names. The judge that later sees
``pytest`` or ``npm test`` is not shown those files, so writing one is not a plain project write: the
write lane (:mod:`guard.judge.read_only_lane`) leaves it to the judge, which sees the code when it is
written. Two checks:

* :data:`RUN_UNNAMED`: names (matched against every part of the written path, case-insensitively),
  each with the tool and the documentation that says the tool runs it;
* :func:`named_by_config`: a file the project's own tool configs name (``"test": "node scripts/t.js"``,
  ``addopts = -p myplugin``, ``hooks: [hooks/x.py]``, ``build-backend = "backend"``), found by its path,
  name or Python module name in those configs' text (each read bounded).

Standard library only: it runs on the ``guard hook`` path, for a call the write lane would otherwise decide.
"""

from __future__ import annotations

import fnmatch
import os
import re

from guard.core.regular_file import read_text

__all__ = ["NAMING_CONFIGS", "RUN_UNNAMED", "named_by_config", "run_unnamed"]

_PYTEST = "https://docs.pytest.org/en/stable/reference/customize.html"
_JS_CONFIG = ("*.config.js", "*.config.cjs", "*.config.mjs", "*.config.ts", "*.config.cts", "*.config.mts")
#: (pattern, the tool that runs or reads it unnamed, where its documentation says so). A pattern in lower case matches
#: any case (``Makefile``, ``makefile``); one with a capital letter only that spelling (Bazel's ``BUILD``, not a ``build/``).
RUN_UNNAMED: tuple[tuple[str, str, str], ...] = (
    # Python
    (
        "conftest.py",
        "pytest loads it from every folder it collects",
        "https://docs.pytest.org/en/stable/reference/fixtures.html",
    ),
    ("pytest.ini", "pytest's config (addopts -p loads a plugin)", _PYTEST),
    (
        "pyproject.toml",
        "pytest's config; pip's build backend (backend-path: an in-tree one)",
        "https://pip.pypa.io/en/stable/reference/build-system/pyproject-toml/",
    ),
    ("setup.cfg", "pytest's and setuptools' config", _PYTEST),
    ("tox.ini", "tox's environments and commands; pytest's config", "https://tox.wiki/en/latest/config.html"),
    ("setup.py", "pip install . runs it", "https://pip.pypa.io/en/stable/reference/build-system/setup-py/"),
    ("noxfile.py", "nox runs its sessions", "https://nox.thea.codes/en/stable/usage.html"),
    ("hatch.toml", "hatch's environments and scripts", "https://hatch.pypa.io/latest/config/environment/overview/"),
    (
        "hatch_build.py",
        "hatchling's custom build hook (its default path)",
        "https://hatch.pypa.io/latest/plugins/build-hook/custom/",
    ),
    ("pdm_build.py", "pdm-backend's build hooks", "https://backend.pdm-project.org/hooks/"),
    ("pipfile", "pipenv run runs its [scripts]", "https://pipenv.pypa.io/en/latest/scripts.html"),
    ("manage.py", "Django's commands", "https://docs.djangoproject.com/en/stable/ref/django-admin/"),
    ("tasks.py", "invoke runs its tasks", "https://docs.pyinvoke.org/en/stable/getting-started.html"),
    ("fabfile.py", "Fabric runs its tasks", "https://docs.fabfile.org/en/latest/cli.html"),
    ("dodo.py", "doit runs its tasks", "https://pydoit.org/usage.html"),
    ("sitecustomize.py", "Python imports it at start-up", "https://docs.python.org/3/library/site.html"),
    ("usercustomize.py", "Python imports it at start-up", "https://docs.python.org/3/library/site.html"),
    ("*.pth", "Python's site module runs its import lines", "https://docs.python.org/3/library/site.html"),
    (
        "*.pyc",
        "Python runs a cached module instead of its source",
        "https://docs.python.org/3/tutorial/modules.html#compiled-python-files",
    ),
    (
        "__pycache__",
        "Python runs a cached module instead of its source",
        "https://docs.python.org/3/tutorial/modules.html#compiled-python-files",
    ),
    (
        "conf.py",
        "Sphinx runs the docs' conf.py (and the extensions it names)",
        "https://www.sphinx-doc.org/en/master/usage/configuration.html",
    ),
    ("mkdocs.yml", "MkDocs runs the hooks it names", "https://www.mkdocs.org/user-guide/configuration/#hooks"),
    ("mkdocs.yaml", "MkDocs runs the hooks it names", "https://www.mkdocs.org/user-guide/configuration/#hooks"),
    ("mypy.ini", "mypy loads the plugins it names", "https://mypy.readthedocs.io/en/stable/config_file.html"),
    (
        "requirements*.txt",
        "pip install -r (an -e path, an index URL)",
        "https://pip.pypa.io/en/stable/reference/requirements-file-format/",
    ),
    ("constraints*.txt", "pip install -c", "https://pip.pypa.io/en/stable/user_guide/#constraints-files"),
    (".pre-commit-config.yaml", "pre-commit runs its local hooks", "https://pre-commit.com/#repository-local-hooks"),
    # make, C and C++, generic task runners
    ("makefile", "make", "https://www.gnu.org/software/make/manual/make.html#Makefile-Names"),
    ("gnumakefile", "make", "https://www.gnu.org/software/make/manual/make.html#Makefile-Names"),
    ("*.mk", "make includes", "https://www.gnu.org/software/make/manual/make.html#Include"),
    ("cmakelists.txt", "CMake", "https://cmake.org/cmake/help/latest/manual/cmake-language.7.html"),
    ("*.cmake", "CMake includes", "https://cmake.org/cmake/help/latest/manual/cmake-language.7.html"),
    ("meson.build", "Meson (run_command, custom targets)", "https://mesonbuild.com/Syntax.html"),
    ("meson_options.txt", "Meson", "https://mesonbuild.com/Build-options.html"),
    ("meson.options", "Meson", "https://mesonbuild.com/Build-options.html"),
    ("build.ninja", "ninja runs its rules", "https://ninja-build.org/manual.html"),
    ("sconstruct", "SCons", "https://scons.org/doc/production/HTML/scons-user.html"),
    ("sconscript", "SCons", "https://scons.org/doc/production/HTML/scons-user.html"),
    ("justfile", "just", "https://just.systems/man/en/"),
    (".justfile", "just", "https://just.systems/man/en/"),
    ("taskfile.yml", "Task", "https://taskfile.dev/docs/guide#supported-file-names"),
    ("taskfile.yaml", "Task", "https://taskfile.dev/docs/guide#supported-file-names"),
    ("taskfile.dist.yml", "Task", "https://taskfile.dev/docs/guide#supported-file-names"),
    ("taskfile.dist.yaml", "Task", "https://taskfile.dev/docs/guide#supported-file-names"),
    ("earthfile", "Earthly", "https://docs.earthly.dev/docs/earthfile"),
    ("dockerfile", "docker build", "https://docs.docker.com/reference/dockerfile/"),
    ("docker-compose.yml", "docker compose", "https://docs.docker.com/compose/intro/compose-application-model/"),
    ("docker-compose.yaml", "docker compose", "https://docs.docker.com/compose/intro/compose-application-model/"),
    ("compose.yml", "docker compose", "https://docs.docker.com/compose/intro/compose-application-model/"),
    ("compose.yaml", "docker compose", "https://docs.docker.com/compose/intro/compose-application-model/"),
    ("procfile", "foreman, heroku local", "https://devcenter.heroku.com/articles/procfile"),
    ("BUILD", "Bazel", "https://bazel.build/concepts/build-files"),
    ("build.bazel", "Bazel", "https://bazel.build/concepts/build-files"),
    ("WORKSPACE", "Bazel", "https://bazel.build/external/overview"),
    ("workspace.bazel", "Bazel", "https://bazel.build/external/overview"),
    ("module.bazel", "Bazel", "https://bazel.build/external/module"),
    ("*.bzl", "Bazel", "https://bazel.build/extending/concepts"),
    (".bazelrc", "Bazel", "https://bazel.build/run/bazelrc"),
    (
        "*.sh",
        "a script other scripts and tools run",
        "https://www.gnu.org/software/bash/manual/bash.html#Shell-Scripts",
    ),
    (
        "*.bash",
        "a script other scripts and tools run",
        "https://www.gnu.org/software/bash/manual/bash.html#Shell-Scripts",
    ),
    ("*.zsh", "a script other scripts and tools run", "https://zsh.sourceforge.io/Doc/Release/Files.html"),
    (".envrc", "direnv runs it on cd", "https://direnv.net/"),
    # Nix
    ("flake.nix", "nix build, nix develop", "https://nix.dev/manual/nix/stable/command-ref/new-cli/nix3-flake"),
    ("default.nix", "nix-build, nix-shell", "https://nix.dev/manual/nix/stable/command-ref/nix-shell"),
    ("shell.nix", "nix-shell", "https://nix.dev/manual/nix/stable/command-ref/nix-shell"),
    ("devenv.nix", "devenv", "https://devenv.sh/basics/"),
    # JavaScript and TypeScript
    ("package.json", "npm/yarn/pnpm scripts and lifecycle scripts", "https://docs.npmjs.com/cli/v11/using-npm/scripts"),
    *(
        (
            pattern,
            "a JavaScript tool's config (jest, vitest, vite, playwright, webpack, rollup, babel, eslint, prettier …)",
            "https://jestjs.io/docs/configuration",
        )
        for pattern in _JS_CONFIG
    ),
    ("*.conf.js", "karma and others", "https://karma-runner.github.io/latest/config/configuration-file.html"),
    (".babelrc*", "babel", "https://babeljs.io/docs/config-files"),
    (".eslintrc*", "eslint", "https://eslint.org/docs/latest/use/configure/configuration-files"),
    (".prettierrc*", "prettier", "https://prettier.io/docs/configuration"),
    ("jest.config.json", "jest", "https://jestjs.io/docs/configuration"),
    ("gruntfile.js", "grunt", "https://gruntjs.com/getting-started"),
    ("gulpfile.*", "gulp", "https://gulpjs.com/docs/en/getting-started/javascript-and-gulpfiles"),
    ("deno.json", "deno task", "https://docs.deno.com/runtime/reference/cli/task/"),
    ("deno.jsonc", "deno task", "https://docs.deno.com/runtime/reference/cli/task/"),
    (".npmrc", "npm's config (scripts' shell, hooks)", "https://docs.npmjs.com/cli/v11/configuring-npm/npmrc"),
    (".yarnrc*", "yarn's config (yarnPath runs a file)", "https://yarnpkg.com/configuration/yarnrc"),
    # JVM
    ("build.gradle", "Gradle", "https://docs.gradle.org/current/userguide/build_file_basics.html"),
    ("build.gradle.kts", "Gradle", "https://docs.gradle.org/current/userguide/build_file_basics.html"),
    ("settings.gradle", "Gradle", "https://docs.gradle.org/current/userguide/settings_file_basics.html"),
    ("settings.gradle.kts", "Gradle", "https://docs.gradle.org/current/userguide/settings_file_basics.html"),
    ("*.init.gradle", "Gradle init scripts", "https://docs.gradle.org/current/userguide/init_scripts.html"),
    ("*.init.gradle.kts", "Gradle init scripts", "https://docs.gradle.org/current/userguide/init_scripts.html"),
    ("gradle.properties", "Gradle", "https://docs.gradle.org/current/userguide/build_environment.html"),
    ("gradlew", "the Gradle wrapper", "https://docs.gradle.org/current/userguide/gradle_wrapper.html"),
    ("gradlew.bat", "the Gradle wrapper", "https://docs.gradle.org/current/userguide/gradle_wrapper.html"),
    (
        "gradle",
        "the Gradle wrapper's folder (the distribution it downloads and runs)",
        "https://docs.gradle.org/current/userguide/gradle_wrapper.html",
    ),
    (
        "buildsrc",
        "Gradle compiles and runs buildSrc",
        "https://docs.gradle.org/current/userguide/sharing_build_logic_between_subprojects.html",
    ),
    ("pom.xml", "Maven", "https://maven.apache.org/pom.html"),
    (
        ".mvn",
        "Maven (extensions.xml, maven.config, jvm.config, the wrapper)",
        "https://maven.apache.org/configure.html",
    ),
    ("mvnw", "the Maven wrapper", "https://maven.apache.org/wrapper/"),
    ("build.xml", "Ant", "https://ant.apache.org/manual/using.html"),
    ("*.sbt", "sbt", "https://www.scala-sbt.org/1.x/docs/Basic-Def.html"),
    # .NET
    ("*.csproj", "MSBuild, dotnet build", "https://learn.microsoft.com/en-us/visualstudio/msbuild/msbuild"),
    ("*.fsproj", "MSBuild, dotnet build", "https://learn.microsoft.com/en-us/visualstudio/msbuild/msbuild"),
    ("*.vbproj", "MSBuild, dotnet build", "https://learn.microsoft.com/en-us/visualstudio/msbuild/msbuild"),
    ("*.proj", "MSBuild", "https://learn.microsoft.com/en-us/visualstudio/msbuild/msbuild"),
    (
        "*.props",
        "MSBuild imports (Directory.Build.props …)",
        "https://learn.microsoft.com/en-us/visualstudio/msbuild/customize-by-directory",
    ),
    (
        "*.targets",
        "MSBuild imports (Directory.Build.targets …)",
        "https://learn.microsoft.com/en-us/visualstudio/msbuild/customize-by-directory",
    ),
    ("nuget.config", "NuGet's package sources", "https://learn.microsoft.com/en-us/nuget/reference/nuget-config-file"),
    # PHP, Ruby, Rust, Go and others
    ("composer.json", "Composer scripts", "https://getcomposer.org/doc/articles/scripts.md"),
    ("phpunit.xml*", "PHPUnit (its bootstrap file)", "https://docs.phpunit.de/en/11.5/configuration.html"),
    ("rakefile", "rake", "https://ruby.github.io/rake/doc/rakefile_rdoc.html"),
    ("*.rake", "rake", "https://ruby.github.io/rake/doc/rakefile_rdoc.html"),
    ("gemfile", "bundler evaluates it", "https://bundler.io/man/gemfile.5.html"),
    ("*.gemspec", "bundler, gem build", "https://guides.rubygems.org/specification-reference/"),
    ("cargo.toml", "cargo", "https://doc.rust-lang.org/cargo/reference/manifest.html"),
    ("build.rs", "cargo runs the build script", "https://doc.rust-lang.org/cargo/reference/build-scripts.html"),
    (
        ".cargo",
        "cargo's config (config.toml: runners, aliases)",
        "https://doc.rust-lang.org/cargo/reference/config.html",
    ),
    ("magefile.go", "mage", "https://magefile.org/magefiles/"),
    ("magefiles", "mage", "https://magefile.org/magefiles/"),
    ("build.zig", "zig build", "https://ziglang.org/learn/build-system/"),
    ("package.swift", "swift build runs the manifest", "https://www.swift.org/documentation/package-manager/"),
    ("mix.exs", "mix", "https://hexdocs.pm/mix/Mix.html"),
    ("makefile.pl", "perl Makefile.PL", "https://metacpan.org/pod/ExtUtils::MakeMaker"),
    ("build.pl", "perl Build.PL", "https://metacpan.org/pod/Module::Build"),
    # what an agent client reads as instructions
    ("agents.md", "coding agents read it as instructions", "https://agents.md/"),
    ("claude.md", "Claude Code reads it as instructions", "https://docs.anthropic.com/en/docs/claude-code/memory"),
    (
        "gemini.md",
        "Gemini CLI reads it as instructions",
        "https://google-gemini.github.io/gemini-cli/docs/cli/gemini-md.html",
    ),
    (
        "copilot-instructions.md",
        "Copilot reads it as instructions",
        "https://docs.github.com/en/copilot/customizing-copilot/adding-repository-custom-instructions-for-github-copilot",
    ),
)
#: The project's configs whose text names other files a tool then runs (a script's path, a plugin's module).
NAMING_CONFIGS = (
    "package.json",
    "Makefile",
    "makefile",
    "GNUmakefile",
    "justfile",
    "Justfile",
    "Taskfile.yml",
    "Taskfile.yaml",
    "taskfile.yml",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "pytest.ini",
    "mypy.ini",
    "hatch.toml",
    "noxfile.py",
    "setup.py",
    "conftest.py",
    "mkdocs.yml",
    "mkdocs.yaml",
    "docs/conf.py",
    "doc/conf.py",
    "docs/source/conf.py",
    ".pre-commit-config.yaml",
    ".flake8",
    ".pylintrc",
    "pylintrc",
    ".coveragerc",
    "composer.json",
    "Pipfile",
    "deno.json",
    "deno.jsonc",
    "Rakefile",
    "meson.build",
    "CMakeLists.txt",
    "build.gradle",
    "build.gradle.kts",
    "pom.xml",
    "Cargo.toml",
    "flake.nix",
    "default.nix",
    "shell.nix",
)
#: How much of one config, and of all of them, is read.
_CONFIG_BYTES, _ALL_BYTES = 256 * 1024, 2 * 1024 * 1024
_PYTHON = (".py", ".pyw")


def run_unnamed(parts: list[str]) -> tuple[str, str, str] | None:
    """The entry of :data:`RUN_UNNAMED` a part of the path matches (a folder like ``gradle/`` counts for what is inside)."""
    for part in parts:
        lowered = part.lower()
        for entry in RUN_UNNAMED:
            if fnmatch.fnmatchcase(lowered, entry[0]) or fnmatch.fnmatchcase(part, entry[0]):
                return entry
    return None


def named_by_config(relative: str, root: str) -> str | None:
    """The config in ``root`` whose text names the file at ``relative`` (its path, its name, or, for Python, its module)."""
    needles = {relative, os.path.basename(relative)}
    stem, suffix = os.path.splitext(relative)
    if suffix in _PYTHON:
        module = stem.removesuffix("/__init__").replace("/", ".")
        needles |= {module, module.rsplit(".", 1)[-1]}
    pattern = re.compile(
        r"(?<![\w.-])(?:" + "|".join(map(re.escape, sorted(needles - {""}, key=len, reverse=True))) + r")(?![\w-])"
    )
    budget = _ALL_BYTES
    for name in NAMING_CONFIGS:
        path = os.path.join(root, name)
        if os.path.normpath(path) == os.path.normpath(os.path.join(root, relative)):
            continue  # the file itself
        text = read_text(path, min(_CONFIG_BYTES, budget))
        if text is None:
            continue
        budget -= len(text)
        if pattern.search(text):
            return name
        if budget <= 0:
            return "the project's configs (too many to read)"
    return None
