"""Autocast's float32 list on the CPU: the linear-algebra, 3-D pooling, unpooling, sampling and
padding ops give torch 2.13's output dtypes under ``autocast(bfloat16)``."""

import warnings

import pytest

import retrograd

torch_ = pytest.importorskip("torch")


def _cases(torch):
    torch.manual_seed(0)
    x = torch.randn(4, 4).bfloat16()
    spd = (x.float() @ x.float().T + 4 * torch.eye(4)).bfloat16()
    img3 = torch.randn(1, 2, 4, 4, 4).bfloat16()
    img2 = torch.randn(1, 2, 4, 4).bfloat16()
    img1 = torch.randn(1, 2, 6).bfloat16()
    F = torch.nn.functional
    low = torch.linalg.cholesky(spd.float()).bfloat16()
    return {
        "linalg.inv": lambda: torch.linalg.inv(spd),
        "linalg.solve": lambda: torch.linalg.solve(spd, x),
        "linalg.cholesky": lambda: torch.linalg.cholesky(spd),
        "cholesky": lambda: torch.cholesky(spd),
        "linalg.svdvals": lambda: torch.linalg.svdvals(x),
        "linalg.svd": lambda: torch.linalg.svd(x)[0],
        "svd": lambda: torch.svd(x)[0],
        "linalg.qr": lambda: torch.linalg.qr(x)[0],
        "qr": lambda: torch.qr(x)[0],
        "linalg.eigh": lambda: torch.linalg.eigh(spd)[0],
        "linalg.eigvalsh": lambda: torch.linalg.eigvalsh(spd),
        "linalg.cond": lambda: torch.linalg.cond(x),
        "linalg.lstsq": lambda: torch.linalg.lstsq(spd, x)[0],
        "linalg.inv_ex": lambda: torch.linalg.inv_ex(spd)[0],
        "linalg.cholesky_ex": lambda: torch.linalg.cholesky_ex(spd)[0],
        "linalg.tensorinv": lambda: torch.linalg.tensorinv(spd, ind=1),
        "linalg.tensorsolve": lambda: torch.linalg.tensorsolve(spd, x[0]),
        "linalg.matrix_rank": lambda: torch.linalg.matrix_rank(x),
        "linalg.householder_product": lambda: torch.linalg.householder_product(x, x[0]),
        "cholesky_inverse": lambda: torch.cholesky_inverse(low),
        "cholesky_solve": lambda: torch.cholesky_solve(x, low),
        "triangular_solve": lambda: torch.triangular_solve(x, spd)[0],
        "geqrf": lambda: torch.geqrf(x)[0],
        "avg_pool3d": lambda: F.avg_pool3d(img3, 2),
        "max_pool3d": lambda: F.max_pool3d(img3, 2),
        "adaptive_avg_pool3d": lambda: F.adaptive_avg_pool3d(img3, 2),
        "adaptive_max_pool3d": lambda: F.adaptive_max_pool3d(img3, 2),
        "reflection_pad1d": lambda: F.pad(img1, (1, 1), mode="reflect"),
        "reflection_pad2d": lambda: F.pad(img2, (1, 1, 1, 1), mode="reflect"),
        "reflection_pad3d": lambda: F.pad(img3, (1, 1, 1, 1, 1, 1), mode="reflect"),
        "replication_pad1d": lambda: F.pad(img1, (1, 1), mode="replicate"),
        "replication_pad2d": lambda: F.pad(img2, (1, 1, 1, 1), mode="replicate"),
        "replication_pad3d": lambda: F.pad(img3, (1, 1, 1, 1, 1, 1), mode="replicate"),
        "grid_sample": lambda: F.grid_sample(img2, torch.zeros(1, 2, 2, 2).bfloat16(),
                                             align_corners=False),
        "fractional_max_pool2d": lambda: F.fractional_max_pool2d(img2, 2, output_size=2),
        "fractional_max_pool3d": lambda: F.fractional_max_pool3d(img3, 2, output_size=2),
        "max_unpool2d": lambda: F.max_unpool2d(*F.max_pool2d(img2, 2, return_indices=True), 2),
        "max_unpool3d": lambda: F.max_unpool3d(*F.max_pool3d(img3, 2, return_indices=True), 2),
    }


def _dtypes(torch):
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autocast("cpu", dtype=torch.bfloat16):
            for name, fn in _cases(torch).items():
                out[name] = str(fn().dtype).split(".")[-1]
    return out


def test_float32_list_output_dtypes_match_torch():
    assert _dtypes(retrograd) == _dtypes(torch_)
