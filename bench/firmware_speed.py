#!/usr/bin/env python3
"""Firmware speed: exact instruction counts of the generated firmware's kernel calls in QEMU.

For MCUNet-320KB-ImageNet and the S1-S8 / B1-B16 blocks, under the vmcu, vmcu-small, vmcu-fast, tinyengine and
tflm plans:
`sramplan codegen`, build the firmware with every kernel call bracketed by the qemu-icount plugin's
markers (model.c's SRAMPLAN_FW_MARK), run it in qemu-system-arm mps2-an386 (Cortex-M4) with the plugin
(built here, at benchmark time, from ../shared/tools/qemu-icount), check the output checksum against the
host executor's, and write bench/results/firmware_speed.{json,md}: per network and strategy the
instructions and estimated Cortex-M4 cycles inside kernel calls, the arena, and per-layer (per plan
step) records; for the whole MCUNet, the per-layer-kind totals next to the CMSIS-NN figures of the
plugin's README.

Usage: bench/firmware_speed.py [--sramplan build/sramplan] [--out bench/results] [--icount DIR]
                               [--networks mcunet,S1,...] [--strategies vmcu,vmcu-small,vmcu-fast,tinyengine,tflm]
                               [--name firmware_speed]
"""
import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCKS = ["S%d" % i for i in range(1, 9)] + ["B%d" % i for i in range(1, 17)]
NETWORKS = ["mcunet"] + BLOCKS
# CMSIS-NN kernels on the same MCUNet-320KB-ImageNet layers and data (qemu-icount README), instructions.
CMSIS_NN = {
    "first conv 3x3 s2": 15.9e6,
    "pointwise": 135.9e6,
    "depthwise 3x3": 25.4e6,
    "depthwise 5x5": 75.2e6,
    "depthwise 7x7": 121.8e6,
    "residual add": 11.7e6,
    "classifier": 0.36e6,
}
CMSIS_NN_TOTAL = 386.5e6


def model_path(net):
    name = "mcunet-320kb-imagenet" if net == "mcunet" else net
    return os.path.join(ROOT, "models", "mcunet_blocks", name + ".graph.json")


def find_icount(arg):
    cands = [arg] if arg else [os.path.join(ROOT, "..", "shared", "tools", "qemu-icount"),
                               os.path.join(ROOT, "..", "..", "shared", "tools", "qemu-icount"),
                               "/work/shared/tools/qemu-icount"]
    for c in cands:
        if c and os.path.isfile(os.path.join(c, "icount_mark.c")):
            return os.path.abspath(c)
    sys.exit("qemu-icount not found (pass --icount DIR holding icount_mark.c and fwmark.c)")


def run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def op_kind(op, first_conv):
    t = op["type"]
    a = op.get("attrs", {})
    if t == "Conv":
        ks = a.get("kernel_shape", [1, 1])
        if a.get("group", 1) > 1:
            return "depthwise %dx%d" % (ks[0], ks[1])
        if ks == [1, 1]:
            return "pointwise"
        if first_conv:
            return "first conv %dx%d s%d" % (ks[0], ks[1], a.get("strides", [1, 1])[0])
        return "conv %dx%d" % (ks[0], ks[1])
    if t == "Add":
        return "residual add"
    if t in ("Gemm", "MatMul", "FullyConnected"):
        return "classifier"
    if "Pool" in t or t == "ReduceMean":
        return "pooling"
    return t.lower()


STEP_RE = re.compile(r"^  /\* step (\d+): (.*?)(?:, segment-aware (\w+)|\): | \(|\*/)")


def parse_steps(model_c, graph):
    """step -> (ops, kind) from model.c's step comments."""
    ops = {o["name"]: o for o in graph["ops"]}
    first = next((o["name"] for o in graph["ops"] if o["type"] == "Conv"), None)
    steps = {}
    for line in model_c.splitlines():
        m = re.match(r"^  /\* step (\d+): (.*)\*/$", line)
        if not m:
            continue
        s = int(m.group(1))
        body = m.group(2)
        seg = "segment-aware" in body
        names = re.findall(r"([\w.\-/]+) \((\w+)[,)]", body.split(", segment-aware")[0])
        if not seg:
            names = names[:1]
        kinds = [op_kind(ops[n], n == first) if n in ops else t.lower() for n, t in names]
        if seg and len(names) > 1:
            kind = "fused bottleneck (" + " + ".join(kinds) + ")"
        elif seg:
            kind = "segment-aware " + kinds[0]
        else:
            kind = kinds[0] if kinds else "?"
        steps[s] = {"ops": [n for n, _ in names], "kinds": kinds, "kind": kind}
    return steps


MARK_MACRO = """#define SP_CALL(step, call) \\
  do { \\
    sp_status_t sp_st_; \\
    fw_mark((unsigned)(step) < 1023u ? (unsigned)(step) : 1022u); \\
    sp_st_ = (call); \\
    fw_mark(1023u); \\
    if (sp_st_ != SP_OK) return (step) + 1; \\
  } while (0)
"""


