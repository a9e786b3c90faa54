#!/usr/bin/env python3
"""--time-limit as a whole-plan budget (issue 19): wall time of the long searches under a limit.

Each case runs `sramplan plan MODEL --target T --strategy S [flags] --time-limit L --no-map` as a child
process with SRAMPLAN_PROGRESS=1 (progress lines as on a terminal) and records: wall and CPU time,
the overrun past the limit, the exit code (0 fits, 2 does not fit: both are verified plans, since
every pipeline ends with the verifier), how many progress lines the searches printed, and whether the
output says "not proved" (progress verdicts and plan notes). Cases are searches that run longer
than a second on the bundled models: min-peak order + exact placement (hmcos), exact placement
(optimal), COSMA's ILPs (cosma, cosma-dc), Optimus's fusion DP (optimus) and the pool split with
exact placement per pool (pools-optimal).

Usage: bench/time_limit.py [--sramplan build/sramplan] [--out bench/results] [--limits 3,10]
"""
import argparse
import json
import os
import platform
import re
import resource
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = [
    ("hmcos", "models/nas/amoebanet-a-imagenet.graph.json", "sram:2MiB", ["--schedule", "minpeak"]),
    ("optimal", "models/nas/pnasnet-5-imagenet.graph.json", "sram:2MiB", ["--schedule", "minpeak"]),
    ("cosma", "models/nas/amoebanet-a-imagenet.graph.json", "sram:2MiB", ["--budget", "min"]),
    ("cosma-dc", "models/nas/amoebanet-a-imagenet.graph.json", "sram:2MiB", ["--budget", "min"]),
    ("optimus", "models/nas/amoebanet-a-imagenet.graph.json", "optimus-accel", []),
    ("pools-optimal", "models/onnx/squeezenet1_0.onnx", "stm32f767zi",
     ["--input-shape", "1x3x128x128", "--canonicalize", "--schedule", "minpeak"]),
]


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "load_avg_at_start": os.getloadavg()[0],
            "system": platform.platform()}


def run_case(cli, strategy, model, target, flags, limit):
    cmd = [cli, "plan", os.path.join(ROOT, model), "--target", target, "--strategy", strategy,
           "--time-limit", str(limit), "--no-map"] + flags
    env = dict(os.environ, SRAMPLAN_PROGRESS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    progress = [l for l in p.stderr.splitlines() if re.match(r"\[[^\]]+\] [0-9.]+ s of ", l)]
    searches = sorted({re.match(r"\[([^\]]+)\]", l).group(1) for l in progress})
    verdict = re.search(r"verdict: ([A-Z ]+)", p.stdout)
    return {
        "strategy": strategy, "model": os.path.basename(model), "target": target, "flags": " ".join(flags),
        "limit_s": limit, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "overrun_s": round(wall - limit, 2),
        "exit": p.returncode, "verdict": verdict.group(1).strip() if verdict else None,
        "progress_lines": len(progress), "searches_with_progress": searches,
        "says_not_proved": "not proved" in (p.stdout + p.stderr),
        "states_a_gap": " gap " in (p.stdout + p.stderr),
        "error": p.stderr.strip().splitlines()[-1] if p.returncode not in (0, 2) and p.stderr.strip() else None,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sramplan", default=os.path.join(ROOT, "build", "sramplan"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--limits", default="3,10")
    ap.add_argument("--name", default="time_limit")
    a = ap.parse_args()
    rows = []
    info = machine()
    for limit in [float(x) for x in a.limits.split(",")]:
        for strategy, model, target, flags in CASES:
            r = run_case(a.sramplan, strategy, model, target, flags, limit)
            print(json.dumps(r), flush=True)
            rows.append(r)
    info["load_avg_at_end"] = os.getloadavg()[0]
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, a.name + ".json"), "w") as f:
        json.dump({"machine": info, "rows": rows}, f, indent=1)
    md = ["# --time-limit as a whole-plan budget (bench/time_limit.py)", "",
          "Machine: %s, %s cores, load average %.1f at the start and %.1f at the end (shared machine: wall "
          "time includes waiting for a core; CPU time is the process's own)." %
          (info["cpu"], info["cores"], info["load_avg_at_start"], info["load_avg_at_end"]), "",
          "Each row: `sramplan plan MODEL --target T --strategy S FLAGS --time-limit L --no-map` with "
          "SRAMPLAN_PROGRESS=1. exit 0 fits / 2 does not fit (both verified plans). Progress: lines "
          "printed by the searches named.", "",
          "| strategy | model | target | flags | limit s | wall s | CPU s | overrun s | exit | verdict | "
          "progress lines (searches) | says not proved | states a gap |",
          "|---|---|---|---|---:|---:|---:|---:|---:|---|---|---|---|"]
    for r in rows:
        md.append("| %s | %s | %s | %s | %g | %.2f | %.2f | %.2f | %d | %s | %d (%s) | %s | %s |" % (
            r["strategy"], r["model"], r["target"], r["flags"], r["limit_s"], r["wall_s"], r["cpu_s"],
            r["overrun_s"], r["exit"], r["verdict"] or r["error"], r["progress_lines"],
            ", ".join(r["searches_with_progress"]), "yes" if r["says_not_proved"] else "no",
            "yes" if r["states_a_gap"] else "no"))
    with open(os.path.join(a.out, a.name + ".md"), "w") as f:
        f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
