"""The ``chromium`` fixture of the browser tests: Debian's chromium, installed with apt-get when it is
missing and the tests run as root; under CI (env CI set) a missing browser fails the test instead of
skipping it. Playwright drives this browser (``executable_path``); it never downloads one of its own."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def _find() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def chromium() -> str:
    found = _find()
    if found is None and hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=600, check=False)
        subprocess.run(
            ["apt-get", "install", "-y", "--no-install-recommends", "chromium"],
            env=env,
            capture_output=True,
            timeout=1200,
            check=False,
        )
        found = _find()
    if found is None:
        message = "chromium is not installed and could not be installed (apt-get install -y chromium as root)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found
