"""Every ``python`` code block of every page in docs/ runs, in order, one namespace per page.

A page opts out only with a ``<!-- docs-test: skip REASON -->`` line; a page whose code joins an
MPI job (``init_process_group``) is run by tests/distributed instead.
"""

import os
import pathlib
import re
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md"))
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def _blocks(path):
    return BLOCK.findall(path.read_text())


def test_the_topic_pages_exist_and_have_code():
    names = {p.stem for p in PAGES}
    assert {"graphs", "leaves", "custom-functions", "higher-order", "inplace", "memory",
            "accumulation", "from-scratch"} <= names
    for name in ("graphs", "from-scratch"):
        assert len(_blocks(ROOT / "docs" / f"{name}.md")) >= 3


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_runs(page, tmp_path, capsys):
    text = page.read_text()
    if "<!-- docs-test: skip" in text:
        pytest.skip(re.search(r"<!-- docs-test: skip(.*?)-->", text).group(1).strip())
    blocks = _blocks(page)
    if any("init_process_group" in b for b in blocks):
        pytest.skip("its code runs inside an MPI job (mpiexec -n 2): see tests/distributed")
    if not blocks:
        pytest.skip("no python blocks")
    ns = {"__name__": f"docs_{page.stem}"}
    cwd = os.getcwd()
    os.chdir(tmp_path)   # pages may write files (drawings)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, src in enumerate(blocks):
                code = compile(src, f"{page.name}[block {i + 1}]", "exec")
                exec(code, ns)  # noqa: S102 - the page's own code
    finally:
        os.chdir(cwd)
