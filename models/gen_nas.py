#!/usr/bin/python3
"""Write NAS-designed networks (DARTS, NASNet-A, AmoebaNet-A/-D, PNASNet-5) as native sramplan graphs.

Usage:
    /usr/bin/python3 models/gen_nas.py [--out models/nas] [--only NAME ...]

Standard library only. Each network is built from its published cell genotype (the normal and
reduction cells: which operation is applied to which hidden state, which states are concatenated)
and the published CIFAR-10 and ImageNet-mobile macro settings, and written in the native JSON graph
format of docs/graph-format.md (layout NHWC, dtype int8, batch 1, weights as shapes only):

  darts-cifar10.graph.json        darts-imagenet.graph.json
  nasnet-a-cifar10.graph.json     nasnet-a-imagenet.graph.json
  amoebanet-a-cifar10.graph.json  amoebanet-a-imagenet.graph.json
  amoebanet-d-cifar10.graph.json  amoebanet-d-imagenet.graph.json
  pnasnet-5-cifar10.graph.json    pnasnet-5-imagenet.graph.json
  README.md                       sources, genotypes, settings, op/tensor counts

Conventions of this file (one notation for all families): a cell has two input states, 0 = h[k-2]
(the output of the cell two back) and 1 = h[k-1] (the previous cell); block j of the cell writes
state j + 2 = opA(state a) + opB(state b). The TensorFlow genotypes of NASNet/AmoebaNet/PNASNet
list their hidden states the other way round (their index 0 is h[k-1]); they are written here with
0 and 1 swapped. In a reduction cell the ops reading states 0 and 1 have stride 2.

Inference graph (what an exported, BN-folded int8 model looks like):
  * BatchNorm is folded into the preceding convolution (int32 bias).
  * "ReLU-Conv-BN" preprocessing of the two cell inputs: Relu, then a 1x1 conv to C channels; when
    h[k-2] has twice the resolution of h[k-1] (the cell after a reduction) a factorized reduction
    instead: two 1x1 stride-2 convs with C//2 and C-C//2 outputs, the second on the input shifted by
    one pixel (Slice [1:, 1:] and one pixel of end padding), concatenated.
  * sep_kxk: Relu -> depthwise kxk (stride s) -> pointwise 1x1 with a fused ReLU -> depthwise kxk ->
    pointwise 1x1 (the separable convolution applied twice, as in all four papers).
  * dil_kxk (DARTS): Relu -> depthwise kxk dilation 2 (stride s) -> pointwise 1x1.
  * conv 1x1 / 3x3 (AmoebaNet-D): Relu -> conv; conv 1x7_7x1: Relu -> 1x7 conv (stride s along W)
    with a fused ReLU -> 7x1 conv (stride s along H).
  * max/avg pool kxk (stride s; average pools do not count padding); identity needs no op (the
    adding op reads the state) unless it has stride 2, where it is Relu -> 1x1 conv stride 2.
  * The Relu of a state is computed once per cell and shared by the ops of that cell that read it
    (what a graph optimiser's common-subexpression pass does with the per-op ReLUs of the
    PyTorch/TensorFlow definitions).
  * Cell output = Concat (channels) of the genotype's output states.
  * Head: (TensorFlow families: Relu) -> GlobalAveragePool -> Reshape -> Gemm (10 or 1000 classes).
  * Padding: DARTS uses PyTorch's symmetric k//2 (times the dilation); the TensorFlow families use
    TensorFlow 'SAME' (possibly asymmetric, extra pixel at the end), the ImageNet stem conv 'VALID'.
  * Auxiliary heads, drop-path and dropout are training-only and not part of the graphs.

Quantisation parameters are deterministic per-tensor placeholders of a plausible int8 model (ReLU
outputs scale 0.02 / zero point -128, linear outputs scale near 0.05, weights symmetric 0.02, int32
biases with scale = input scale * weight scale), as in gen_mcunet_blocks.py.
"""

import argparse
import os
import sys

import graph_builder
from graph_builder import numel, write_json

# ----------------------------------------------------------------------------------------------
# Genotypes (this file's notation, see the module docstring): block = ((opA, a), (opB, b)).
# ----------------------------------------------------------------------------------------------

