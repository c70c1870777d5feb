"""``retrograd.autograd.graph``'s node API against torch's: AccumulateGrad's node hooks,
gradient edges (``get_gradient_edge``, ``autograd.grad`` of edges), ``increment_version``."""

import retrograd

from ..oracle import compare, compare_error


def test_accumulate_grad_node_hooks_edges_and_versions(torch):
    """The AccumulateGrad node's own hooks run (pre-hook first, grad_inputs empty) and may
    change the gradient; gradient edges stand for their tensors in autograd.grad;
    increment_version makes saved values stale, as in PyTorch."""
    def run(lib):
        log = []
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = x * 2
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: (log.append(("pre", len(go))), (go[0] * 10,))[1])
        acc.register_hook(lambda gi, go: log.append(("post", len(gi), len(go))))
        y.sum().backward(retain_graph=True)
        z = (y * y).sum()
        G = lib.autograd.graph
        edges = lib.autograd.grad(z, [G.get_gradient_edge(y), G.get_gradient_edge(x)])
        e = G.get_gradient_edge(y)
        return log, x.grad, edges, (e.node.name(), e.output_nr, e.ownership_token is None)

    ours, ref = run(retrograd), run(torch)
    assert ours[0] == ref[0] and ours[3] == ref[3]
    compare(lambda lib: run(lib)[1:3])

    def stale(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        lib.autograd.graph.increment_version(y)
        y.sum().backward()

    compare_error(stale)
    compare_error(lambda lib: lib.autograd.graph.get_gradient_edge(lib.ones(2)))
