#include "codegen_cmd.h"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "canonical_flag.h"
#include "cli_checks.h"
#include "codegen/codegen.h"
#include "driver/strategy.h"
#include "exec/hybrid.h"
#include "exec/quantize.h"
#include "exec/quantize_file.h"
#include "import/import.h"
#include "transform/canonicalize.h"
#include "report/report.h"
#include "tflite_cmd.h"
#include "support/strings.h"
#include "target/target.h"

namespace sramplan::cli {
namespace {

struct CodegenFlags {
  std::string model;
  std::string target;
  std::string strategy = "tflm";
  std::string out;
  std::string schedule = "model";
  std::string dtype = "int8";
  std::string cpu;
  uint64_t seed = exec::kDefaultSeed;
  int64_t stack = 4096;
  int64_t batch = 1;
  int64_t segment_bytes = 0;
  bool no_circular = false;
  bool allow_unknown = false;
  bool canonicalize = false;
  bool no_canonicalize = false;
  bool fold_pad = false;
  std::string input_shape;
};

CodegenFlags& Flags() {
  static CodegenFlags f;
  return f;
}

int Fail(const Status& s) {
  std::cerr << "error: " << s.message() << "\n";
  if (s.code() == StatusCode::kOutOfMemory) return 2;
  if (s.code() == StatusCode::kMismatch) return 3;
  if (s.code() == StatusCode::kInternal) {
    std::cerr << "(this is a bug in sramplan; please report it with the command line)\n";
    return 3;
  }
  return 1;
}

double Ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CLI::App* AddCodegenCommand(CLI::App* app) {
  CodegenFlags& f = Flags();
  auto* cmd = app->add_subcommand(
      "codegen",
      "plan an int8 model and write C firmware (static arena, weights in flash, kernel calls), a "
      "Makefile and a linker script; exit 0 fits, 2 does not fit (the link fails naming the "
      "overflow)");
  cmd->add_option("model", f.model, "model: .onnx, native .graph.json, or an MCUNet config .json")
      ->required();
  cmd->add_option("--target", f.target, "preset name, target JSON file, or sram:SIZE")->required();
  std::string help = "strategy (default tflm):";
  for (const auto& s : driver::Strategies()) help += "\n  " + s.name + ": " + s.description;
  cmd->add_option("--strategy", f.strategy, help);
  cmd->add_option("--out", f.out, "directory to write the firmware project into")->required();
  cmd->add_option("--seed", f.seed, "seed of the generated weights and input (as verify)");
  cmd->add_option("--stack", f.stack, "stack bytes reserved at the top of RAM (default 4096)")->check(kByteCount);
  cmd->add_option("--schedule", f.schedule, "model or minpeak")
      ->check(CLI::IsMember({"model", "minpeak"}));
  cmd->add_option("--batch", f.batch, "bind the symbolic batch dimension (default 1)");
  cmd->add_option("--dtype", f.dtype, "element type; firmware is int8")
      ->check(CLI::IsMember({"int8"}));
  cmd->add_option("--cpu", f.cpu,
                  "cortex-m3 (QEMU mps2-an385), cortex-m4 (mps2-an386) or cortex-m7 "
                  "(mps2-an500); default the target's \"cpu\", else from its name (STM32F7/H7: cortex-m7)")
      ->check(CLI::IsMember({"cortex-m3", "cortex-m4", "cortex-m7"}));
  cmd->add_flag("--allow-unknown-ops", f.allow_unknown, "import unknown ONNX ops as opaque ops");
  cmd->add_option("--input-shape", f.input_shape,
                  "ONNX: the dims of the model's only input in its own layout, e.g. 1x3x96x96");
  cmd->add_flag("--canonicalize", f.canonicalize,
                "canonicalise any model first (the default for ONNX): fold Relu/Clip(0,6) into their Conv and make an "
                "NCHW graph channels-last (NHWC); the firmware then takes NHWC input");
  cmd->add_flag("--no-canonicalize", f.no_canonicalize,
                "generate from an ONNX model as imported (NCHW models are then refused: the kernels are NHWC)");
  cmd->add_flag("--fold-pad", f.fold_pad,
                ".tflite: fold a spatial PAD that only feeds convolutions into their padding (as `plan`)");
  cmd->add_option("--segment-bytes", f.segment_bytes, "vmcu: bytes per segment (default 0: the paper's rule)")
      ->check(kByteCount);
  cmd->add_flag("--no-circular-pool", f.no_circular, "vmcu: a linear layout only (no wrap-around)");
  return cmd;
}

int RunCodegenCommand(int verbosity) {
  const CodegenFlags& f = Flags();
  auto log = [&](int level, const std::string& m) {
    if (verbosity >= level) std::cerr << m << "\n";
  };
  if (!driver::IsStrategy(f.strategy)) return Fail(driver::UnknownStrategy(f.strategy, false, "--strategy"));
  auto target = target::LoadTarget(f.target);
  if (!target.ok()) return Fail(target.status());
  import::ImportOptions io;
  io.batch = f.batch;
  io.allow_unknown_ops = f.allow_unknown;
  io.fold_pad = f.fold_pad;
  auto dims = ParseDims(f.input_shape, "--input-shape");
  if (!dims.ok()) return Fail(dims.status());
  io.input_shape = *dims;
  auto g = import::ImportModel(f.model, io);
  if (!g.ok()) return Fail(g.status());
  auto canonical = WantCanonical(f.model, f.canonicalize, f.no_canonicalize);
  if (!canonical.ok()) return Fail(canonical.status());
  if (*canonical) {
    auto r = transform::Canonicalize(&*g, {});
    if (!r.ok()) return Fail(r.status());
    log(1, r->Summary());
  }
  ir::ApplyDtype(*g, ir::DataType::kInt8);
  if (Status h = exec::RefuseHybridCodegen(*g); !h.ok()) return Fail(h);  // exec/hybrid.h
  // Quantisation first: it names every op the int8 kernels cannot run before any planning.
  auto t0 = std::chrono::steady_clock::now();
  // A .tflite model runs its own scales and zero points, as `verify` does (exec/quantize_file.h);
  // other models are calibrated.
  std::string how;
  auto q = exec::QuantizeForVerify(*g, f.seed, IsTfliteFile(f.model), nullptr, &how);
  if (!q.ok()) return Fail(q.status());
  log(1, "int8: " + how);
  log(2, "quantised in " + std::to_string(static_cast<int>(Ms(t0))) + " ms");
  driver::PlanOptions po;
  po.dtype_name = f.dtype;
  po.batch = f.batch;
  po.schedule = f.schedule;
  po.segment_bytes = f.segment_bytes;
  po.circular_pool = !f.no_circular;
  t0 = std::chrono::steady_clock::now();
  auto p = driver::RunStrategy(*g, *target, f.strategy, po);
  if (!p.ok()) return Fail(p.status());
  log(2, "planned (" + f.strategy + ") in " + std::to_string(static_cast<int>(Ms(t0))) + " ms");
  codegen::CodegenOptions co;
  co.stack_bytes = f.stack;
  co.cpu = f.cpu;
  if (co.cpu.empty() && !target->cpu.empty()) {  // the target's "cpu" (issue 17)
    if (target->cpu != "cortex-m3" && target->cpu != "cortex-m4" && target->cpu != "cortex-m7")
      return Fail(InvalidArgument("target '" + target->name + "' has cpu " + target->cpu +
                                  ", which the firmware flow cannot build and run (QEMU has no MPS2 board for it); "
                                  "pass --cpu cortex-m3 for the portable kernels on an M3"));
    co.cpu = target->cpu;
  }
  co.seed = f.seed;
  t0 = std::chrono::steady_clock::now();
  auto fw = codegen::GenerateFirmware(*g, *p, *q, co);
  if (!fw.ok()) return Fail(fw.status());
  Status st = codegen::WriteFirmware(*fw, f.out);
  if (!st.ok()) return Fail(st);
  log(2, "generated in " + std::to_string(static_cast<int>(Ms(t0))) + " ms");
  const bool fits = p->metrics.fits && fw->fits;
  if (verbosity >= 1) {
    std::cout << "codegen " << f.strategy << ": wrote " << f.out << " (" << fw->steps << " steps, "
              << fw->kernel_calls << " kernel call sites, " << fw->cpu << " / QEMU " << fw->machine
              << ")\n";
    std::cout << "  RAM:   arena " << fw->arena_bytes << " B + stack " << fw->stack_bytes
              << " B = " << fw->arena_bytes + fw->stack_bytes << " B of " << fw->ram_capacity
              << " B" << (fw->fits ? "" : "  DOES NOT FIT") << "\n";
    for (const auto& pool : fw->pools) {  // memory pools: one region each (the RAM one above)
      char base[16];
      std::snprintf(base, sizeof base, "0x%08llx", static_cast<unsigned long long>(pool.base));
      std::cout << "  pool " << pool.name << " @ " << base << ": arena " << pool.used << " B of " << pool.capacity
                << " B" << (pool.name == fw->ram_pool ? " (the RAM region)" : "") << "\n";
    }
    std::cout << "  kernels: " << fw->kernels << "\n";
    std::cout << "  FLASH: weights " << fw->weight_bytes << " B, input " << fw->input_bytes
              << " B, tables " << fw->table_bytes << " B (+ code) of " << fw->flash_capacity
              << " B\n";
    std::cout << "  expected checksum " << [&] {
      char b[16];
      std::snprintf(b, sizeof b, "0x%08x", fw->expected_checksum);
      return std::string(b);
    }() << " (host arena executor)\n";
    std::cout << "  build and run: make -C " << f.out << " run\n";
    if (!p->metrics.fits) std::cout << report::DoesNotFitDetail(*p);
  }
  if (!fits) {
    // Name the region(s) that overflow (flash: weights, input and tables without the code, so a
    // flash overflow found here is certain; the linker may also find one when the code tips it).
    const bool ram_over = !fw->fits;  // arena + stack + other statics vs the RAM region
    const bool flash_over = fw->weight_bytes + fw->input_bytes + fw->table_bytes > fw->flash_capacity;
    std::string regions;
    if (ram_over) regions += "\"region `RAM' overflowed\"";
    if (flash_over) regions += std::string(regions.empty() ? "" : " and ") + "\"region `FLASH' overflowed\"";
    if (regions.empty()) regions = "a region overflow";
    std::cerr << "the plan does not fit the target; the C is written, and linking it fails with " << regions
              << "\n";
    return 2;
  }
  return 0;
}

}  // namespace sramplan::cli