def patch_old_codegen(out):
    """Firmware of an sramplan without SRAMPLAN_FW_MARK (e.g. the baseline's): adds the markers."""
    mc = os.path.join(out, "model.c")
    c = open(mc).read()
    if "SRAMPLAN_FW_MARK" not in c:
        c = re.sub(r"#define SP_CALL\(step, call\).*?while \(0\)\n",
                   lambda m: "void fw_mark(unsigned id);\n" + MARK_MACRO, c, count=1, flags=re.S)
        open(mc, "w").write(c)
    mk = os.path.join(out, "Makefile")
    m = open(mk).read()
    if "EXTRA_SRCS" not in m:
        m = m.replace("\nHDRS = ", "\nSRCS += $(EXTRA_SRCS)\nCFLAGS += $(EXTRA_CFLAGS)\nHDRS = ", 1)
        open(mk, "w").write(m)


def measure(net, strategy, target, sramplan, plugin, fwmark, work):
    out = os.path.join(work, "%s-%s" % (net, strategy))
    shutil.rmtree(out, ignore_errors=True)
    rc, log = run([sramplan, "codegen", model_path(net), "--target", target, "--strategy", strategy,
                   "--out", out])
    if rc != 0:
        return {"error": "codegen exit %d: %s" % (rc, log.strip().splitlines()[-1] if log else "")}
    shutil.copy(fwmark, os.path.join(out, "fwmark.c"))
    patch_old_codegen(out)
    rc, log = run(["make", "-s", "model.elf", "EXTRA_SRCS=fwmark.c", "EXTRA_CFLAGS=-DSRAMPLAN_FW_MARK"], cwd=out)
    if rc != 0:
        return {"error": "firmware build failed: " + log.strip()[-400:]}
    rc, nm = run(["arm-none-eabi-nm", os.path.join(out, "model.elf")])
    addr = next(l.split()[0] for l in nm.splitlines() if l.endswith(" fw_mark_table"))
    counts = os.path.join(out, "icount.txt")
    rc, qlog = run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting-config",
                    "enable=on,target=native", "-kernel", "model.elf", "-plugin",
                    "%s,out=%s,marktab=0x%s" % (plugin, counts, addr)], cwd=out)
    ok = "matches the host executor" in qlog
    model_c = open(os.path.join(out, "model.c")).read()
    arena = int(re.search(r"#define SRAMPLAN_ARENA_BYTES (\d+)", model_c).group(1))
    steps = parse_steps(model_c, json.load(open(model_path(net))))
    layers = []
    for line in open(counts):
        if line.startswith("#"):
            continue
        i, hits, ins, cyc = (int(x) for x in line.split())
        if i >= 1022:
            continue
        st = steps.get(i, {"ops": [], "kinds": [], "kind": "?"})
        layers.append({"step": i, "ops": st["ops"], "kind": st["kind"], "calls": hits,
                       "instructions": ins, "est_cycles": cyc})
    rec = {"network": "MCUNet-320KB-ImageNet" if net == "mcunet" else net, "strategy": strategy,
           "target": target, "checksum_matches_host": ok,
           "instructions": sum(l["instructions"] for l in layers),
           "est_cycles": sum(l["est_cycles"] for l in layers), "arena_bytes": arena, "layers": layers}
    if not ok:
        rec["error"] = "checksum mismatch or run failure: " + qlog.strip()[-300:]
    return rec


