"""The programs in examples/ run and reach what they claim."""

import importlib.util
import pathlib

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_higher_order_newton_reaches_the_minimum(capsys):
    _load("higher_order").main()
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert "p = [1.0" in last or "p = [0.99999" in last


def test_custom_function_passes_gradcheck(capsys):
    _load("custom_function").main()
    out = capsys.readouterr().out
    assert "gradcheck: True" in out and "gradgradcheck: True" in out
    assert "SmoothAbsBackward" in out


def test_train_cnn_learns_the_bars():
    assert _load("train_cnn").main(["--epochs", "2"]) > 0.9
