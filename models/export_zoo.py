#!/usr/bin/python3
"""Export graph-only ONNX files of the model zoo used by the sramplan evaluation.

Usage:
    /usr/bin/python3 models/export_zoo.py [--out models/onnx] [--only NAME ...] [--static] [--list]

Every model is built with random initialisation (weights=None, no downloads), put in eval() mode and
exported with torch.onnx.export at opset 13. The exported model is then post-processed:

* initializer data is stripped: every initializer keeps name, data_type and dims but loses its
  payload (raw_data / float_data / int64_data / ...). Small integer initializers (int32/int64 with at
  most 64 elements: Reshape shapes, Slice starts/ends, Pad pads, ...) keep their data because an
  importer needs them to fold shapes. Data of Constant nodes is always kept. An importer recognises a
  stripped initializer as "has dims but no data" (data_location stays DEFAULT).
* the batch dimension of the graph inputs and outputs is symbolic ("N") where the model allows it
  (axis 0; axis 1 of the Transformer's (S, N, E) inputs). If the dynamic export fails or its inferred
  shapes are incomplete, the model is re-exported with the static example shapes (batch 1; the
  Transformer's example batch is 32) and this is printed. --static forces static shapes.
* shape arithmetic is folded (see fold_shapes): sub-computations on shapes whose value is statically
  known become Constant nodes; nodes computing only from weights (e.g. Slice/Transpose of a packed
  attention weight) become stripped initializers of their inferred shape; dead nodes are removed.
  Reshape/Expand/Resize/ConstantOfShape outputs whose target shape depends on the batch get value_info
  dims "N" or "N*k" (e.g. batch*heads in multi-head attention).
* onnx.shape_inference.infer_shapes (data_prop=True) is run and the inferred value_info is kept in the
  saved file; the script checks that every node output has a complete shape (ints, "N" or "N*k").
* the model doc_string says that this is a graph-only export with weights stripped.

Checks: onnx.checker.check_model runs on the full exported model (with weights) and on the stripped
model with its stripped initializers re-declared as graph inputs (the ONNX checker requires every
initializer to carry data, so the stripped file itself cannot pass check_model unmodified).

After exporting, OPS.md in the output directory lists, for every *.onnx file there, the node count,
initializer count, op types, and whether every value has a complete inferred shape.
"""

import argparse
import collections
import io
import os
import sys
import time
import warnings

import numpy as np
import onnx
import onnx.checker
import onnx.numpy_helper
import onnx.shape_inference
from onnx import TensorProto

import torch
import torchvision

OPSET = 13
DOC = "graph-only export by sramplan models/export_zoo.py; weights stripped"
SMALL_INT_MAX_ELEMS = 64

# Op types the C++ importer is known to handle (from the importer author); anything else is flagged
# as "unusual" in OPS.md.
KNOWN_OPS = set("""Conv Gemm MatMul BatchNormalization Relu Clip Sigmoid HardSigmoid HardSwish Tanh Erf
Softmax Add Sub Mul Div Pow MaxPool AveragePool GlobalAveragePool ReduceMean Concat Split Slice Gather
Transpose Pad Resize Upsample LayerNormalization Reshape Flatten Squeeze Unsqueeze Identity Dropout
Constant Shape ConstantOfShape""".split())


# ----------------------------------------------------------------------------------------------
# Model zoo
# ----------------------------------------------------------------------------------------------

