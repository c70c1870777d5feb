"""The checks that run inside an MPI job (``test_distributed.py`` launches them on 2 ranks).

Each check runs on every rank; a failure is recorded, not raised, so that every rank keeps
issuing the same collectives in the same order. At the end rank 0 gathers every rank's
failures, prints them (or ``ALL CHECKS PASSED n``) and the job exits non-zero on any failure.
"""

from __future__ import annotations

import os
import re
import sys
import traceback

import numpy as np

import retrograd as torch
import retrograd.distributed as dist
from retrograd import nn
from retrograd.nn.parallel import DistributedDataParallel as DDP

FAILURES: list = []
COUNT = [0]


def check(name):
    def wrap(fn):
        COUNT[0] += 1
        try:
            fn()
        except Exception:
            FAILURES.append(f"[rank {dist.get_rank()}] {name}: {traceback.format_exc()}")
        return fn
    return wrap


def eq(got, want, tol=0.0):
    got = got.numpy() if isinstance(got, torch.Tensor) else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if tol:
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


def main() -> int:
    # torchrun's variables come from the launcher before init_process_group runs.
    env_rank = os.environ.get("RANK")
    dist.init_process_group("mpi")
    r, n = dist.get_rank(), dist.get_world_size()
    assert n == 2, "run with 2 processes"
    assert env_rank == str(r) and os.environ["LOCAL_RANK"] == str(r)

    @check("all_reduce ops in place")
    def _():
        for op, want in ((dist.ReduceOp.SUM, [3.0, 5.0]), (dist.ReduceOp.PRODUCT, [2.0, 6.0]),
                         (dist.ReduceOp.MIN, [1.0, 2.0]), (dist.ReduceOp.MAX, [2.0, 3.0]),
                         (dist.ReduceOp.AVG, [1.5, 2.5])):
            t = torch.tensor([1.0 + r, 2.0 + r])
            mem = t.numpy()
            assert dist.all_reduce(t, op=op) is None
            eq(t, np.array(want, np.float32))
            assert np.shares_memory(mem, t.numpy())
        i = torch.tensor([[1, 2], [3, 4]]) * (r + 1)
        dist.all_reduce(i)
        eq(i, [[3, 6], [9, 12]])
        b = torch.tensor([r == 0, False, True])
        dist.all_reduce(b)                     # sum of booleans: or
        eq(b, [True, False, True])
        b = torch.tensor([r == 0, True])
        dist.all_reduce(b, op=dist.ReduceOp.MIN)
        eq(b, [False, True])
        s = torch.tensor(2.0 + r, dtype=torch.float64)   # 0-d
        dist.all_reduce(s, op=dist.ReduceOp.MAX)
        assert s.item() == 3.0
        bits = torch.tensor([0b1100 | r])
        dist.all_reduce(bits, op=dist.ReduceOp.BXOR)
        eq(bits, [1])
        h = torch.tensor([1.5, 2.0], dtype=torch.float16) * (r + 1)
        dist.all_reduce(h)
        eq(h.float(), [4.5, 6.0])
        bf = torch.tensor([1.0, 2.5], dtype=torch.bfloat16) * (r + 1)
        dist.all_reduce(bf)
        eq(bf.float(), [3.0, 7.5])

    @check("all_reduce on a non-contiguous view and a parameter")
    def _():
        base = torch.arange(6.0).reshape(2, 3) * (r + 1)
        v = base.t()
        dist.all_reduce(v)
        eq(base, np.arange(6.0).reshape(2, 3) * 3)
        p = nn.Parameter(torch.ones(3) * (r + 1))
        dist.all_reduce(p)
        eq(p.detach(), [3.0, 3.0, 3.0])
        assert p.requires_grad and p.grad_fn is None
        rows = torch.zeros(4, 2)
        dist.all_reduce(rows[1:3], op=dist.ReduceOp.SUM)   # contiguous slice: in place
        rows2 = torch.ones(4, 2) * (r + 1)
        dist.all_reduce(rows2[1:3])
        eq(rows2, [[r + 1] * 2, [3, 3], [3, 3], [r + 1] * 2])

    @check("async work handles")
    def _():
        t = torch.full((1000,), float(r + 1))
        w = dist.all_reduce(t, async_op=True)
        assert w is not None
        assert w.wait() is True and w.is_completed()
        eq(t, np.full(1000, 3.0, np.float32))
        t2 = torch.ones(2, 2) * (r + 1)
        w = dist.all_reduce(t2.t(), op=dist.ReduceOp.AVG, async_op=True)
        while not w.is_completed():
            pass
        eq(t2, np.full((2, 2), 1.5, np.float32))
        w = dist.broadcast(t, src=1, async_op=True)
        w.wait()
        assert w.result()[0] is t
        w = dist.barrier(async_op=True)
        w.wait()

    @check("broadcast and reduce")
    def _():
        t = torch.tensor([10.0 * r, 1.0])
        dist.broadcast(t, src=1)
        eq(t, [10.0, 1.0])
        t = torch.arange(3) + r
        dist.broadcast(t, group_src=0)
        eq(t, [0, 1, 2])
        t = torch.tensor([1.0 + r, 5.0])
        dist.reduce(t, dst=1, op=dist.ReduceOp.SUM)
        eq(t, [3.0, 10.0] if r == 1 else [1.0, 5.0])
        t = torch.tensor([4.0 + r])
        dist.reduce(t, dst=0, op=dist.ReduceOp.AVG)
        if r == 0:
            eq(t, [4.5])

    @check("all_gather and all_gather_into_tensor")
    def _():
        outs = [torch.zeros(2, 2) for _ in range(n)]
        dist.all_gather(outs, torch.full((2, 2), float(r)))
        eq(outs[0], np.zeros((2, 2))), eq(outs[1], np.ones((2, 2)))
        out = torch.zeros(4)
        dist.all_gather_into_tensor(out, torch.tensor([r, r + 10.0]))
        eq(out, [0, 10, 1, 11])
        stacked = torch.zeros(2, 2)
        dist.all_gather_into_tensor(stacked, torch.tensor([r, r + 10.0]))
        eq(stacked, [[0, 10], [1, 11]])

    @check("reduce_scatter and reduce_scatter_tensor")
    def _():
        out = torch.zeros(2)
        dist.reduce_scatter(out, [torch.tensor([1.0, 2.0]) * (r + 1),
                                  torch.tensor([3.0, 4.0]) * (r + 1)])
        eq(out, [3.0, 6.0] if r == 0 else [9.0, 12.0])
        out = torch.zeros(2)
        dist.reduce_scatter_tensor(out, torch.arange(4.0) + r, op=dist.ReduceOp.MAX)
        eq(out, [1.0, 2.0] if r == 0 else [3.0, 4.0])

    @check("gather and scatter")
    def _():
        lst = [torch.zeros(3) for _ in range(n)] if r == 1 else None
        dist.gather(torch.full((3,), float(r + 7)), lst, dst=1)
        if r == 1:
            eq(lst[0], [7.0] * 3), eq(lst[1], [8.0] * 3)
        out = torch.zeros(2)
        src = [torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])] if r == 0 else None
        dist.scatter(out, src, src=0)
        eq(out, [1.0, 2.0] if r == 0 else [3.0, 4.0])

    @check("all_to_all and all_to_all_single")
    def _():
        ins = [torch.tensor([10.0 * r + j] * (j + 1)) for j in range(n)]
        outs = [torch.zeros(r + 1) for _ in range(n)]
        dist.all_to_all(outs, ins)
        eq(outs[0], [float(r)] * (r + 1)), eq(outs[1], [10.0 + r] * (r + 1))
        inp = torch.arange(4.0) + 100 * r
        out = torch.zeros(4)
        dist.all_to_all_single(out, inp)
        eq(out, [0, 1, 100, 101] if r == 0 else [2, 3, 102, 103])
        # uneven: rank 0 sends 1 row to 0 and 2 to 1; rank 1 sends 2 rows to 0 and 1 to 1.
        inp = torch.arange(6.0).reshape(3, 2) + 100 * r
        splits_in = [1, 2] if r == 0 else [2, 1]
        splits_out = [1, 2] if r == 0 else [2, 1]
        out = torch.zeros(3, 2)
        dist.all_to_all_single(out, inp, splits_out, splits_in)
        want = [[0, 1], [100, 101], [102, 103]] if r == 0 else [[2, 3], [4, 5], [104, 105]]
        eq(out, want)

    @check("send, recv, isend, irecv")
    def _():
        if r == 0:
            dist.send(torch.tensor([1.0, 2.0, 3.0]), dst=1, tag=3)
            t = torch.zeros(2, dtype=torch.int64)
            assert dist.recv(t) == 1
            eq(t, [5, 6])
        else:
            t = torch.zeros(3)
            assert dist.recv(t, src=0, tag=3) == 0
            eq(t, [1.0, 2.0, 3.0])
            dist.send(torch.tensor([5, 6]), dst=0)
        out = torch.zeros(2)
        works = dist.batch_isend_irecv([
            dist.P2POp(dist.isend, torch.tensor([r + 0.5, r + 1.5]), 1 - r),
            dist.P2POp(dist.irecv, out, 1 - r)])
        for w in works:
            w.wait()
        eq(out, [1 - r + 0.5, 1 - r + 1.5])
        if r == 0:      # a message larger than the tensor: an error, not an overrun
            dist.send(torch.zeros(5), dst=1)
        else:
            small = torch.zeros(3)
            try:
                dist.recv(small, src=0)
                raise AssertionError("no error")
            except RuntimeError as e:
                assert "larger than" in str(e), e

    @check("object collectives")
    def _():
        objs = [None, None]
        dist.all_gather_object(objs, {"rank": r, "name": f"r{r}"})
        assert objs == [{"rank": 0, "name": "r0"}, {"rank": 1, "name": "r1"}]
        lst = [1, "two", (3,)] if r == 1 else [None, None, None]
        dist.broadcast_object_list(lst, src=1)
        assert lst == [1, "two", (3,)]
        got = [None, None] if r == 0 else None
        dist.gather_object(r * 10, got, dst=0)
        if r == 0:
            assert got == [0, 10]
        out = [None]
        dist.scatter_object_list(out, ["a", "b"] if r == 0 else None, src=0)
        assert out == ["a" if r == 0 else "b"]

    @check("groups")
    def _():
        g0 = dist.new_group([0])
        both = dist.new_group([1, 0])
        assert dist.get_process_group_ranks(both) == [0, 1]
        if r == 0:
            assert dist.get_rank(g0) == 0 and dist.get_world_size(g0) == 1
            t = torch.tensor([4.0])
            dist.all_reduce(t, group=g0)
            eq(t, [4.0])
        else:
            assert g0 == dist.GroupMember.NON_GROUP_MEMBER
            assert dist.get_rank(g0) == -1
        t = torch.tensor([1.0 + r])
        dist.all_reduce(t, group=both)
        eq(t, [3.0])
        assert dist.get_backend() == "mpi" and dist.is_initialized()
        assert dist.get_node_local_rank() == r and dist.is_backend_available("gloo")
        assert dist.group.WORLD is dist.GroupMember.WORLD and dist.group.WORLD is not None
        dist.barrier()

    @check("mismatched shapes raise on every rank")
    def _():
        t = torch.ones(3 if r == 0 else 5)
        try:
            dist.all_reduce(t)
            raise AssertionError("no error")
        except RuntimeError as e:
            assert "differ across ranks" in str(e) and "[3]" in str(e) and "[5]" in str(e), e
        eq(t, np.ones(3 if r == 0 else 5))        # untouched
        try:   # one rank's invalid arguments: that rank's error, a RuntimeError elsewhere
            dist.gather(torch.ones(2), None, dst=0)
            raise AssertionError("no error")
        except ValueError as e:
            assert r == 0 and "gather_list" in str(e)
        except RuntimeError as e:
            assert r == 1 and "invalid" in str(e), e
        t = torch.ones(2)     # the job carries on
        dist.all_reduce(t)
        eq(t, [2.0, 2.0])
        try:   # MPI matches no blocking collective with a nonblocking one: an error, no hang
            if r == 0:
                dist.all_reduce(t, async_op=True).wait()
            else:
                dist.all_reduce(t)
            raise AssertionError("no error")
        except RuntimeError as e:
            assert "differ across ranks" in str(e) and "async" in str(e), e
        eq(t, [2.0, 2.0])

    ddp_checks(r, n)
    hook_checks(r)

    from retrograd.utils.data.distributed import DistributedSampler

    @check("DistributedSampler takes rank and world size from the group")
    def _():
        s = DistributedSampler(list(range(7)), shuffle=False)
        assert (s.num_replicas, s.rank, len(s)) == (2, r, 4)
        assert list(s) == ([0, 2, 4, 6] if r == 0 else [1, 3, 5, 0])

    everyone = [None] * n
    dist.all_gather_object(everyone, FAILURES)
    failed = [f for fs in everyone for f in fs]
    if r == 0:
        for f in failed:
            print(f, file=sys.stderr)
        print(f"ALL CHECKS PASSED {COUNT[0]}" if not failed else f"FAILED {len(failed)}")
    dist.barrier()
    dist.destroy_process_group()
    if failed:
        return 1
    if len(sys.argv) > 2 and sys.argv[1] == "--docs":
        run_page(sys.argv[2])
    return 0