GENOTYPES = {
    # DARTS (second order), "DARTS_V2": Liu, Simonyan, Yang, "DARTS: Differentiable Architecture
    # Search", ICLR 2019, Figures 4 and 5 (normal and reduction cell learned on CIFAR-10).
    "darts": {
        "normal": [(("sep_3x3", 0), ("sep_3x3", 1)),
                   (("sep_3x3", 0), ("sep_3x3", 1)),
                   (("sep_3x3", 1), ("identity", 0)),
                   (("identity", 0), ("dil_3x3", 2))],
        "normal_concat": [2, 3, 4, 5],
        "reduce": [(("max_3x3", 0), ("max_3x3", 1)),
                   (("identity", 2), ("max_3x3", 1)),
                   (("max_3x3", 0), ("identity", 2)),
                   (("identity", 2), ("max_3x3", 1))],
        "reduce_concat": [2, 3, 4, 5],
    },
    # NASNet-A: Zoph, Vasudevan, Shlens, Le, "Learning Transferable Architectures for Scalable Image
    # Recognition", CVPR 2018, Figure 4. Output = h[k-2] (after its 1x1 conv) and the 5 blocks.
    "nasnet-a": {
        "normal": [(("sep_5x5", 1), ("sep_3x3", 0)),
                   (("sep_5x5", 0), ("sep_3x3", 0)),
                   (("avg_3x3", 1), ("identity", 0)),
                   (("avg_3x3", 0), ("avg_3x3", 0)),
                   (("sep_3x3", 1), ("identity", 1))],
        "normal_concat": [0, 2, 3, 4, 5, 6],
        "reduce": [(("sep_5x5", 1), ("sep_7x7", 0)),
                   (("max_3x3", 1), ("sep_7x7", 0)),
                   (("avg_3x3", 1), ("sep_5x5", 0)),
                   (("identity", 3), ("avg_3x3", 2)),
                   (("sep_3x3", 2), ("max_3x3", 1))],
        "reduce_concat": [3, 4, 5, 6],
    },
    # AmoebaNet-A: Real, Aggarwal, Huang, Le, "Regularized Evolution for Image Classifier
    # Architecture Search", AAAI 2019, Figure 4 (cells) and the authors' TPU model specification.
    "amoebanet-a": {
        "normal": [(("avg_3x3", 1), ("max_3x3", 1)),
                   (("sep_3x3", 0), ("identity", 0)),
                   (("identity", 1), ("avg_3x3", 0)),
                   (("sep_3x3", 1), ("sep_5x5", 2)),
                   (("avg_3x3", 5), ("sep_3x3", 1))],
        "normal_concat": [0, 3, 4, 6],
        "reduce": [(("sep_3x3", 0), ("avg_3x3", 1)),
                   (("max_3x3", 1), ("sep_7x7", 2)),
                   (("max_3x3", 0), ("max_3x3", 1)),
                   (("sep_3x3", 4), ("conv_1x7_7x1", 1)),
                   (("avg_3x3", 0), ("sep_7x7", 1))],
        "reduce_concat": [2, 3, 4, 5, 6],
    },
    # AmoebaNet-D: the cell of the same search ("evol_net_x" in the authors' TPU model
    # specification; the network COSMA evaluates). Plain 1x1/3x3/1x7-7x1 convs and pools.
    "amoebanet-d": {
        "normal": [(("conv_1x1", 0), ("max_3x3", 0)),
                   (("identity", 0), ("conv_1x7_7x1", 1)),
                   (("conv_1x1", 1), ("conv_1x7_7x1", 1)),
                   (("max_3x3", 2), ("identity", 2)),
                   (("avg_3x3", 0), ("conv_1x1", 5))],
        "normal_concat": [1, 3, 4, 6],
        "reduce": [(("max_2x2", 1), ("max_3x3", 1)),
                   (("identity", 2), ("conv_3x3", 0)),
                   (("conv_1x7_7x1", 2), ("max_3x3", 2)),
                   (("identity", 3), ("max_2x2", 0)),
                   (("avg_3x3", 2), ("conv_1x1", 3))],
        "reduce_concat": [4, 5, 6],
    },
    # PNASNet-5: Liu, Zoph, Neumann, Shlens, Hua, Li, Fei-Fei, Yuille, Huang, Murphy, "Progressive
    # Neural Architecture Search", ECCV 2018, Figure 1 (left): one cell, used with stride 2 as the
    # reduction cell; all five blocks are concatenated.
    "pnasnet-5": {
        "normal": [(("sep_5x5", 0), ("max_3x3", 0)),
                   (("sep_7x7", 1), ("max_3x3", 1)),
                   (("sep_5x5", 1), ("sep_3x3", 1)),
                   (("sep_3x3", 4), ("max_3x3", 1)),
                   (("sep_3x3", 0), ("identity", 1))],
        "normal_concat": [2, 3, 4, 5, 6],
    },
}
GENOTYPES["pnasnet-5"]["reduce"] = GENOTYPES["pnasnet-5"]["normal"]
GENOTYPES["pnasnet-5"]["reduce_concat"] = GENOTYPES["pnasnet-5"]["normal_concat"]