class OutOnly(torch.nn.Module):
    """Wraps a torchvision segmentation model and returns only dict['out']."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def _tv(name, **kw):
    return getattr(torchvision.models, name)(weights=None, **kw)


def _seg(name):
    ctor = getattr(torchvision.models.segmentation, name)
    kw = dict(weights=None, weights_backbone=None)
    if name != "lraspp_mobilenet_v3_large":  # LRASPP has no aux classifier argument
        kw["aux_loss"] = False
    return OutOnly(ctor(**kw))


def _video(name):
    if not hasattr(torchvision.models.video, name):
        return None
    return getattr(torchvision.models.video, name)(weights=None)


IMG = (1, 3, 224, 224)
VID = (1, 3, 16, 224, 224)

# key -> (suite, builder, example input shapes, batch axis of every input/output)
ZOO = collections.OrderedDict([
    # COSMA
    ("resnet50", ("COSMA", lambda: _tv("resnet50"), [IMG], 0)),
    ("densenet121", ("COSMA", lambda: _tv("densenet121"), [IMG], 0)),
    ("resnext50_32x4d", ("COSMA", lambda: _tv("resnext50_32x4d"), [IMG], 0)),
    ("r2plus1d_18", ("COSMA", lambda: _video("r2plus1d_18"), [VID], 0)),
    ("s3d", ("COSMA", lambda: _video("s3d"), [VID], 0)),
    ("fcn_resnet50", ("COSMA", lambda: _seg("fcn_resnet50"), [IMG], 0)),
    ("lraspp_mobilenet_v3_large", ("COSMA", lambda: _seg("lraspp_mobilenet_v3_large"), [IMG], 0)),
    ("deeplabv3_resnet50", ("COSMA", lambda: _seg("deeplabv3_resnet50"), [IMG], 0)),
    ("transformer", ("COSMA", lambda: torch.nn.Transformer(d_model=512),
                     [(10, 32, 512), (20, 32, 512)], 1)),
    ("vit_b_16", ("COSMA", lambda: _tv("vit_b_16"), [IMG], 0)),
    # Optimus
    ("alexnet", ("Optimus", lambda: _tv("alexnet"), [IMG], 0)),
    ("vgg16", ("Optimus", lambda: _tv("vgg16"), [IMG], 0)),
    ("googlenet", ("Optimus", lambda: _tv("googlenet", aux_logits=False, init_weights=True), [IMG], 0)),
    ("squeezenet1_0", ("Optimus", lambda: _tv("squeezenet1_0"), [IMG], 0)),
    ("mobilenet_v2", ("Optimus", lambda: _tv("mobilenet_v2"), [IMG], 0)),
    ("resnet18", ("Optimus", lambda: _tv("resnet18"), [IMG], 0)),
    ("resnet152", ("Optimus", lambda: _tv("resnet152"), [IMG], 0)),
    # Samsung
    ("inception_v3", ("Samsung", lambda: _tv("inception_v3", aux_logits=False, init_weights=True),
                      [(1, 3, 299, 299)], 0)),
])

# Models that are not bundled (models/onnx): the "every method on every model" check runs them like
# the bundled ones. Exported only with --extra (or by name with --only), e.g.
#   /usr/bin/python3 models/export_zoo.py --extra --out /tmp/extra-onnx
EXTRA = collections.OrderedDict(
    (name, ("Extra", (lambda n=name: _tv(n)), [IMG], 0))
    for name in ("mobilenet_v3_small", "mobilenet_v3_large", "mnasnet0_5", "mnasnet1_0", "efficientnet_b0",
                 "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "regnet_x_400mf", "squeezenet1_1", "resnet34"))


# ----------------------------------------------------------------------------------------------
# Export and post-processing
# ----------------------------------------------------------------------------------------------

def _io_names(n_in):
    if n_in == 1:
        return ["input"], ["output"]
    if n_in == 2:
        return ["src", "tgt"], ["output"]
    return ["input%d" % i for i in range(n_in)], ["output"]


def torch_export(model, shapes, batch_axis, dynamic):
    torch.manual_seed(0)
    # Make every float parameter unique: default inits give bit-identical tensors (LayerNorm/BN
    # weights = 1, biases = 0) that the exporter deduplicates into one initializer plus Identity nodes.
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point():
                p.add_(torch.randn_like(p), alpha=1e-3)
        for name, b in model.named_buffers():  # BN running stats (running_var must stay > 0)
            if b.is_floating_point():
                b.add_(torch.rand_like(b), alpha=1e-3)
    args = tuple(torch.randn(*s) for s in shapes)
    in_names, out_names = _io_names(len(shapes))
    dyn = None
    if dynamic:
        dyn = {n: {batch_axis: "N"} for n in in_names + out_names}
    buf = io.BytesIO()
    # Autograd must stay enabled: with no_grad, nn.MultiheadAttention (ViT, Transformer) takes its
    # inference fast path (aten::_native_multi_head_attention), which has no ONNX export.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, buf, opset_version=OPSET, do_constant_folding=True,
                          input_names=in_names, output_names=out_names, dynamic_axes=dyn,
                          training=torch.onnx.TrainingMode.EVAL)
    return onnx.load_from_string(buf.getvalue())


_DATA_FIELDS = ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "uint64_data",
                "string_data")


def _numel(t):
    n = 1
    for d in t.dims:
        n *= d
    return n


def strip_initializers(model):
    """Clear the payload of every initializer except small int32/int64 ones. Returns (stripped, kept)."""
    stripped, kept = 0, 0
    for t in model.graph.initializer:
        if t.data_type in (TensorProto.INT64, TensorProto.INT32) and _numel(t) <= SMALL_INT_MAX_ELEMS:
            kept += 1
            continue
        for f in _DATA_FIELDS:
            t.ClearField(f)
        stripped += 1
    return stripped, kept


def is_stripped(t):
    return not any(t.HasField(f) if f == "raw_data" else len(getattr(t, f)) > 0 for f in _DATA_FIELDS)


def check_stripped(model):
    """onnx.checker on a copy where stripped initializers are declared as graph inputs instead."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = []
    for t in m.graph.initializer:
        if is_stripped(t):
            m.graph.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        else:
            keep.append(t)
    del m.graph.initializer[:]
    m.graph.initializer.extend(keep)
    onnx.checker.check_model(m)


