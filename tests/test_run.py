"""``python -m retrograd.run`` and ``retrograd.as_torch()``: ``torch`` resolving to retrograd.

Every check runs a program in a fresh interpreter (the alias changes ``sys.modules``; the test
process has real torch imported as the oracle), as a user would run it.
"""

from __future__ import annotations

import os
import pathlib
import runpy
import subprocess
import sys
import textwrap

import pytest

from retrograd import run

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "examples" / "torch_programs"


def _run(args, cwd=None, env_extra=None):
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def _script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


IMPORTS = """\
    import sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.nn.init
    import torch.nn.utils
    import torch.optim
    import torch.optim.lr_scheduler
    import torch.autograd
    import torch.utils.data
    import torch.linalg, torch.special, torch.cuda, torch.backends, torch.accelerator
    import torch.backends.cudnn as cudnn
    from torch import nn as nn2, optim
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.dataloader import DataLoader as DL2
    from torch.utils.data.dataset import Dataset
    from torch.utils.data.sampler import RandomSampler
    import retrograd
    assert torch is retrograd and nn is retrograd.nn and nn2 is nn
    assert F is retrograd.nn.functional and optim is retrograd.optim
    assert torch.optim.lr_scheduler is retrograd.optim.lr_scheduler
    assert DataLoader is retrograd.utils.data.DataLoader is DL2
    assert sys.modules["torch.nn.functional"] is F
    assert retrograd.nn.__spec__.name == "retrograd.nn"  # the module keeps its own spec
    cudnn.deterministic = True
    assert not torch.accelerator.is_available()
    for name in ["torch.fft", "torch.nn.utils.weird", "torch._C"]:
        try:
            __import__(name)
        except ImportError as e:
            print("missing", name, type(e).__name__, e)
    try:
        from torch import fft
    except ImportError as e:
        print("from-import", type(e).__name__, e)
    print(__name__, sys.argv[1:], sys.path[0] == sys.argv[0].rpartition("/")[0])
    sys.exit(3)
"""


def test_run_script_resolves_torch_submodules_to_retrograd(tmp_path):
    path = _script(tmp_path, "prog.py", IMPORTS)
    r = _run(["-m", "retrograd.run", str(path), "a", "--b"])
    assert r.returncode == 3, r.stderr  # the program's sys.exit(3)
    lines = r.stdout.splitlines()
    assert lines[-1] == "__main__ ['a', '--b'] True"
    missing = [ln for ln in lines if ln.startswith("missing")]
    assert len(missing) == 3
    for ln in missing:
        name = ln.split()[1]
        assert "ModuleNotFoundError" in ln and f"{name} is not provided by retrograd" in ln
    assert "from-import ModuleNotFoundError No module named 'torch.fft': torch.fft is not " \
           "provided by retrograd" in r.stdout
    r = _run(["-m", "retrograd.run", str(path), "exit"])
    assert r.returncode == 3, r.stderr


def test_run_script_reports_an_uncaught_exception_as_python_does(tmp_path):
    path = _script(tmp_path, "boom.py", """\
        import sys

        def f():
            raise ValueError("boom")

        f()
    """)
    ours = _run(["-m", "retrograd.run", str(path)])
    direct = _run([str(path)])
    assert ours.returncode == direct.returncode == 1
    # The traceback is the program's own: no frame of the wrapper or of runpy.
    assert ours.stderr == direct.stderr
    assert ours.stderr.startswith(f'Traceback (most recent call last):\n  File "{path}", line 6')


def test_run_command_line_errors(tmp_path, capsys):
    assert run.main([str(tmp_path / "nope.py")]) == 2
    assert "can't open file" in capsys.readouterr().err
    assert run.main([]) == 2
    assert "usage: python -m retrograd.run" in capsys.readouterr().err
    assert run.main(["-m"]) == 2
    assert "Argument expected for the -m option" in capsys.readouterr().err


def test_run_module(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(textwrap.dedent("""\
        import sys
        import torch.nn.functional as F
        import retrograd
        print(__name__, __package__, F is retrograd.nn.functional, sys.argv[1:])
        sys.exit(int(sys.argv[1]))
    """))
    r = _run(["-m", "retrograd.run", "-m", "mypkg", "4"], cwd=tmp_path)
    assert r.returncode == 4, r.stderr
    assert r.stdout == "__main__ mypkg True ['4']\n"
    r = _run(["-m", "retrograd.run", "-m", "no_such_module_xyz"], cwd=tmp_path)
    assert r.returncode == 1 and "No module named no_such_module_xyz" in r.stderr


def test_as_torch_and_its_refusal(tmp_path):
    r = _run(["-c", textwrap.dedent("""\
        import retrograd
        assert retrograd.as_torch() is retrograd
        retrograd.as_torch()  # again: harmless
        import torch, torch.nn as nn
        print(torch is retrograd, nn.Linear is retrograd.nn.Linear)
    """)])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "True True\n"
    # Never installed implicitly: without as_torch, torch is whatever the environment has (a
    # stand-in here, which keeps real torch's slow import out of the test); and once that
    # torch is imported, as_torch refuses.
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("STAND_IN = True\n")
    r = _run(["-c", textwrap.dedent("""\
        import retrograd, torch
        print(torch is retrograd, torch.STAND_IN)
        retrograd.as_torch()
    """)], env_extra={"PYTHONPATH": str(tmp_path)})
    assert r.stdout == "False True\n", r.stderr
    assert r.returncode == 1
    assert "RuntimeError: retrograd.as_torch(): PyTorch is already imported" in r.stderr


def run_under_torch(torch, program, capsys) -> str:
    """What ``program`` prints when run directly with real torch (in this process, where torch
    is already imported as the oracle; its random state is put back afterwards)."""
    state = torch.get_rng_state()
    capsys.readouterr()
    try:
        runpy.run_path(str(program), run_name="__main__")
    finally:
        torch.set_rng_state(state)
    return capsys.readouterr().out


def test_done_means_program_runs_unchanged_and_prints_what_torch_prints(torch, capsys):
    program = PROGRAMS / "mlp_dataloader.py"
    ours = _run(["-m", "retrograd.run", str(program)])
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout.splitlines()[0].startswith("epoch 0: loss ")
    assert ours.stdout == run_under_torch(torch, program, capsys)


TUTORIALS = ["polynomial_fit", "custom_function", "lstm_tagger", "char_lm", "cnn"]


@pytest.fixture(scope="module")
def tutorial_outputs(tmp_path_factory):
    """What each tutorial program prints under ``python -m retrograd.run``: one interpreter
    runs them all (a driver runs each as ``__main__``), to keep the test's start-up cost low."""
    driver = tmp_path_factory.mktemp("driver") / "driver.py"
    driver.write_text(textwrap.dedent(f"""\
        import runpy
        for name in {TUTORIALS!r}:
            print("=== " + name, flush=True)
            runpy.run_path({str(PROGRAMS)!r} + "/" + name + ".py", run_name="__main__")
    """))
    r = _run(["-m", "retrograd.run", str(driver)])
    assert r.returncode == 0, r.stderr
    parts = r.stdout.split("=== ")[1:]
    return {p.split("\n", 1)[0]: p.split("\n", 1)[1] for p in parts}


@pytest.mark.parametrize("name", TUTORIALS)
def test_tutorial_programs_print_what_torch_prints(torch, capsys, tutorial_outputs, name):
    """Programs in the style of PyTorch's tutorials, unchanged: the same seed, the same printed
    numbers (retrograd draws PyTorch's random numbers; no weights are copied)."""
    assert tutorial_outputs[name] == run_under_torch(torch, PROGRAMS / f"{name}.py", capsys)
