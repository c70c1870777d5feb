"""First contact: the license ships, the metadata has URLs, pytest's own flags work."""

import pathlib

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_license_file_and_urls():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = meta["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(project["urls"])


def test_pytest_addopts_leave_verbosity_to_the_user():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "-q" not in meta["tool"]["pytest"]["ini_options"]["addopts"].split()


def test_demo_outputs_are_ignored_by_git():
    assert "retrograd-demo/" in (ROOT / ".gitignore").read_text().splitlines()