# Macro settings. n = normal cells per stage (3 stages, a reduction cell between stages, channels
# doubling at each reduction), f = channels C of the first stage's cells.
SETTINGS = {
    # DARTS Sec. 3.2/3.3: CIFAR-10 20 cells (reductions at 1/3 and 2/3), 36 initial channels, stem
    # 3x3 conv to 3C; ImageNet mobile 14 cells, 48 channels, 224x224, two stride-2 3x3 conv stems.
    "darts": {"paper": "Liu, Simonyan, Yang, DARTS: Differentiable Architecture Search, ICLR 2019",
              "style": "torch",
              "cifar10": dict(n=6, f=36, stem="cifar", stem_mult=3),
              "imagenet": dict(n=4, f=48, stem="darts-imagenet", res=224)},
    # NASNet-A (6 @ 768) on CIFAR-10: N=6, penultimate 768 = 24 * 32 -> F = 32; stem 3x3 conv, 3F.
    # NASNet-A (4 @ 1056) mobile: N=4, F=44, 224x224; stem 3x3 stride-2 conv (32 filters, VALID)
    # and two reduction cells with F/4 and F/2.
    "nasnet-a": {"paper": "Zoph, Vasudevan, Shlens, Le, Learning Transferable Architectures for "
                          "Scalable Image Recognition, CVPR 2018",
                 "style": "tf",
                 "cifar10": dict(n=6, f=32, stem="cifar", stem_mult=3),
                 "imagenet": dict(n=4, f=44, stem="tf-imagenet", res=224, stem_filters=32)},
    # AmoebaNet-A: CIFAR-10 N=6, F=36; mobile ImageNet N=4, F=50, 224x224 (paper, Tables 2 and 3).
    "amoebanet-a": {"paper": "Real, Aggarwal, Huang, Le, Regularized Evolution for Image Classifier "
                             "Architecture Search, AAAI 2019",
                    "style": "tf",
                    "cifar10": dict(n=6, f=36, stem="cifar", stem_mult=3),
                    "imagenet": dict(n=4, f=50, stem="tf-imagenet", res=224, stem_filters=32)},
    # AmoebaNet-D: no mobile/CIFAR size is published for this cell; the sizes of AmoebaNet-A are used.
    "amoebanet-d": {"paper": "Real, Aggarwal, Huang, Le, Regularized Evolution for Image Classifier "
                             "Architecture Search, AAAI 2019 (cell 'evol_net_x' / AmoebaNet-D of the "
                             "authors' TPU implementation)",
                    "style": "tf",
                    "cifar10": dict(n=6, f=36, stem="cifar", stem_mult=3),
                    "imagenet": dict(n=4, f=50, stem="tf-imagenet", res=224, stem_filters=32)},
    # PNASNet-5: CIFAR-10 N=3, F=48; mobile ImageNet N=3, F=54, 224x224 (paper, Tables 1 and 2).
    # N=3 counts 3 * 3 = 9 cells of which the 4th and 7th have stride 2 (stages of 3, 2, 2 stride-1
    # cells): this reproduces the published 5.1M parameters / 588M mult-adds of the mobile model and
    # 3.2M parameters on CIFAR-10; 3 stride-1 cells in every stage would give 6.4M / 696M.
    "pnasnet-5": {"paper": "Liu et al., Progressive Neural Architecture Search, ECCV 2018",
                  "style": "tf",
                  "cifar10": dict(n=3, f=48, stem="cifar", stem_mult=3, stages=[3, 2, 2]),
                  "imagenet": dict(n=3, f=54, stem="tf-imagenet", res=224, stem_filters=32,
                                   stages=[3, 2, 2])},
}

# Measured with sramplan (Release build, g++ 12; 2 shared cores, so times are indicative):
# `SRAMPLAN_HIER_BENCH=1 tests/hierarchical_test --gtest_filter=*Bench*` and
# `sramplan plan FILE --target exynos-npu --strategy all` (arena bytes, model order). Live peaks in
# bytes under sramplan's liveness model (views alias, graph outputs stay); "bound" is a lower bound no
# order can beat. file: (model-order peak, beam peak, hierarchical peak, bound, hierarchical s,
# MinPeakSchedule method, linear / tflm / inplace arena on exynos-npu).
MEASURED = {
    "amoebanet-a-cifar10.graph.json": (442368, 423936, 423936, 294912, 0.9, "hierarchical", 629760, 516096, 479232),
    "amoebanet-a-imagenet.graph.json": (1084248, 1084248, 1084248, 788544, 0.9, "hierarchical", 1500880, 1084256,
                                        1084256),
    "amoebanet-d-cifar10.graph.json": (442368, 405504, 405504, 294912, 0.3, "hierarchical", 666624, 516096, 479232),
    "amoebanet-d-imagenet.graph.json": (1084248, 1011660, 1011660, 788544, 0.4, "exact-dp (proved)", 1086924,
                                        1084256, 1084256),
    "darts-cifar10.graph.json": (442368, 405504, 405504, 294912, 0.8, "hierarchical", 663552, 516096, 442368),
    "darts-imagenet.graph.json": (451584, 451584, 451584, 451584, 0.3, "hierarchical (proved)", 639744, 526848,
                                  451584),
    "nasnet-a-cifar10.graph.json": (589824, 524288, 507904, 393216, 5.6, "hierarchical", 884736, 655360, 622592),
    "nasnet-a-imagenet.graph.json": (1059606, 1059606, 1059606, 788544, 1.3, "hierarchical", 1146048, 1059616,
                                     1059616),
    "pnasnet-5-cifar10.graph.json": (737280, 638976, 638976, 491520, 3.1, "hierarchical", 1035264, 835584, 786432),
    "pnasnet-5-imagenet.graph.json": (1108890, 1108890, 1108890, 788544, 0.9, "hierarchical", 1259421, 1190432,
                                      1231200),
}