# ----------------------------------------------------------------------------------------------
# Shape-arithmetic folding and symbolic-batch shape annotation
# ----------------------------------------------------------------------------------------------
#
# torch.onnx (1.13) leaves shape arithmetic in the graph (Shape -> Gather -> Div -> Mul -> Slice ends,
# Resize sizes, Reshape targets), even for static dims, and ONNX 1.12 shape inference cannot see through
# most of it (Div, Resize with computed sizes, Reshape with a symbolic-batch target). The pass below
# (a) evaluates every small integer/shape sub-computation whose value is statically known and replaces
#     the producing node by a Constant node with the same output name (the importer keeps Constant data);
# (b) tracks 1-D shape vectors whose elements are ints or multiples of the symbolic batch N ("N",
#     "N*8"), and annotates the outputs of Reshape / Expand / Resize / ConstantOfShape driven by such
#     vectors in value_info (dim_param "N" or "N*k"), so that ONNX inference propagates them;
# (c) drops nodes and initializers that are no longer used.
# Only the graph structure that computes shapes changes; no op on activation data is added or removed.

FOLD_MAX_ELEMS = 64
_NP_OF = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.INT64: np.int64,
          TensorProto.INT32: np.int32, TensorProto.BOOL: np.bool_, TensorProto.INT8: np.int8,
          TensorProto.UINT8: np.uint8, TensorProto.INT16: np.int16, TensorProto.FLOAT16: np.float16}
_INT_TYPES = (TensorProto.INT64, TensorProto.INT32)


class Sym:
    """coef * N**power (N = the symbolic batch dimension)."""
    __slots__ = ("coef", "power")

    def __init__(self, coef, power=1):
        self.coef, self.power = int(coef), int(power)

    def __eq__(self, o):
        return isinstance(o, Sym) and self.coef == o.coef and self.power == o.power

    def __hash__(self):
        return hash((self.coef, self.power))

    def name(self):
        if self.power == 1:
            return "N" if self.coef == 1 else "N*%d" % self.coef
        return None  # N^2 etc.: not written

    __repr__ = name


def _sym(coef, power):
    if coef == 0:
        return 0
    return coef if power == 0 else Sym(coef, power)


def _parse_dim(d):
    if d.HasField("dim_value"):
        return int(d.dim_value)
    p = d.dim_param if d.HasField("dim_param") else ""
    if p == "N":
        return Sym(1)
    if p.startswith("N*") and p[2:].isdigit():
        return Sym(int(p[2:]))
    return None


def _as_sym(a):
    return (a.coef, a.power) if isinstance(a, Sym) else (int(a), 0)


def e_mul(a, b):
    if a is None or b is None:
        return None
    if not isinstance(a, Sym) and not isinstance(b, Sym):
        return int(a) * int(b)
    (ca, pa), (cb, pb) = _as_sym(a), _as_sym(b)
    return _sym(ca * cb, pa + pb)


