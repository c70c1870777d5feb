"""retrograd.cuda and retrograd.backends: a PyTorch script's device checks run and pick the CPU."""

import pytest

import retrograd as torch


def test_device_selection_idiom_picks_the_cpu():
    use_cuda = torch.cuda.is_available()
    use_mps = torch.backends.mps.is_available()
    device = torch.device("cuda" if use_cuda else "mps" if use_mps else "cpu")
    assert device == torch.device("cpu") and torch.cuda.device_count() == 0
    torch.cuda.manual_seed(1)
    torch.cuda.manual_seed_all(1)
    torch.backends.cudnn.deterministic = True
    assert torch.backends.cudnn.deterministic is True
    assert torch.ones(2).to(device).device == device


def test_cuda_device_is_refused_with_a_clear_error():
    # Tensor.cuda() fails as in PyTorch built without CUDA (issue 9)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.ones(2).cuda()
    with pytest.raises(RuntimeError, match="CPU only"):
        torch.ones(2).to("cuda")
    with pytest.raises(RuntimeError, match="CPU only"):
        torch.cuda.synchronize()