RELU_Q = {"scale": [0.02], "zero_point": [-128]}
W_SCALE = 0.02


# ----------------------------------------------------------------------------------------------
# Graph builder (NHWC, int8)
# ----------------------------------------------------------------------------------------------

def out_size(h, k, s, pb, pe, d=1):
    return (h + pb + pe - d * (k - 1) - 1) // s + 1


class Graph(graph_builder.GraphBuilder):
    def __init__(self, name, style):
        super().__init__(name)
        self.style = style  # "torch" (symmetric k//2 pads) or "tf" (SAME)
        self.counts = {}

    def _uniq(self, name):
        n = self.counts.get(name, 0)
        self.counts[name] = n + 1
        return name if n == 0 else "%s_%d" % (name, n)

    def quant(self, name):
        return dict(self.by_name[name]["quant"])

    def pads(self, h, w, kh, kw, sh, sw, d=1, valid=False):
        """[top, left, bottom, right] for the graph's padding style."""
        if valid:
            return [0, 0, 0, 0]
        if self.style == "torch":
            ph, pw = d * (kh - 1) // 2, d * (kw - 1) // 2
            return [ph, pw, ph, pw]
        res = []
        for size, k, s in ((h, kh, sh), (w, kw, sw)):
            o = -(-size // s)
            total = max((o - 1) * s + d * (k - 1) + 1 - size, 0)
            res.append((total // 2, total - total // 2))
        return [res[0][0], res[1][0], res[0][1], res[1][1]]

    def conv(self, name, x, c_out, k, stride=1, group=1, dil=1, activation="none", pads=None,
             valid=False):
        """k and stride are ints or (h, w) pairs. Returns the output tensor."""
        name = self._uniq(name)
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (stride, stride) if isinstance(stride, int) else stride
        n, h, w, c_in = self.shape(x)
        if group == -1:
            group = c_in
        assert c_in % group == 0 and c_out % group == 0, (name, c_in, c_out, group)
        p = pads if pads is not None else self.pads(h, w, kh, kw, sh, sw, dil, valid)
        ho, wo = out_size(h, kh, sh, p[0], p[2], dil), out_size(w, kw, sw, p[1], p[3], dil)
        wt = self.tensor(name + "_w", [c_out, kh, kw, c_in // group], "constant",
                         {"scale": [W_SCALE], "zero_point": [0]})
        bt = self.tensor(name + "_b", [c_out], "constant",
                         {"scale": [round(self.quant(x)["scale"][0] * W_SCALE, 10)],
                          "zero_point": [0]}, dtype="int32")
        q = dict(RELU_Q) if activation == "relu" else self.linear_quant()
        y = self.tensor(name + "_out", [n, ho, wo, c_out], "activation", q)
        self.op(name, "Conv", [x, wt, bt], [y],
                {"kernel_shape": [kh, kw], "strides": [sh, sw], "pads": p, "dilations": [dil, dil],
                 "group": group, "activation": activation})
        return y

    def relu(self, name, x):
        name = self._uniq(name)
        y = self.tensor(name + "_out", self.shape(x), "activation", dict(RELU_Q))
        self.op(name, "Relu", [x], [y])
        return y

    def pool(self, name, kind, x, k, stride):
        name = self._uniq(name)
        n, h, w, c = self.shape(x)
        p = self.pads(h, w, k, k, stride, stride)
        ho, wo = out_size(h, k, stride, p[0], p[2]), out_size(w, k, stride, p[1], p[3])
        y = self.tensor(name + "_out", [n, ho, wo, c], "activation", self.quant(x))
        attrs = {"kernel_shape": [k, k], "strides": [stride, stride], "pads": p}
        if kind == "avg":
            attrs["count_include_pad"] = 0
        self.op(name, "MaxPool" if kind == "max" else "AveragePool", [x], [y], attrs)
        return y

    def add(self, name, a, b):
        name = self._uniq(name)
        assert self.shape(a) == self.shape(b), (name, self.shape(a), self.shape(b))
        y = self.tensor(name + "_out", self.shape(a), "activation", self.linear_quant())
        self.op(name, "Add", [a, b], [y])
        return y

    def concat(self, name, xs):
        name = self._uniq(name)
        shp = list(self.shape(xs[0]))
        for x in xs[1:]:
            assert self.shape(x)[:3] == shp[:3], (name, [self.shape(v) for v in xs])
        shp[3] = sum(self.shape(x)[3] for x in xs)
        y = self.tensor(name + "_out", shp, "activation", self.linear_quant())
        self.op(name, "Concat", xs, [y], {"axis": 3})
        return y

    def slice_hw(self, name, x):
        """x[:, 1:, 1:, :]."""
        name = self._uniq(name)
        n, h, w, c = self.shape(x)
        y = self.tensor(name + "_out", [n, h - 1, w - 1, c], "activation", self.quant(x))
        self.op(name, "Slice", [x], [y], {"starts": [1, 1], "ends": [h, w], "axes": [1, 2]})
        return y

# ----------------------------------------------------------------------------------------------
# Cells
# ----------------------------------------------------------------------------------------------

def factorized_reduce(g, p, x_relu, c):
    """Two 1x1 stride-2 convs (C//2 and C - C//2 outputs), the second on x[1:, 1:] padded by one
    pixel at the end, concatenated: halves H and W of x (even or odd)."""
    a = g.conv(p + "_fr1", x_relu, c // 2, 1, 2, pads=[0, 0, 0, 0])
    shifted = g.slice_hw(p + "_fr_shift", x_relu)
    b = g.conv(p + "_fr2", shifted, c - c // 2, 1, 2, pads=[0, 0, 1, 1])
    assert g.shape(a) == g.shape(b)[:3] + [c // 2], (g.shape(a), g.shape(b))
    return g.concat(p + "_fr", [a, b])


def apply_op(g, p, kind, x, xr, c, stride):
    """One cell operation on state x (xr() returns its shared Relu). Returns the output tensor."""
    if kind == "identity":
        if stride == 1:
            return x
        return g.conv(p + "_id1x1", xr(), c, 1, stride)
    if kind.startswith("max_") or kind.startswith("avg_"):
        k = int(kind[4])
        return g.pool(p + "_" + kind[:3] + "pool", kind[:3], x, k, stride)
    if kind.startswith("sep_"):
        k = int(kind[4])
        y = g.conv(p + "_sep_dw1", xr(), c, k, stride, group=-1)
        y = g.conv(p + "_sep_pw1", y, c, 1, 1, activation="relu")
        y = g.conv(p + "_sep_dw2", y, c, k, 1, group=-1)
        return g.conv(p + "_sep_pw2", y, c, 1, 1)
    if kind.startswith("dil_"):
        k = int(kind[4])
        y = g.conv(p + "_dil_dw", xr(), c, k, stride, group=-1, dil=2)
        return g.conv(p + "_dil_pw", y, c, 1, 1)
    if kind == "conv_1x1":
        return g.conv(p + "_conv1x1", xr(), c, 1, stride)
    if kind == "conv_3x3":
        return g.conv(p + "_conv3x3", xr(), c, 3, stride)
    if kind == "conv_1x7_7x1":
        y = g.conv(p + "_conv1x7", xr(), c, (1, 7), (1, stride), activation="relu")
        return g.conv(p + "_conv7x1", y, c, (7, 1), (stride, 1))
    raise ValueError(kind)


def cell(g, p, s0_raw, s1_raw, geno, reduction, c):
    """One cell on raw inputs h[k-2], h[k-1]; returns its output (Concat of the output states)."""
    blocks = geno["reduce" if reduction else "normal"]
    concat = geno["reduce_concat" if reduction else "normal_concat"]
    raw_relu = {}

    def relu_raw(x):
        if x not in raw_relu:
            raw_relu[x] = g.relu(p + "_in_relu", x)
        return raw_relu[x]

    h0, h1 = g.shape(s0_raw)[1], g.shape(s1_raw)[1]
    if h0 != h1:
        assert h0 == 2 * h1 or h0 == 2 * h1 - 1, (p, h0, h1)
        s0 = factorized_reduce(g, p + "_pre0", relu_raw(s0_raw), c)
    else:
        s0 = g.conv(p + "_pre0", relu_raw(s0_raw), c, 1, 1)
    s1 = g.conv(p + "_pre1", relu_raw(s1_raw), c, 1, 1)
    states = [s0, s1]
    relus = {}

    def state_relu(i):
        def get():
            if i not in relus:
                relus[i] = g.relu("%s_s%d_relu" % (p, i), states[i])
            return relus[i]
        return get

    for j, ((op_a, a), (op_b, b)) in enumerate(blocks):
        outs = []
        for side, (kind, idx) in (("a", (op_a, a)), ("b", (op_b, b))):
            stride = 2 if reduction and idx < 2 else 1
            outs.append(apply_op(g, "%s_b%d%s" % (p, j, side), kind, states[idx], state_relu(idx), c,
                                 stride))
        states.append(g.add("%s_b%d_add" % (p, j), outs[0], outs[1]))
    # In a reduction cell an output state that is an input state would have the wrong size.
    assert all(i >= 2 for i in concat) or not reduction
    return g.concat(p + "_out", [states[i] for i in concat])


# ----------------------------------------------------------------------------------------------
# Networks
# ----------------------------------------------------------------------------------------------

def build(family, dataset):
    st = SETTINGS[family]
    cfg = st[dataset]
    geno = GENOTYPES[family]
    g = Graph("%s-%s" % (family, dataset), st["style"])
    res = 32 if dataset == "cifar10" else cfg["res"]
    classes = 10 if dataset == "cifar10" else 1000
    x = g.tensor("input", [1, res, res, 3], "input", {"scale": [round(1.0 / 128.0, 8)], "zero_point": [0]})
    n, f = cfg["n"], cfg["f"]
    layout = []  # (reduction, channels)
    if cfg["stem"] == "cifar":
        stem = g.conv("stem", x, cfg["stem_mult"] * f, 3, 1)
        hist = [stem, stem]
    elif cfg["stem"] == "darts-imagenet":
        y = g.conv("stem0_conv1", x, f // 2, 3, 2, activation="relu")
        stem0 = g.conv("stem0_conv2", y, f, 3, 2)
        stem1 = g.conv("stem1_conv", g.relu("stem1_relu", stem0), f, 3, 2)
        hist = [stem0, stem1]
    else:  # tf-imagenet: 3x3 stride-2 VALID conv, then two reduction cells with F/4 and F/2
        conv0 = g.conv("stem_conv0", x, cfg["stem_filters"], 3, 2, valid=True)
        hist = [conv0, conv0]
        layout += [(True, int(f * 0.25), "stem_cell0"), (True, int(f * 0.5), "stem_cell1")]
    c = f
    k = 0
    per_stage = cfg.get("stages", [n, n, n])
    for stage in range(3):
        if stage > 0:
            c *= 2
            layout.append((True, c, None))
        for _ in range(per_stage[stage]):
            layout.append((False, c, None))
    for reduction, cc, nm in layout:
        name = nm or "cell%d" % k
        if nm is None:
            k += 1
        out = cell(g, name, hist[-2], hist[-1], geno, reduction, cc)
        hist.append(out)
    last = hist[-1]
    if st["style"] == "tf":
        last = g.relu("head_relu", last)
    nb, h, w, ch = g.shape(last)
    pooled = g.tensor("pool_out", [nb, 1, 1, ch], "activation", g.linear_quant())
    g.op("pool", "GlobalAveragePool", [last], [pooled])
    flat = g.tensor("reshape_out", [nb, ch], "activation", g.quant(pooled))
    g.op("reshape", "Reshape", [pooled], [flat], {"shape": [nb, ch]})
    wt = g.tensor("classifier_w", [classes, ch], "constant", {"scale": [0.01], "zero_point": [0]})
    bt = g.tensor("classifier_b", [classes], "constant",
                  {"scale": [round(g.quant(flat)["scale"][0] * 0.01, 10)], "zero_point": [0]}, dtype="int32")
    logits = g.tensor("logits", [nb, classes], "output", {"scale": [0.1], "zero_point": [-20]})
    g.op("classifier", "Gemm", [flat, wt, bt], [logits],
         {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 1, "activation": "none"})
    cells = [(nm or "cell", "reduction" if r else "normal", cc) for r, cc, nm in layout]
    return g, cells, res, classes


def describe_block(blk):
    return "+".join("%s(%s)" % (kind, {0: "h[k-2]", 1: "h[k-1]"}.get(i, "s%d" % i)) for kind, i in blk)


def stats(g):
    acts = [t for t in g.tensors if t["kind"] != "constant"]
    params = sum(numel(t["shape"]) for t in g.tensors if t["kind"] == "constant")
    macs = 0
    for o in g.ops:
        if o["type"] == "Conv":
            w = g.shape(o["inputs"][1])
            macs += numel(g.shape(o["outputs"][0])) * numel(w[1:])
        elif o["type"] == "Gemm":
            macs += numel(g.shape(o["inputs"][1]))
    return dict(ops=len(g.ops), tensors=len(g.tensors), activations=len(acts),
                largest=max(numel(t["shape"]) for t in acts), total_act=sum(numel(t["shape"]) for t in acts),
                params=params, macs=macs)


def write_readme(out, rows):
    L = []
    L.append("# NAS networks as native sramplan graphs\n")
    L.append("Generated by `models/gen_nas.py` (standard library only; regenerate with "
             "`/usr/bin/python3 models/gen_nas.py`). Int8, NHWC, batch 1; constants are shapes only "
             "(sramplan generates weight values when it executes a graph); quantisation parameters are "
             "deterministic per-tensor placeholders, not those of trained models. These are the four NAS "
             "families COSMA evaluates (PNASNet-5, AmoebaNet-D, NASNet-A, DARTS), plus AmoebaNet-A, each in "
             "its CIFAR-10 setting (32x32) and its ImageNet mobile setting (224x224).\n")
    L.append("## Graphs\n")
    L.append("| file | cells (normal+reduction) | stride-1 cells per stage | C (first stage) | ops | tensors | activation tensors "
             "| largest activation (B) | sum of activations (B) | params | MACs | file size (B) |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["stats"]
        L.append("| `%s` | %d (%d+%d) | %s | %d | %d | %d | %d | %d | %d | %.2fM | %.0fM | %d |" % (
            r["file"], len(r["cells"]), sum(1 for c in r["cells"] if c[1] == "normal"),
            sum(1 for c in r["cells"] if c[1] == "reduction"), r["stages"], r["f"], s["ops"], s["tensors"],
            s["activations"], s["largest"], s["total_act"], s["params"] / 1e6, s["macs"] / 1e6, r["size"]))
    L.append("")
    L.append("Params/MACs count conv and classifier weights (biases excluded) and are a sanity check "
             "against the papers (DARTS CIFAR-10 3.3M, NASNet-A 6@768 3.3M, AmoebaNet-A N=6 F=36 3.2M, "
             "PNASNet-5 CIFAR 3.2M; mobile models 5-6M params, ~550-600M mult-adds). They can differ a "
             "little: auxiliary heads are left out, and the papers' conventions for the stem and the "
             "ImageNet head vary.\n")
    L.append("## Memory (measured)\n")
    L.append("Live-peak bytes of the model order and of the min-peak orders (beam search, hierarchical mode, "
             "and what `MinPeakSchedule` returns: exact DP when it finishes, else the hierarchical mode), a lower "
             "bound no order can beat, and the arenas of `sramplan plan FILE --target exynos-npu --strategy "
             "all` (1 MiB on-chip; model order). Regenerate the numbers with `SRAMPLAN_HIER_BENCH=1 "
             "tests/hierarchical_test --gtest_filter=*Bench*` in a build directory; times are from a shared "
             "2-core machine.\n")
    L.append("| file | model-order peak | beam | hierarchical | lower bound | hierarchical s | MinPeakSchedule "
             "| arena linear / tflm / inplace |")
    L.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        mm = MEASURED.get(r["file"])
        if mm:
            L.append("| `%s` | %d | %d | %d | %d | %.1f | %s | %d / %d / %d |" % ((r["file"],) + mm))
    L.append("")
    L.append("On the CIFAR-10 graphs the min-peak order saves 4-14% of the live peak (NASNet-A 589,824 -> "
             "507,904 B). On the ImageNet graphs of NASNet-A, AmoebaNet and PNASNet the peak sits in the "
             "stem: the 111x111 stem output and its ReLU must both stay live while the first stem cell "
             "preprocesses them (every cell applies its own ReLU to its inputs, as the PyTorch/TensorFlow "
             "definitions do), so no order does much better than the model order (AmoebaNet-D: -7%, "
             "proved optimal by the exact DP). DARTS' ImageNet model order is proved optimal by the lower "
             "bound. The CIFAR-10 graphs plan and execute (`sramplan verify FILE --target exynos-npu "
             "--strategy linear --dtype float32`: outputs bit-identical, 12-20 s each; also with "
             "`--schedule minpeak`, and in int8, for DARTS).\n")
    L.append("## Sources and genotypes\n")
    L.append("Notation: a cell reads h[k-2] (output of the cell two back) and h[k-1] (previous cell), "
             "each first mapped to C channels (ReLU-1x1 conv, or a factorized reduction when h[k-2] has "
             "twice the resolution); block j writes state s(j+2) = opA(x) + opB(y); the cell output is the "
             "channel Concat of the listed states. In a reduction cell, ops on h[k-2]/h[k-1] have stride 2.\n")
    for fam in GENOTYPES:
        geno = GENOTYPES[fam]
        L.append("### %s\n" % fam)
        L.append("Source: %s.\n" % SETTINGS[fam]["paper"])
        for kind in ("normal", "reduce"):
            if fam == "pnasnet-5" and kind == "reduce":
                L.append("- reduction cell: the same cell with stride 2 on h[k-2]/h[k-1] (identity "
                         "with stride 2 = ReLU-1x1 conv stride 2)")
                continue
            blocks = "; ".join("s%d = %s" % (j + 2, describe_block(b)) for j, b in enumerate(geno[kind]))
            outs = ", ".join({0: "h[k-2]", 1: "h[k-1]"}.get(i, "s%d" % i) for i in geno[kind + "_concat"])
            L.append("- %s cell: %s; output Concat(%s)" % ("normal" if kind == "normal" else "reduction",
                                                         blocks, outs))
        for ds in ("cifar10", "imagenet"):
            cfg = SETTINGS[fam][ds]
            if cfg["stem"] == "cifar":
                stem = "3x3 conv to %dC = %d channels" % (cfg["stem_mult"], cfg["stem_mult"] * cfg["f"])
            elif cfg["stem"] == "darts-imagenet":
                stem = ("3x3 stride-2 conv to C/2 + ReLU + 3x3 stride-2 conv to C (stem0), ReLU + 3x3 "
                        "stride-2 conv (stem1)")
            else:
                stem = ("3x3 stride-2 VALID conv to %d channels, then two reduction cells with C/4 and C/2"
                        % cfg["stem_filters"])
            L.append("- %s: %s, N=%d normal cells per stage, C=%d, stem: %s" % (
                "CIFAR-10 (32x32)" if ds == "cifar10" else "ImageNet mobile (%dx%d)" % (cfg["res"], cfg["res"]),
                ds, cfg["n"], cfg["f"], stem))
        L.append("")
    L.append("## Modelling choices\n")
    doc = __doc__.split("Inference graph")[1].split("Quantisation parameters")[0]
    L.append("Inference graph" + doc.rstrip() + "\n")
    L.append("Other notes:\n")
    L.append("- TensorFlow's NASNet/AmoebaNet/PNASNet definitions number the cell inputs the other way "
             "round (their state 0 is h[k-1]); the genotypes above are written in DARTS' order.")
    L.append("- AmoebaNet-D has no published mobile or CIFAR size; the graphs use AmoebaNet-A's "
             "(N=6, F=36 and N=4, F=50). The authors' TPU default is 12 cells with F=256 at larger "
             "resolution.")
    L.append("- PNASNet-5: N=3 is read as 3N = 9 cells of which the 4th and the 7th have stride 2 "
             "(3, 2 and 2 stride-1 cells per stage, as the TensorFlow reference counts them); this gives "
             "the published 5.1M parameters / 588M mult-adds (mobile) and 3.2M parameters (CIFAR-10). "
             "Three stride-1 cells in every stage would give 6.4M / 696M.")
    L.append("- AmoebaNet-A: with N=6, F=36 (CIFAR-10) and N=4, F=50 (mobile) and stride-1 cells in every "
             "stage, the graphs have 3.5M parameters / 547M MACs and 5.7M / 645M, about 10-15% more than "
             "the published 3.2M and 5.1M / 555M; the genotype and macro structure are as published, the "
             "difference was not resolved.")
    L.append("- NASNet's, AmoebaNet's and PNASNet's 'identity' with stride 2 (PNASNet's reduction cell) is a "
             "ReLU-1x1 conv-BN with stride 2, as in the TensorFlow reference; DARTS uses a factorized "
             "reduction for it (never needed by DARTS V2's genotype).")
    L.append("")
    L.append("## Regenerate and check\n")
    L.append("```\n/usr/bin/python3 models/gen_nas.py\nsramplan inspect models/nas/darts-cifar10.graph.json\n"
             "sramplan plan models/nas/darts-cifar10.graph.json --target exynos-npu --strategy all\n```\n")
    with open(os.path.join(out, "README.md"), "w") as fh:
        fh.write("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "nas"))
    ap.add_argument("--only", nargs="*", help="families to write (default: all)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for fam in GENOTYPES:
        if a.only and fam not in a.only:
            continue
        for ds in ("cifar10", "imagenet"):
            g, cells, res, classes = build(fam, ds)
            cfg = SETTINGS[fam][ds]
            fname = "%s-%s.graph.json" % (fam, ds)
            path = os.path.join(a.out, fname)
            notes = ["%s, %s setting: input %dx%d, %d classes, N=%d, C=%d; %d cells: %s." % (
                fam, ds, res, res, classes, cfg["n"], cfg["f"], len(cells),
                ", ".join("%s %s C=%d" % (nm, kind, cc) for nm, kind, cc in cells)),
                "Generated by models/gen_nas.py from the published cell genotype; see models/nas/README.md.",
                "Quantisation parameters are deterministic placeholders, not those of a trained model."]
            write_json(path, g.to_json({"source": SETTINGS[fam]["paper"], "notes": notes}))
            s = stats(g)
            size = os.path.getsize(path)
            stages = "/".join(map(str, cfg.get("stages", [cfg["n"]] * 3)))
            rows.append(dict(file=fname, cells=cells, n=cfg["n"], stages=stages, f=cfg["f"], stats=s,
                             size=size))
            print("%-34s ops %5d tensors %5d largest act %8d B params %.2fM MACs %.0fM file %d B" % (
                fname, s["ops"], s["tensors"], s["largest"], s["params"] / 1e6, s["macs"] / 1e6, size))
    if not a.only:
        write_readme(a.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
