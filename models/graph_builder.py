"""The native-graph builder the model generators share (gen_mcunet_blocks.py, gen_nas.py).

Standard library only. Builds the tensors and ops of a native sramplan graph (docs/graph-format.md;
layout NHWC, dtype int8) and writes it with one line per tensor and per op.
"""

import json


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class GraphBuilder:
    def __init__(self, name):
        self.name = name
        self.tensors = []
        self.ops = []
        self.by_name = {}
        self._lin = 0  # counter for deterministic linear-output quant params

    def tensor(self, name, shape, kind="activation", quant=None, dtype=None):
        assert name not in self.by_name, name
        t = {"name": name, "shape": list(shape), "kind": kind}
        if dtype:
            t["dtype"] = dtype
        if quant is not None:
            t["quant"] = quant
        self.tensors.append(t)
        self.by_name[name] = t
        return name

    def shape(self, name):
        return self.by_name[name]["shape"]

    def linear_quant(self):
        """Plausible per-tensor params of a linear (non-activated) int8 output."""
        i = self._lin
        self._lin += 1
        return {"scale": [round(0.04 + 0.005 * (i % 5), 6)], "zero_point": [(i * 7) % 11 - 5]}

    def op(self, name, type_, inputs, outputs, attrs=None):
        o = {"name": name, "type": type_, "inputs": list(inputs), "outputs": list(outputs)}
        if attrs is not None:
            o["attrs"] = attrs
        self.ops.append(o)

    def to_json(self, extra):
        d = {"format": "sramplan-graph", "version": 1, "name": self.name, "layout": "NHWC",
             "dtype": "int8"}
        d.update(extra)
        d["tensors"] = self.tensors
        d["ops"] = self.ops
        return d


def write_json(path, data):
    """Pretty top level, one line per tensor, per op and per note."""
    parts = []
    for key, v in data.items():
        if key in ("tensors", "ops", "notes"):
            body = ",\n".join("    " + json.dumps(x) for x in v)
            parts.append("  %s: [\n%s\n  ]" % (json.dumps(key), body))
        else:
            parts.append("  %s: %s" % (json.dumps(key), json.dumps(v)))
    text = "{\n" + ",\n".join(parts) + "\n}\n"
    json.loads(text)  # self-check
    with open(path, "w") as f:
        f.write(text)