def run_page(path: str) -> None:
    """The python blocks of a docs page, in order, in one namespace (they join the job
    themselves, with init_process_group)."""
    text = open(path).read()
    ns = {"__name__": "docs_page"}
    for i, src in enumerate(re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)):
        exec(compile(src, f"{os.path.basename(path)}[block {i + 1}]", "exec"), ns)


def mlp(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 8), nn.Tanh(),
                         nn.Linear(8, 3)).double()


def ddp_checks(r: int, n: int) -> None:
    rng = np.random.default_rng(0)
    X = torch.from_numpy(rng.standard_normal((20, 16, 6)))          # 20 steps x 16 samples
    Y = torch.from_numpy(rng.integers(0, 3, (20, 16)))
    loss_fn = nn.CrossEntropyLoss()

    @check("DDP: construction broadcasts rank 0's parameters and buffers")
    def _():
        m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        torch.manual_seed(100 + r)
        for p in m.parameters():
            p.data.normal_()
        m[1].running_mean.fill_(float(r + 5))
        m[0].bias.requires_grad_(False)           # frozen parameters are broadcast too
        d = DDP(m)
        got = [None, None]
        dist.all_gather_object(got, [t.tolist() for t in m.state_dict().values()])
        assert got[0] == got[1]
        eq(m[1].running_mean, np.full(4, 5.0, np.float32))
        assert d.module is m
        assert list(d.state_dict()) == ["module." + k for k in m.state_dict()]
        # buffers are broadcast again before each training forward
        m[1].running_mean.fill_(float(r + 7))
        d(torch.ones(2, 3))
        dist.all_gather_object(got, m[1].running_mean.tolist())
        assert got[0] == got[1], got

    # Both ranks are on this machine: buckets in shared memory unless RETROGRAD_DDP_SHM=0 or
    # with bucket views; the other configurations reduce through MPI's allreduce.
    for cap, as_view, shm in ((None, False, True), (None, False, False), (0.0005, True, False)):
        @check(f"DDP: 20 steps equal single-process training on the global batch "
               f"(bucket_cap_mb={cap}, gradient_as_bucket_view={as_view}, shared memory {shm})")
        def _(cap=cap, as_view=as_view, shm=shm):
            ref = mlp(1)
            model = mlp(1 + r)                 # DDP's broadcast makes the replicas equal
            os.environ["RETROGRAD_DDP_SHM"] = "1" if shm else "0"
            try:
                ddp = DDP(model, bucket_cap_mb=cap, gradient_as_bucket_view=as_view)
            finally:
                del os.environ["RETROGRAD_DDP_SHM"]
            assert (ddp.reducer._shm is not None) == shm
            assert len(ddp.reducer.bucket_indices) == 1     # torch's first iteration
            opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
            ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
            half = X.shape[1] // n
            for step in range(20):
                xb, yb = X[step], Y[step]
                opt.zero_grad()
                loss = loss_fn(ddp(xb[r * half:(r + 1) * half]), yb[r * half:(r + 1) * half])
                loss.backward()
                opt.step()
                ref_opt.zero_grad()
                loss_fn(ref(xb), yb).backward()
                ref_opt.step()
            # re-bucketed after the first iteration, in the order gradients arrived
            assert ddp.reducer.bucket_indices == ([[5, 4, 3, 2, 1, 0]] if cap is None
                                                  else [[5, 4, 3, 2], [1, 0]])
            for p, q in zip(model.parameters(), ref.parameters()):
                eq(p.detach(), q.detach().numpy(), tol=1e-10)
                eq(p.grad, q.grad.numpy(), tol=1e-10)
            grads = [p.grad.numpy() for p in model.parameters()]
            flats = [ddp.reducer._buckets[b][0] for b in range(len(ddp.reducer.bucket_indices))]
            assert all(any(np.shares_memory(g, f) for f in flats) for g in grads) == as_view
            mine = [p.detach().numpy().tobytes() for p in model.parameters()]
            got = [None, None]
            dist.all_gather_object(got, mine)
            assert got[0] == got[1], "replicas differ bitwise"

    from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks as dh

    for counts, divide, hook in (((3, 5), True, None), ((3, 5), False, None),
                                 ((0, 3), True, None), ((2, 4), True, dh.allreduce_hook)):
        @check(f"DDP: join() with {counts} batches on the two ranks, "
               f"divide_by_initial_world_size={divide}, hook {hook}")
        def _(counts=counts, divide=divide, hook=hook):
            ref = mlp(4)
            model = mlp(4)
            ddp = DDP(model, find_unused_parameters=hook is not None)
            if hook is not None:
                ddp.register_comm_hook(None, hook)
            opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
            ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)

            def batch(rank, k):
                return X[k][rank * 8:(rank + 1) * 8], Y[k][rank * 8:(rank + 1) * 8]

            with ddp.join(divide_by_initial_world_size=divide):
                for k in range(counts[r]):
                    opt.zero_grad()
                    loss_fn(ddp(batch(r, k)[0]), batch(r, k)[1]).backward()
                    opt.step()
            # The reference follows the last rank to join: at each of its steps, the sum of
            # the gradients of the ranks still training, divided by 2 (or by their number).
            for k in range(max(counts)):
                active = [q for q in (0, 1) if k < counts[q]]
                ref_opt.zero_grad()
                for q in active:
                    xb, yb = batch(q, k)
                    loss_fn(ref(xb), yb).backward()
                for p in ref.parameters():
                    p.grad.div_(2 if divide else len(active))
                ref_opt.step()
            for p, q in zip(model.parameters(), ref.parameters()):
                eq(p.detach(), q.detach().numpy(), tol=1e-10)
            got = [None, None]
            dist.all_gather_object(got, [p.detach().numpy().tobytes()
                                         for p in model.parameters()])
            assert got[0] == got[1], "replicas differ after join"

    @check("DDP: join(throw_on_early_termination=True) raises torch's errors on every rank")
    def _():
        ddp = DDP(mlp(4))
        try:
            with ddp.join(throw_on_early_termination=True):
                for k in range(1 if r == 0 else 3):
                    loss_fn(ddp(X[k][:8]), Y[k][:8]).backward()
            raise AssertionError("no error")
        except RuntimeError as e:
            assert str(e) == ("Rank 0 exhausted all inputs." if r == 0 else
                              "Detected at least one rank that exhausted inputs. Throwing "
                              "across all ranks."), e

    @check("DDP: bfloat16 and float16 gradients, in shared memory and through MPI")
    def _():
        for dt in (torch.bfloat16, torch.float16):
            got = []
            for shm in ("1", "0"):
                os.environ["RETROGRAD_DDP_SHM"] = shm
                try:
                    torch.manual_seed(0)
                    m = nn.Linear(5, 3).to(dt)
                    d = DDP(m)
                finally:
                    del os.environ["RETROGRAD_DDP_SHM"]
                x = torch.from_numpy(np.arange(20.0).reshape(4, 5) * (r + 1)).to(dt)
                d(x).float().sum().backward()
                got.append([p.grad.float().numpy() for p in m.parameters()])
            eq(got[0][1], np.full(3, 4.0))                   # 4 rows, averaged
            eq(got[0][0], np.tile(np.arange(20.0).reshape(4, 5).sum(0) * 1.5, (3, 1)))
            for a, b in zip(*got):
                eq(a, b)

    @check("DDP: no_sync accumulation equals the full-batch step")
    def _():
        ref = mlp(3)
        ddp = DDP(mlp(3))
        xb, yb = X[0], Y[0]
        quarter = 4
        chunks = [(xb[i * quarter:(i + 1) * quarter], yb[i * quarter:(i + 1) * quarter])
                  for i in range(4)]
        mine = chunks[2 * r:2 * r + 2]
        with ddp.no_sync():
            loss_fn(ddp(mine[0][0]), mine[0][1]).backward()
        # inside no_sync the gradient stays local
        loss_fn(ddp(mine[1][0]), mine[1][1]).backward()
        for xc, yc in chunks:
            loss_fn(ref(xc), yc).backward()
        for p, q in zip(ddp.parameters(), ref.parameters()):
            eq(p.grad, q.grad.numpy() / n, tol=1e-12)

    @check("DDP: find_unused_parameters")
    def _():
        class Branchy(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(4, 2).double()
                self.b = nn.Linear(4, 2).double()       # used on rank 1 only
                self.c = nn.Linear(4, 2).double()       # used nowhere

            def forward(self, x, use_b):
                y = self.a(x)
                return y + self.b(x) if use_b else y

        torch.manual_seed(5)
        model = Branchy()
        ddp = DDP(model, find_unused_parameters=True)
        x = torch.ones(3, 4, dtype=torch.float64) * (r + 1)
        ddp(x, use_b=(r == 1)).sum().backward()
        assert model.c.weight.grad is None and model.c.bias.grad is None
        eq(model.b.bias.grad, [1.5, 1.5], tol=1e-15)       # rank 1's 3 ones, averaged
        eq(model.a.bias.grad, [3.0, 3.0], tol=1e-15)
        eq(model.b.weight.grad, np.full((2, 4), 3.0), tol=1e-15)   # 3 rows of 2s, / 2
        ddp(x, use_b=(r == 1)).sum().backward()        # a second iteration runs too
        eq(model.a.bias.grad, [6.0, 6.0], tol=1e-15)

    @check("DDP: an unused parameter without find_unused_parameters is torch's error")
    def _():
        class Half(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(2, 1)
                self.b = nn.Linear(2, 1)

            def forward(self, x):
                return self.a(x)

        ddp = DDP(Half())
        ddp(torch.ones(1, 2)).sum().backward()
        try:
            ddp(torch.ones(1, 2))
            raise AssertionError("no error")
        except RuntimeError as e:
            assert "Expected to have finished reduction in the prior iteration" in str(e)
            assert f"rank {r}: 2 3" in str(e), e

    @check("DDP: a module without trainable parameters is an error")
    def _():
        try:
            DDP(nn.ReLU())
            raise AssertionError("no error")
        except RuntimeError as e:
            assert "doesn't have any parameter that requires a gradient" in str(e)


def hook_checks(r: int) -> None:
    from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks as dh
    from retrograd.futures import Future

    @check("DDP re-buckets after the first iteration in gradient order (torch's buckets)")
    def _():
        torch.manual_seed(0)
        m = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
        ddp = DDP(m)
        x = torch.ones(2, 784) * (r + 1)
        sizes = []
        for _ in range(3):
            ddp(x).sum().backward()
            data = ddp._get_ddp_logging_data()
            sizes.append((data["bucket_sizes"], data.get("rebuilt_bucket_sizes"),
                          data.get("rebuilt_per_bucket_param_indices")))
        # torch 2.13 (gloo) logs exactly these for this model
        assert sizes == [("2678824", None, None)] + [("2678824", "1071144, 1607680",
                                                       "5 4 3 2, 1 0")] * 2, sizes
        assert data["num_buckets_reduced"] == 2 and data["has_rebuilt_buckets"] == 1
        # the first bucket's allreduce starts before backward has computed every gradient
        assert data["backward_compute_comm_overlap_time"] > 0
        assert 0 < data["avg_backward_comm_time"] and 0 < data["avg_backward_compute_time"]

    # Each hook's gradients, with this rank's local ones, for test_distributed.py to compare
    # with torch's arithmetic.
    results = {}
    rng = np.random.default_rng(10 + r)
    xs = torch.from_numpy(rng.standard_normal((3, 4, 5)).astype(np.float32))

    def noop(state, bucket):
        seen.append((bucket.index(), bucket.is_last(), [tuple(g.shape) for g in
                                                        bucket.gradients()],
                     [tuple(p.shape) for p in bucket.parameters()],
                     tuple(bucket.buffer().shape)))
        fut = Future()
        fut.set_result(bucket.buffer())
        return fut

    seen: list = []
    for name, hook in (("default", None), ("allreduce", dh.allreduce_hook),
                       ("fp16", dh.fp16_compress_hook), ("bf16", dh.bf16_compress_hook),
                       ("fp16_wrapper", dh.fp16_compress_wrapper(dh.allreduce_hook)),
                       ("noop", noop)):
        @check(f"DDP communication hook: {name}")
        def _(name=name, hook=hook):
            torch.manual_seed(1)
            m = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 3))
            ddp = DDP(m, bucket_cap_mb=0.00003)       # 2 buckets after the first step
            if hook is not None:
                ddp.register_comm_hook(None, hook)
            for i in range(3):
                with ddp.no_sync():
                    ddp(xs[i]).pow(2).sum().backward()
                local = [p.grad.clone() for p in m.parameters()]
                m.zero_grad()
                ddp(xs[i]).pow(2).sum().backward()
                results[f"{name}_{i}"] = [p.grad.numpy() for p in m.parameters()]
                results[f"local_{i}"] = [g.numpy() for g in local]
                m.zero_grad()

    @check("GradBucket: index, is_last, buffer, gradients and parameters")
    def _():
        # one bucket in registration order, then torch's re-bucketing in gradient order
        assert seen[0] == (0, True, [(4, 5), (4,), (3, 4), (3,)],
                           [(4, 5), (4,), (3, 4), (3,)], (39,)), seen[0]
        assert seen[1:3] == [(0, False, [(3,), (3, 4)], [(3,), (3, 4)], (15,)),
                             (1, True, [(4,), (4, 5)], [(4,), (4, 5)], (24,))], seen

    np.savez(f"hooks_rank{r}.npz", **{f"{k}__{j}": a for k, v in results.items()
                                      for j, a in enumerate(v)})

    @check("DDP communication hook: torch's registration errors")
    def _():
        ddp = DDP(nn.Linear(2, 2))
        for bad, kind, text in (
                (3, TypeError, "Communication hook must be callable."),
                (lambda state, bucket: 1, RuntimeError,
                 "must return a torch.futures.Future object, but got builtins.int")):
            d = DDP(nn.Linear(2, 2))
            try:
                d.register_comm_hook(None, bad)
                d(torch.ones(1, 2)).sum().backward()
                raise AssertionError("no error")
            except kind as e:
                assert text in str(e), e

        def annotated(state, bucket: int):
            return None
        try:
            ddp.register_comm_hook(None, annotated)
            raise AssertionError("no error")
        except ValueError as e:
            assert str(e) == "Communication hook: bucket annotation should be dist.GradBucket."
        ddp.register_comm_hook(None, dh.allreduce_hook)
        try:
            ddp.register_comm_hook(None, dh.allreduce_hook)
            raise AssertionError("no error")
        except RuntimeError as e:
            assert "can only be called once" in str(e)


if __name__ == "__main__":
    sys.exit(main())