def e_div(a, b):
    if a is None or b is None:
        return None
    (ca, pa), (cb, pb) = _as_sym(a), _as_sym(b)
    if cb == 0:
        return None
    if pa == 0 and pb == 0:
        q = abs(ca) // abs(cb)
        return q if (ca >= 0) == (cb >= 0) else -q  # ONNX integer Div truncates
    if pa >= pb and ca % cb == 0:
        return _sym(ca // cb, pa - pb)
    return None


def e_add(a, b, sign=1):
    if a is None or b is None:
        return None
    (ca, pa), (cb, pb) = _as_sym(a), _as_sym(b)
    if cb == 0:
        return a
    if ca == 0 and sign == 1:
        return b
    if pa == pb:
        return _sym(ca + sign * cb, pa)
    return None


def e_eq(a, b):
    if a is None or b is None:
        return None
    if not isinstance(a, Sym) and not isinstance(b, Sym):
        return bool(a == b)
    if isinstance(a, Sym) and isinstance(b, Sym):
        return True if a == b else None
    k = b if isinstance(a, Sym) else a
    return False if int(k) <= 0 else None  # N >= 1


class PV:
    """Partially known 0-D/1-D integer (or bool) tensor: elements are int/bool, Sym or None."""
    __slots__ = ("scalar", "el")

    def __init__(self, el, scalar=False):
        self.el, self.scalar = list(el), scalar

    def known(self):
        return all(e is not None and not isinstance(e, Sym) for e in self.el)


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _np_eval(node, ins):
    op, at = node.op_type, _attrs(node)
    a = ins[0] if ins else None
    if op == "Identity":
        return a
    if op == "Cast":
        return a.astype(_NP_OF[at["to"]])
    if op in ("Add", "Sub", "Mul"):
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}[op]
        return f(a, ins[1]).astype(a.dtype)
    if op == "Div":
        if np.issubdtype(a.dtype, np.integer):
            return (np.sign(a) * np.sign(ins[1]) * (np.abs(a) // np.abs(ins[1]))).astype(a.dtype)
        return (a / ins[1]).astype(a.dtype)
    if op == "Pow":
        return np.power(a, ins[1]).astype(a.dtype)
    if op in ("Sqrt", "Floor", "Ceil", "Neg", "Abs", "Not", "Reciprocal"):
        f = {"Sqrt": np.sqrt, "Floor": np.floor, "Ceil": np.ceil, "Neg": np.negative, "Abs": np.abs,
             "Not": np.logical_not, "Reciprocal": np.reciprocal}[op]
        return f(a).astype(a.dtype)
    if op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or"):
        f = {"Equal": np.equal, "Less": np.less, "Greater": np.greater, "LessOrEqual": np.less_equal,
             "GreaterOrEqual": np.greater_equal, "And": np.logical_and, "Or": np.logical_or}[op]
        return f(a, ins[1])
    if op in ("Min", "Max"):
        f = np.minimum if op == "Min" else np.maximum
        r = a
        for x in ins[1:]:
            r = f(r, x)
        return r.astype(a.dtype)
    if op == "Where":
        return np.where(a, ins[1], ins[2]).astype(ins[1].dtype)
    if op == "Gather":
        return np.take(a, ins[1], axis=at.get("axis", 0))
    if op == "Concat":
        return np.concatenate(ins, axis=at["axis"])
    if op == "Unsqueeze":
        axes = [int(x) for x in np.ravel(ins[1])]
        r = a.ndim + len(axes)
        for ax in sorted(x % r for x in axes):
            a = np.expand_dims(a, ax)
        return a
    if op == "Squeeze":
        if len(ins) > 1 and ins[1] is not None:
            return np.squeeze(a, axis=tuple(int(x) % a.ndim for x in np.ravel(ins[1])))
        return np.squeeze(a)
    if op == "Slice":
        starts, ends = np.ravel(ins[1]), np.ravel(ins[2])
        axes = np.ravel(ins[3]) if len(ins) > 3 and ins[3] is not None else np.arange(len(starts))
        steps = np.ravel(ins[4]) if len(ins) > 4 and ins[4] is not None else np.ones(len(starts), int)
        sl = [slice(None)] * a.ndim
        for s, e, ax, st in zip(starts, ends, axes, steps):
            sl[int(ax) % a.ndim] = slice(int(s), int(e), int(st))
        return a[tuple(sl)]
    if op == "Reshape":
        shp = [int(x) for x in np.ravel(ins[1])]
        shp = [a.shape[i] if (x == 0 and not at.get("allowzero", 0)) else x for i, x in enumerate(shp)]
        return a.reshape(shp)
    if op == "ConstantOfShape":
        v = at.get("value")
        val = onnx.numpy_helper.to_array(v) if v is not None else np.zeros(1, np.float32)
        return np.full([int(x) for x in np.ravel(a)], val.ravel()[0], dtype=val.dtype)
    if op == "Range":
        return np.arange(a, ins[1], ins[2]).astype(a.dtype)
    if op == "Expand":
        return (a * np.ones([int(x) for x in np.ravel(ins[1])], dtype=a.dtype)).astype(a.dtype)
    if op == "Transpose":
        return np.transpose(a, at.get("perm"))
    if op == "Size":
        return np.array(a.size, dtype=np.int64)
    return None


def _broadcast2(x, y):
    if len(x.el) == len(y.el):
        return x.el, y.el
    if len(x.el) == 1:
        return x.el * len(y.el), y.el
    if len(y.el) == 1:
        return x.el, y.el * len(x.el)
    raise ValueError("shape mismatch")


def _pv_eval(node, pvs):
    """Partial evaluation on PV inputs (None entries: optional input absent). Returns PV or None."""
    op, at = node.op_type, _attrs(node)
    if any(p is None for p in pvs[:1]):
        return None
    a = pvs[0]
    try:
        if op == "Identity":
            return a
        if op == "Cast":
            return a if at["to"] in _INT_TYPES else None
        if op in ("Add", "Sub", "Mul", "Div", "Equal"):
            b = pvs[1]
            if b is None:
                return None
            x, y = _broadcast2(a, b)
            f = {"Add": e_add, "Sub": lambda p, q: e_add(p, q, -1), "Mul": e_mul, "Div": e_div,
                 "Equal": e_eq}[op]
            return PV([f(p, q) for p, q in zip(x, y)], a.scalar and b.scalar)
        if op == "Where":
            c, x, y = pvs
            if x is None or y is None:
                return None
            n = max(len(c.el), len(x.el), len(y.el))
            ce, xe, ye = [(v.el * n if len(v.el) == 1 else v.el) for v in (c, x, y)]
            out = []
            for cc, xx, yy in zip(ce, xe, ye):
                out.append(xx if cc is True else yy if cc is False else (xx if xx == yy else None))
            return PV(out, c.scalar and x.scalar and y.scalar)
        if op == "Gather":
            if a.scalar or at.get("axis", 0) != 0 or pvs[1] is None or not pvs[1].known():
                return None
            idx = [int(i) for i in pvs[1].el]
            return PV([a.el[i] for i in idx], pvs[1].scalar)
        if op == "Slice":
            if a.scalar or any(p is not None and not p.known() for p in pvs[1:]):
                return None
            st, en = int(pvs[1].el[0]), int(pvs[2].el[0])
            if len(pvs) > 3 and pvs[3] is not None and int(pvs[3].el[0]) not in (0, -1):
                return None
            step = int(pvs[4].el[0]) if len(pvs) > 4 and pvs[4] is not None else 1
            return PV(a.el[slice(st, en, step)])
        if op == "Concat":
            if any(p is None or p.scalar for p in pvs):
                return None
            return PV([e for p in pvs for e in p.el])
        if op == "Unsqueeze":
            return PV(a.el) if a.scalar else None
        if op == "Reshape":  # 0-D/1-D -> 1-D or 0-D
            shp = pvs[1]
            if shp is None or not shp.known():
                return None
            if len(shp.el) == 0 and len(a.el) == 1:
                return PV(a.el, True)
            if len(shp.el) == 1 and int(shp.el[0]) in (-1, len(a.el)):
                return PV(a.el)
            return None
        if op == "Squeeze":
            return PV(a.el, True) if (not a.scalar and len(a.el) == 1) else None
    except (ValueError, IndexError, KeyError, TypeError):
        return None
    return None


def _pv_from_array(arr):
    if arr.ndim > 1 or arr.size > FOLD_MAX_ELEMS:
        return None
    if not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        return None
    vals = [bool(x) if arr.dtype == np.bool_ else int(x) for x in np.ravel(arr)]
    return PV(vals, arr.ndim == 0)


def _vi_dims(vi):
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    return [_parse_dim(d) for d in tt.shape.dim]


def _make_vi(name, elem_type, dims):
    vi = onnx.ValueInfoProto()
    vi.name = name
    vi.type.tensor_type.elem_type = elem_type
    shp = vi.type.tensor_type.shape
    shp.SetInParent()
    for d in dims:
        dd = shp.dim.add()
        if isinstance(d, Sym):
            if d.name():
                dd.dim_param = d.name()
        elif d is not None:
            dd.dim_value = int(d)
    return vi


def _prod(xs):
    r = 1
    for x in xs:
        r = e_mul(r, x)
    return r


def _annotate(node, pvs, dims_of):
    """Output dims (list of int/Sym/None) for shape-driven ops with a PV shape input, else None."""
    op, at = node.op_type, _attrs(node)
    if op == "Reshape" and pvs[1] is not None:
        din = dims_of(node.input[0])
        out = []
        for i, e in enumerate(pvs[1].el):
            if e == 0 and not at.get("allowzero", 0):
                e = din[i] if din is not None and i < len(din) else None
            out.append(e)
        if sum(1 for e in out if e == -1) == 1:
            i = out.index(-1)
            rest = _prod([e for j, e in enumerate(out) if j != i])
            out[i] = e_div(_prod(din), rest) if din is not None and None not in din else None
        return out
    if op == "Expand" and pvs[1] is not None:
        din = dims_of(node.input[0])
        if din is None:
            return None
        shp = pvs[1].el
        r = max(len(din), len(shp))
        a = [1] * (r - len(din)) + din
        b = [1] * (r - len(shp)) + shp
        return [y if x == 1 else x if y == 1 else (x if x == y else None) for x, y in zip(a, b)]
    if op == "Resize" and len(node.input) > 3 and node.input[3] and pvs[3] is not None:
        return list(pvs[3].el)
    if op == "ConstantOfShape" and pvs[0] is not None:
        return list(pvs[0].el)
    return None


def _fold_pass(model, annot):
    """One sweep over the (shape-inferred) model. Mutates nodes/annot; returns #changes."""
    g = model.graph
    vis = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        vis[vi.name] = vi
    consts, pvs = {}, {}
    for t in g.initializer:
        if not is_stripped(t) and _numel(t) <= FOLD_MAX_ELEMS:
            consts[t.name] = onnx.numpy_helper.to_array(t)

    init_dims = {t.name: [int(d) for d in t.dims] for t in g.initializer}

    def dims_of(name):
        if name in init_dims:
            return list(init_dims[name])
        vi = vis.get(name)
        return _vi_dims(vi) if vi is not None else None

    init_types = {t.name: t.data_type for t in g.initializer}

    def elem_type(name, default=TensorProto.INT64):
        if name in init_types:
            return init_types[name]
        vi = vis.get(name)
        return vi.type.tensor_type.elem_type if vi is not None and vi.type.tensor_type.elem_type else default

    # values computed from weights only (e.g. Slice/Transpose of a stripped in_proj weight): such a
    # node becomes a stripped initializer of its inferred shape, so it is not mistaken for an activation
    weightlike = {t.name for t in g.initializer}
    dead_nodes = []
    changes = 0
    for node in g.node:
        op = node.op_type
        if op == "Constant":
            weightlike.add(node.output[0])
            at = _attrs(node)
            if "value" in at:
                consts[node.output[0]] = onnx.numpy_helper.to_array(at["value"])
            elif "value_int" in at:
                consts[node.output[0]] = np.array(at["value_int"], np.int64)
            elif "value_ints" in at:
                consts[node.output[0]] = np.array(at["value_ints"], np.int64)
            elif "value_float" in at:
                consts[node.output[0]] = np.array(at["value_float"], np.float32)
            elif "value_floats" in at:
                consts[node.output[0]] = np.array(at["value_floats"], np.float32)
            continue
        if len(node.output) != 1:
            continue
        out = node.output[0]
        value = None
        inputs = list(node.input)
        if op == "Shape":
            d = dims_of(inputs[0])
            if d is not None:
                pv = PV(d)
                if pv.known():
                    value = np.array(pv.el, dtype=np.int64)
                else:
                    pvs[out] = pv
        elif all((not i) or i in consts for i in inputs) and inputs:
            try:
                value = _np_eval(node, [consts[i] if i else None for i in inputs])
            except Exception:  # noqa: BLE001 - leave the node alone
                value = None
            if value is not None:
                value = np.asarray(value)
                if value.size > FOLD_MAX_ELEMS:
                    value = None
        if value is None and op != "Shape":
            ins_pv = []
            for i in inputs:
                if not i:
                    ins_pv.append(None)
                elif i in pvs:
                    ins_pv.append(pvs[i])
                elif i in consts:
                    ins_pv.append(_pv_from_array(consts[i]))
                else:
                    ins_pv.append(None)
            pv = _pv_eval(node, ins_pv)
            if pv is not None:
                if pv.known():
                    et = elem_type(out)
                    if op in ("Equal",):
                        et = TensorProto.BOOL
                    arr = np.array(pv.el, dtype=_NP_OF.get(et, np.int64))
                    value = arr.reshape(()) if pv.scalar else arr
                else:
                    pvs[out] = pv
            dims = _annotate(node, ins_pv, dims_of)
            if dims is not None and any(isinstance(x, Sym) or x is not None for x in dims):
                et = elem_type(out, elem_type(inputs[0], TensorProto.FLOAT))
                if op == "ConstantOfShape":
                    v = _attrs(node).get("value")
                    et = v.data_type if v is not None else TensorProto.FLOAT
                vi = _make_vi(out, et, dims)
                old = annot.get(out)
                if old is None or old.SerializeToString() != vi.SerializeToString():
                    annot[out] = vi
                    changes += 1
        if value is None and node.input and all((not i) or i in weightlike for i in node.input) \
                and op not in ("Shape", "Size") and not op.startswith("Random"):
            d = dims_of(out)
            if d is not None and all(isinstance(x, int) for x in d):
                t = onnx.TensorProto()
                t.name, t.data_type = out, elem_type(out, TensorProto.FLOAT)
                t.dims.extend(d)
                g.initializer.append(t)
                dead_nodes.append(node)
                weightlike.add(out)
                init_dims[out], init_types[out] = list(d), t.data_type
                annot.pop(out, None)
                changes += 1
                continue
        if value is not None:
            weightlike.add(out)
            name = node.name
            node.Clear()
            node.op_type = "Constant"
            node.name = name
            node.output.append(out)
            node.attribute.append(onnx.helper.make_attribute(
                "value", onnx.numpy_helper.from_array(np.asarray(value), out)))
            consts[out] = np.asarray(value)
            annot.pop(out, None)
            changes += 1
    for node in dead_nodes:
        g.node.remove(node)
    return changes


def remove_dead(model):
    g = model.graph
    used = {o.name for o in g.output}
    keep = []
    removed = 0
    for node in reversed(list(g.node)):
        if any(o in used for o in node.output if o):
            keep.append(node)
            used.update(i for i in node.input if i)
        else:
            removed += 1
    keep.reverse()
    del g.node[:]
    g.node.extend(keep)
    inits = [t for t in g.initializer if t.name in used]
    removed_init = len(g.initializer) - len(inits)
    del g.initializer[:]
    g.initializer.extend(inits)
    vis = [v for v in g.value_info if v.name in used]
    del g.value_info[:]
    g.value_info.extend(vis)
    return removed, removed_init


def infer(model, annot):
    """ONNX shape inference from scratch, seeded only with our annotations."""
    outs = {o.name: o for o in model.graph.output}
    del model.graph.value_info[:]
    model.graph.value_info.extend(v for k, v in annot.items() if k not in outs)
    for o in model.graph.output:  # drop the exporter's guessed output dims (e.g. "Resizeoutput_dim_1")
        tt = o.type.tensor_type
        if o.name in annot:
            o.type.CopyFrom(annot[o.name].type)
        elif tt.HasField("shape") and any(_parse_dim(d) is None for d in tt.shape.dim):
            tt.ClearField("shape")
    return onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)


def fold_shapes(model, max_iter=200):
    """Repeat inference + folding until nothing changes. Returns (model, stats)."""
    annot = {}
    stats = dict(iterations=0, changes=0)
    for _ in range(max_iter):
        model = infer(model, annot)
        c = _fold_pass(model, annot)
        stats["iterations"] += 1
        stats["changes"] += c
        if not c:
            break
    stats["dead_nodes"], stats["dead_inits"] = remove_dead(model)
    annot = {k: v for k, v in annot.items() if k in {o for n in model.graph.node for o in n.output}}
    model = infer(model, annot)
    return model, stats


def _dims(vi):
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    out = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            out.append(d.dim_value)
        elif d.HasField("dim_param"):
            out.append(d.dim_param)
        else:
            out.append("?")
    return out


def shape_report(model):
    """Checks that every node output has a complete inferred shape: every dim an int, or the batch
    "N", or a multiple "N*k" of it (e.g. batch*heads in attention reshapes)."""
    known = {}
    for vi in list(model.graph.value_info) + list(model.graph.output) + list(model.graph.input):
        known[vi.name] = vi
    init_names = {t.name for t in model.graph.initializer}
    missing, partial, n_mult = [], [], 0
    values = 0
    for node in model.graph.node:
        for o in node.output:
            if not o:
                continue
            values += 1
            vi = known.get(o)
            dims = _dims(vi) if vi is not None else None
            if vi is None or dims is None or vi.type.tensor_type.elem_type == 0:
                missing.append(o)
                continue
            if any(isinstance(d, str) and not (d == "N" or (d.startswith("N*") and d[2:].isdigit()))
                   for d in dims):
                partial.append((o, dims))
            if any(isinstance(d, str) and d.startswith("N*") for d in dims):
                n_mult += 1
    io_dims = {vi.name: _dims(vi) for vi in list(model.graph.input) + list(model.graph.output)
               if vi.name not in init_names}
    return dict(values=values, missing=missing, partial=partial, n_mult=n_mult, io=io_dims,
                complete=not missing and not partial)


def export_one(key, out_dir, allow_dynamic=True):
    suite, build, shapes, batch_axis = ZOO[key]
    t0 = time.time()
    model = build()
    if model is None:
        print("[%s] SKIP: torchvision %s has no such model" % (key, torchvision.__version__))
        return None
    model.eval()
    result = None
    for dyn in ([True, False] if allow_dynamic else [False]):
        what = "dynamic batch N" if dyn else "static batch (input shapes %s)" % (shapes,)
        try:
            t1 = time.time()
            onnx_model = torch_export(model, shapes, batch_axis, dyn)
            t_export = time.time() - t1
            onnx.checker.check_model(onnx_model)  # full model, weights included
            full_bytes = onnx_model.ByteSize()
            n_nodes0 = len(onnx_model.graph.node)
            n_stripped, n_kept = strip_initializers(onnx_model)
            onnx_model.doc_string = DOC
            check_stripped(onnx_model)
            onnx_model, st = fold_shapes(onnx_model)
            check_stripped(onnx_model)
            rep = shape_report(onnx_model)
        except Exception as e:  # noqa: BLE001 - report and fall back to a static batch
            reason = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0][:300])
            print("[%s] export with %s failed (%s)" % (key, what, reason))
            continue
        result = (dyn, onnx_model, rep, st, t_export, full_bytes, n_nodes0, n_stripped, n_kept)
        if rep["complete"]:
            break
        print("[%s] export with %s: incomplete inferred shapes (%d values without shape, %d with "
              "unknown dims, e.g. %s)" % (key, what, len(rep["missing"]), len(rep["partial"]),
                                          (rep["missing"] + rep["partial"])[:2]))
    if result is None:
        print("[%s] FAILED" % key)
        return None
    dyn, onnx_model, rep, st, t_export, full_bytes, n_nodes0, n_stripped, n_kept = result
    if allow_dynamic and not dyn:
        print("[%s] NOTE: fell back to a static batch (input shapes %s)" % (key, shapes))
    del model

    path = os.path.join(out_dir, key + ".onnx")
    onnx.save(onnx_model, path)
    size = os.path.getsize(path)
    g = onnx_model.graph
    print("[%s] %s: exported %d nodes in %.1fs (full model %.1f MB); folded shape arithmetic in %d "
          "rounds, removed %d dead nodes -> %d nodes, %d initializers (%d stripped, %d with data kept)"
          % (key, suite, n_nodes0, t_export, full_bytes / 1e6, st["iterations"], st["dead_nodes"],
             len(g.node), len(g.initializer), sum(1 for t in g.initializer if is_stripped(t)),
             sum(1 for t in g.initializer if not is_stripped(t))))
    print("[%s]   %s %d bytes; io %s; %d values, %s%s"
          % (key, path, size, rep["io"], rep["values"],
             "all shapes complete" if rep["complete"] else
             "INCOMPLETE (%d missing, %d unknown dims)" % (len(rep["missing"]), len(rep["partial"])),
             (", %d values with N*k dims" % rep["n_mult"]) if rep["n_mult"] else ""))
    if size > 5 * 1024 * 1024:
        print("[%s] WARNING: file larger than 5 MB" % key)
    return dict(key=key, suite=suite, dynamic=dyn, size=size, seconds=t_export,
                complete=rep["complete"])


