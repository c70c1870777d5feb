"""tools/size_report.py: what counts as a code line, the layers, and --check's limits."""

import importlib.util
import pathlib
import subprocess
import sys
import textwrap

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "tools" / "size_report.py"


def _load():
    spec = importlib.util.spec_from_file_location("size_report", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


sr = _load()


def lines(src):
    return sr.code_lines(textwrap.dedent(src))


def test_blank_lines_and_comments_do_not_count():
    assert lines("""
        # a comment

        x = 1  # a trailing comment keeps its line

        # another
        y = 2
    """) == 2


def test_docstrings_of_modules_classes_and_functions_do_not_count():
    assert lines('''
        """Module docstring,
        on two lines."""

        class A:
            """Class docstring."""

            def f(self):
                """Function
                docstring."""
                return 1

        async def g():
            """Async docstring."""
            return 2
    ''') == 5


def test_strings_that_are_not_docstrings_count_every_line():
    assert lines('''
        def f():
            x = 1
            """Not the first statement: not a docstring."""
            return x

        MSG = """a
        multi-line
        string"""
        s = (
            "implicit "
            "concatenation"
        )
    ''') == 4 + 3 + 4


def test_a_statement_spanning_lines_counts_each_line_with_a_token():
    assert lines("""
        total = f(1,
                  # a comment inside the call

                  2)
    """) == 2


def test_a_bytes_or_number_first_statement_is_not_a_docstring():
    assert lines("""
        def f():
            b"bytes"
            1
    """) == 3


def test_layers():
    assert sr.layer_of("_tensor.py") == "tensor core"
    assert sr.layer_of("autograd/engine.py") == "autograd/"
    assert sr.layer_of("nn/functional/conv.py") == "nn/"
    assert sr.layer_of("utils/data.py") == "utils/"
    assert sr.layer_of("special.py") == "others"
    assert sr.layer_of("backends/__init__.py") == "others"


def _tree(tmp_path, sizes):
    for name, n in sizes.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('"""Doc."""\n' + "".join(f"x{i} = {i}\n" for i in range(n)))
    return tmp_path


def test_check_passes_within_the_limits(tmp_path, capsys):
    root = _tree(tmp_path, {"a.py": 800, "autograd/engine.py": 300, "autograd/graph.py": 300})
    assert sr.main(["--check", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "size: ok" in out
    assert "autograd core (engine + function + graph): 600 code lines" in out
    assert "package total" in out and "1400" in out


def test_check_fails_on_a_module_over_800_lines(tmp_path, capsys):
    root = _tree(tmp_path, {"ops/big.py": 801, "small.py": 3})
    assert sr.main(["--check", "--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "ops/big.py has 801 code lines > 800" in out
    # Without --check it only reports.
    assert sr.main(["--root", str(root)]) == 0


def test_check_fails_on_an_autograd_core_over_600_lines(tmp_path, capsys):
    root = _tree(tmp_path, {"autograd/engine.py": 300, "autograd/function.py": 200,
                            "autograd/graph.py": 101})
    assert sr.main(["--check", "--root", str(root)]) == 1
    assert "autograd core (engine + function + graph) has 601 code lines > 600" in (
        capsys.readouterr().out)


@pytest.mark.parametrize("cwd", ["repo", "elsewhere"])
def test_runs_as_a_script_from_any_directory(cwd, tmp_path):
    where = SCRIPT.parent.parent if cwd == "repo" else tmp_path
    res = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                         cwd=where, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "autograd/engine.py" in res.stdout and "package total" in res.stdout