def by_kind(rec):
    k = {}
    for l in rec["layers"]:
        k[l["kind"]] = k.get(l["kind"], 0) + l["instructions"]
    return k


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def write_md(path, recs, machine, qemu):
    m = ["# Firmware speed: instructions inside kernel calls (QEMU mps2-an386, Cortex-M4)", "",
         "Generated by `bench/firmware_speed.py` on %s. %s with the qemu-icount plugin (exact executed "
         "instruction counts; cycles are the plugin's Cortex-M4 TRM estimate at zero wait states, use "
         "ratios). Firmware: `sramplan codegen --target <target> --strategy <s>`, its Makefile (arm-none-eabi-gcc "
         "-O2 -mcpu=cortex-m4), every kernel call bracketed by `fw_mark` (markers add about 10 instructions "
         "per call). Every run's output checksum is compared with the host executor's. `vmcu` is the fastest plan "
         "that fits the target (pass `row-cache:fit`: the faster row-cache kernel on every fused step whose larger "
         "workspace keeps the arena within 10%% and within the target's SRAM); `vmcu-small` keeps the smallest "
         "arena (pass `row-cache`); `vmcu-fast` takes the row cache within 10%% whether or not it fits "
         "(`row-cache:10`)." % (machine, qemu), "",
         "| network | strategy | instructions | est. cycles | arena B | checksum |", "|---|---|---:|---:|---:|---|"]
    for r in recs:
        if "instructions" not in r:
            m.append("| %s | %s | %s | | | |" % (r["network"], r["strategy"], r.get("error", "")))
            continue
        m.append("| %s | %s | %d | %d | %d | %s |" % (r["network"], r["strategy"], r["instructions"],
                                                     r["est_cycles"], r["arena_bytes"],
                                                     "ok" if r["checksum_matches_host"] else "MISMATCH"))
    mc = [r for r in recs if r["network"] == "MCUNet-320KB-ImageNet" and "layers" in r]
    if mc:
        m += ["", "## MCUNet-320KB-ImageNet by layer kind vs CMSIS-NN", "",
              "CMSIS-NN: the qemu-icount README's figures (CMSIS-NN kernels on the same layers and data, "
              "%.1f M in all). Fused/segment-aware steps run several layers in one call and are listed "
              "as their own kind." % (CMSIS_NN_TOTAL / 1e6), ""]
        kinds = []
        for r in mc:
            for k in by_kind(r):
                if k not in kinds:
                    kinds.append(k)
        m.append("| layer kind | CMSIS-NN M | " + " | ".join("%s M (ratio)" % r["strategy"] for r in mc) + " |")
        m.append("|---|---:|" + "---:|" * len(mc))
        for k in sorted(kinds):
            ref = CMSIS_NN.get(k)
            cells = []
            for r in mc:
                v = by_kind(r).get(k)
                if v is None:
                    cells.append("")
                else:
                    cells.append("%.2f" % (v / 1e6) + (" (%.2fx)" % (v / ref) if ref else ""))
            m.append("| %s | %s | %s |" % (k, "%.2f" % (ref / 1e6) if ref else "", " | ".join(cells)))
        m.append("| **total** | %.1f | %s |" % (CMSIS_NN_TOTAL / 1e6, " | ".join(
            "%.2f (%.2fx)" % (r["instructions"] / 1e6, r["instructions"] / CMSIS_NN_TOTAL) for r in mc)))
        for r in mc:
            m += ["", "### MCUNet-320KB-ImageNet, %s: per step" % r["strategy"], "",
                  "| step | ops | kind | instructions | est. cycles |", "|---:|---|---|---:|---:|"]
            for l in r["layers"]:
                m.append("| %d | %s | %s | %d | %d |" % (l["step"], " + ".join(l["ops"]), l["kind"],
                                                        l["instructions"], l["est_cycles"]))
    open(path, "w").write("\n".join(m) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sramplan", default=os.path.join(ROOT, "build", "sramplan"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--icount", default=None)
    ap.add_argument("--networks", default=",".join(NETWORKS))
    ap.add_argument("--strategies", default="vmcu,vmcu-small,vmcu-fast,tinyengine,tflm")
    ap.add_argument("--target", default="mps2-an386")
    ap.add_argument("--name", default="firmware_speed")
    ap.add_argument("--keep", default=None, help="keep the firmware directories here")
    a = ap.parse_args()
    for tool in ("arm-none-eabi-gcc", "qemu-system-arm", "make", "gcc"):
        if not shutil.which(tool):
            sys.exit("%s is not installed (scripts/install-deps.sh)" % tool)
    if not os.access(a.sramplan, os.X_OK):
        sys.exit("%s not built (scripts/build.sh release sramplan)" % a.sramplan)
    icount = find_icount(a.icount)
    work = a.keep or tempfile.mkdtemp(prefix="fwspeed")
    os.makedirs(work, exist_ok=True)
    plugin = os.path.join(work, "libicount_mark.so")
    rc, log = run(["gcc", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-o", plugin,
                   os.path.join(icount, "icount_mark.c"), "-I" + icount])
    if rc != 0:
        sys.exit("building the qemu-icount plugin failed:\n" + log)
    qemu = run(["qemu-system-arm", "--version"])[1].splitlines()[0]
    recs = []
    failed = False
    for net in a.networks.split(","):
        for s in a.strategies.split(","):
            r = measure(net, s, a.target, a.sramplan, plugin, os.path.join(icount, "fwmark.c"), work)
            r.setdefault("network", "MCUNet-320KB-ImageNet" if net == "mcunet" else net)
            r.setdefault("strategy", s)
            r.setdefault("target", a.target)
            failed |= "error" in r
            print("%s %s: %s" % (r["network"], s, r.get("error") or "%d instructions, arena %d B" % (
                r["instructions"], r["arena_bytes"])), file=sys.stderr)
            recs.append(r)
    machine = "%s, %d cores" % (cpu_name(), os.cpu_count() or 0)
    os.makedirs(a.out, exist_ok=True)
    doc = {"benchmark": a.name, "machine": machine, "qemu": qemu, "guest": "mps2-an386 (Cortex-M4)",
           "cmsis_nn_reference": {"network": "MCUNet-320KB-ImageNet", "instructions": CMSIS_NN_TOTAL,
                                  "by_kind": CMSIS_NN},
           "runs": recs}
    with open(os.path.join(a.out, a.name + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
    write_md(os.path.join(a.out, a.name + ".md"), recs, machine, qemu)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