# ----------------------------------------------------------------------------------------------
# OPS.md
# ----------------------------------------------------------------------------------------------

def write_ops_md(out_dir):
    rows = []
    all_ops = collections.Counter()
    suite_of = {k: v[0] for k, v in ZOO.items()}
    for key in list(ZOO.keys()) + sorted(f[:-5] for f in os.listdir(out_dir) if f.endswith(".onnx")):
        path = os.path.join(out_dir, key + ".onnx")
        if not os.path.exists(path) or any(r[0] == key for r in rows):
            continue
        m = onnx.load(path)
        ops = collections.Counter(n.op_type for n in m.graph.node)
        all_ops.update(ops.keys())
        rep = shape_report(m)
        inp = [d for n, d in rep["io"].items() if n in {i.name for i in m.graph.input}]
        batch = "N" if inp and all(d and "N" in d for d in rep["io"].values()) else "static"
        n_str = sum(1 for t in m.graph.initializer if is_stripped(t))
        shapes_ok = "yes" if not rep["missing"] and not rep["partial"] else \
            "NO (%d missing, %d partial)" % (len(rep["missing"]), len(rep["partial"]))
        extra = sorted(o for o in ops if o not in KNOWN_OPS)
        rows.append((key, suite_of.get(key, "?"), len(m.graph.node), len(m.graph.initializer), n_str,
                     os.path.getsize(path), batch, shapes_ok,
                     ", ".join("%s(%d)" % (o, ops[o]) for o in sorted(ops)),
                     ", ".join(extra) or "-", inp))
    with open(os.path.join(out_dir, "OPS.md"), "w") as f:
        f.write("# ONNX op types of the exported zoo\n\n")
        f.write("Generated by `models/export_zoo.py` (torch %s, torchvision %s, onnx %s, opset %d). "
                "Graph-only: initializers keep dims, their data is stripped except int32/int64 "
                "initializers with <= %d elements; Constant nodes keep data. `value_info` holds the "
                "ONNX-inferred shape of every intermediate value; symbolic dims are the batch `N` or a "
                "multiple `N*k` of it (batch*heads in attention). Shape arithmetic with statically "
                "known values was folded into Constant nodes; nodes computing only from weights were "
                "replaced by stripped initializers of their shape; the remaining Shape/Gather/"
                "Unsqueeze/Concat/... nodes compute batch-dependent shapes.\n\n"
                % (torch.__version__, torchvision.__version__, onnx.__version__, OPSET,
                   SMALL_INT_MAX_ELEMS))
        f.write("| model | suite | #nodes | #initializers (stripped) | bytes | batch | input shape(s) "
                "| all shapes inferred | ops outside the importer list |\n")
        f.write("|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write("| %s | %s | %d | %d (%d) | %d | %s | %s | %s | %s |\n"
                    % (r[0], r[1], r[2], r[3], r[4], r[5], r[6],
                       " ".join("x".join(str(d) for d in s) for s in r[10]), r[7], r[9]))
        f.write("\n## Op types per model (count)\n\n| model | op types |\n|---|---|\n")
        for r in rows:
            f.write("| %s | %s |\n" % (r[0], r[8]))
        f.write("\n## Union of op types\n\n")
        f.write(", ".join("%s (%d models)" % (o, all_ops[o]) for o in sorted(all_ops)) + "\n\n")
        unusual = sorted(o for o in all_ops if o not in KNOWN_OPS)
        f.write("Not in the importer's list: %s\n" % (", ".join(unusual) or "none"))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx"))
    ap.add_argument("--only", nargs="+", metavar="NAME", help="export only these models")
    ap.add_argument("--static", action="store_true", help="always export with static batch 1")
    ap.add_argument("--list", action="store_true", help="list model keys and exit")
    ap.add_argument("--extra", action="store_true",
                    help="export the models that are not bundled (%s) instead of the bundled zoo" % ", ".join(EXTRA))
    a = ap.parse_args()
    ZOO.update(EXTRA)
    if a.list:
        for k, v in ZOO.items():
            print("%-28s %-8s %s" % (k, v[0], v[2]))
        return 0
    keys = a.only or [k for k, v in ZOO.items() if (v[0] == "Extra") == a.extra]
    bad = [k for k in keys if k not in ZOO]
    if bad:
        ap.error("unknown model(s): %s (known: %s)" % (", ".join(bad), ", ".join(ZOO)))
    os.makedirs(a.out, exist_ok=True)
    print("torch %s, torchvision %s, onnx %s, opset %d" % (torch.__version__, torchvision.__version__,
                                                          onnx.__version__, OPSET))
    results, failed = [], []
    for k in keys:
        try:
            r = export_one(k, a.out, allow_dynamic=not a.static)
        except Exception as e:  # noqa: BLE001
            print("[%s] FAILED: %s: %s" % (k, type(e).__name__, e))
            r = None
            failed.append(k)
        if r:
            results.append(r)
    print()
    print("%-28s %-8s %-8s %10s %8s" % ("model", "suite", "batch", "bytes", "export s"))
    for r in results:
        print("%-28s %-8s %-8s %10d %8.1f" % (r["key"], r["suite"], "N" if r["dynamic"] else "1",
                                             r["size"], r["seconds"]))
    print("total %d bytes in %d files" % (sum(r["size"] for r in results), len(results)))
    write_ops_md(a.out)
    print("wrote %s" % os.path.join(a.out, "OPS.md"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
