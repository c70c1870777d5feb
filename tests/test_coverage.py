"""The coverage report is true: the checked-in list of torch's names matches retrograd.

``src/retrograd/_coverage.json`` lists torch 2.13's public names per namespace, marked by
``tools/coverage.py``. These tests read it (no torch needed) and fail when a name marked provided
is missing from retrograd, when retrograd has a name the list marks as not provided, or when the
generated docs page is stale. After adding or removing a name, run
``python tools/coverage.py --update``.
"""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("coverage_tool", ROOT / "tools" / "coverage.py")
cov = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cov)

DATA = cov.load()
HINT = "; run `python tools/coverage.py --update` to re-mark the names"


@pytest.mark.parametrize("ns", cov.NAMESPACES)
def test_provided_marks_match_retrograd(ns):
    names = DATA["namespaces"][ns]
    missing = [n for n, e in names.items() if e["provided"] and not cov.provides(ns, n)]
    unmarked = [n for n, e in names.items() if not e["provided"] and cov.provides(ns, n)]
    assert not missing, f"{ns}: marked provided but missing in retrograd: {missing}{HINT}"
    assert not unmarked, f"{ns}: present in retrograd but not marked provided: {unmarked}{HINT}"


def test_every_missing_in_scope_name_has_a_reason():
    for names in DATA["namespaces"].values():
        for name, e in names.items():
            if not e["provided"] and "out_of_scope" not in e:
                assert e.get("reason"), name


def test_rules_classify_as_documented():
    assert cov.scope_of("cudnn_convolution") == "backend-specific"
    assert cov.scope_of("quantize_per_tensor") == "quantized"
    assert cov.scope_of("sparse_coo_tensor") == "sparse"
    assert cov.scope_of("permute_copy") == "generated"
    assert cov.scope_of("index_copy") is None  # a real op, not a generated view copy
    assert cov.scope_of("SGD") is None and cov.scope_of("GELU") is None
    assert cov.unsupported_reason("fft") == "complex dtypes are not supported"
    assert cov.unsupported_reason("atleast_2d") == cov.DEFAULT_REASON


def test_docs_page_is_current():
    assert (ROOT / "docs" / "coverage.md").read_text() == cov.render_doc(DATA), (
        "docs/coverage.md is stale" + HINT)
    readme = (ROOT / "README.md").read_text()
    assert cov.totals_table(DATA) in readme, "README coverage totals are stale" + HINT


def _worded(ns):
    from retrograd import _missing

    names = DATA["namespaces"][ns]
    return [n for n, e in names.items() if not e["provided"] and _missing.reason(ns, n)]


@pytest.mark.parametrize("ns", ["torch.Tensor", *__import__("retrograd")._missing.MODULES])
def test_missing_names_say_retrograd_does_not_implement_them(ns):
    import retrograd

    if ns == "torch.Tensor":
        owner, shown = retrograd.tensor([1.0]), "Tensor"
    else:
        owner, shown = importlib.import_module("retrograd" + ns[len("torch"):]), ns
    names = _worded(ns)
    for name in names:
        with pytest.raises(AttributeError, match=f"^retrograd does not implement {shown}.{name} "):
            getattr(owner, name)
        assert not hasattr(owner, name)


def test_worded_errors_read_well():
    import retrograd

    with pytest.raises(AttributeError) as e:
        retrograd.fft  # noqa: B018
    assert str(e.value) == ("retrograd does not implement torch.fft "
                            "(complex dtypes are not supported)")
    with pytest.raises(AttributeError) as e:
        retrograd.tensor([1.0]).to_sparse  # noqa: B018
    assert str(e.value) == ("retrograd does not implement Tensor.to_sparse "
                            "(sparse tensors are not supported)")
    with pytest.raises(AttributeError, match="^module 'retrograd' has no attribute 'fooo'$"):
        retrograd.fooo  # noqa: B018
    with pytest.raises(AttributeError, match="^'Tensor' object has no attribute 'fooo'$"):
        retrograd.tensor([1.0]).fooo  # noqa: B018
    with pytest.raises(ImportError):
        from retrograd import jit  # noqa: F401
