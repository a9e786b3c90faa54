// Firmware code generation: deterministic C, an arena of exactly the plan's bytes, and the emitted
// model.c run on the host (gcc + the runtime) and in QEMU (arm-none-eabi-gcc, mps2-an386) printing
// the checksum of the host arena executor; a plan that does not fit fails to link naming the
// overflow; ops without a firmware kernel are named.
#include "codegen/codegen.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "driver/strategy.h"
#include "exec/kernels.h"
#include "exec/quantize.h"
#include "import/import.h"
#include "target/target.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::codegen {
namespace {

using sramplan::testing::SourcePath;

// Every op kind an MCU model uses: Pad, a generic 3x3 stride-2 Conv, Clip, depthwise and pointwise
// Conv, MaxPool, AveragePool, Add, Relu, Concat, GlobalAveragePool, Reshape (a view), Gemm. NHWC.
const char* kMixedGraph = R"({
  "format": "sramplan-graph", "version": 1, "name": "mixed", "layout": "NHWC", "dtype": "int8",
  "tensors": [
    {"name": "x", "shape": [1, 12, 12, 3], "kind": "input"},
    {"name": "xp", "shape": [1, 14, 14, 3]},
    {"name": "w1", "shape": [8, 3, 3, 3], "kind": "constant"},
    {"name": "b1", "shape": [8], "kind": "constant", "dtype": "int32"},
    {"name": "c1"}, {"name": "r1"},
    {"name": "wd", "shape": [8, 3, 3, 1], "kind": "constant"},
    {"name": "d1"},
    {"name": "wp", "shape": [16, 1, 1, 8], "kind": "constant"},
    {"name": "p1"}, {"name": "m1"}, {"name": "a1"}, {"name": "s1"}, {"name": "s2"}, {"name": "k1"},
    {"name": "g1"},
    {"name": "f1", "shape": [1, 32]},
    {"name": "wf", "shape": [10, 32], "kind": "constant"},
    {"name": "bf", "shape": [10], "kind": "constant", "dtype": "int32"},
    {"name": "y", "shape": [1, 10], "kind": "output"}
  ],
  "ops": [
    {"name": "pad", "type": "Pad", "inputs": ["x"], "outputs": ["xp"], "attrs": {"pads": [0, 1, 1, 0, 0, 1, 1, 0]}},
    {"name": "conv1", "type": "Conv", "inputs": ["xp", "w1", "b1"], "outputs": ["c1"],
     "attrs": {"kernel_shape": [3, 3], "strides": [2, 2]}},
    {"name": "clip", "type": "Clip", "inputs": ["c1"], "outputs": ["r1"], "attrs": {"min": 0.0, "max": 6.0}},
    {"name": "dw", "type": "Conv", "inputs": ["r1", "wd"], "outputs": ["d1"],
     "attrs": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "group": 8, "activation": "relu"}},
    {"name": "pw", "type": "Conv", "inputs": ["d1", "wp"], "outputs": ["p1"], "attrs": {"kernel_shape": [1, 1]}},
    {"name": "mp", "type": "MaxPool", "inputs": ["p1"], "outputs": ["m1"], "attrs": {"kernel_shape": [2, 2], "strides": [2, 2]}},
    {"name": "ap", "type": "AveragePool", "inputs": ["p1"], "outputs": ["a1"], "attrs": {"kernel_shape": [2, 2], "strides": [2, 2]}},
    {"name": "add", "type": "Add", "inputs": ["m1", "a1"], "outputs": ["s1"]},
    {"name": "relu", "type": "Relu", "inputs": ["s1"], "outputs": ["s2"]},
    {"name": "cat", "type": "Concat", "inputs": ["s2", "m1"], "outputs": ["k1"], "attrs": {"axis": 3}},
    {"name": "gap", "type": "GlobalAveragePool", "inputs": ["k1"], "outputs": ["g1"]},
    {"name": "flat", "type": "Reshape", "inputs": ["g1"], "outputs": ["f1"], "attrs": {"shape": [1, 32]}},
    {"name": "fc", "type": "Gemm", "inputs": ["f1", "wf", "bf"], "outputs": ["y"], "attrs": {"transB": 1}}
  ]
})";

// An NCHW convolution: the host stages it through channels-last copies the plan does not hold.
const char* kNchwGraph = R"({
  "format": "sramplan-graph", "version": 1, "name": "nchw", "dtype": "int8",
  "tensors": [
    {"name": "x", "shape": [1, 4, 6, 6], "kind": "input"},
    {"name": "w", "shape": [8, 4, 3, 3], "kind": "constant"},
    {"name": "y", "kind": "output"}
  ],
  "ops": [
    {"name": "conv_nchw", "type": "Conv", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {"kernel_shape": [3, 3]}}
  ]
})";

struct Model {
  ir::Graph g;
  exec::QuantizedModel q;
};

Model LoadText(const char* text, const std::string& name) {
  auto g = import::ImportNativeJson(text, name, {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  ir::ApplyDtype(*g, ir::DataType::kInt8);
  auto q = exec::QuantizeModel(*g, exec::kDefaultSeed);
  EXPECT_TRUE(q.ok()) << q.status().message();
  return {std::move(g).value(), std::move(q).value()};
}

Model LoadFile(const std::string& relative) {
  auto g = import::ImportModel(SourcePath(relative), {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  ir::ApplyDtype(*g, ir::DataType::kInt8);
  auto q = exec::QuantizeModel(*g, exec::kDefaultSeed);
  EXPECT_TRUE(q.ok()) << q.status().message();
  return {std::move(g).value(), std::move(q).value()};
}

plan::Plan Plan(const ir::Graph& g, const std::string& target, const std::string& strategy) {
  auto t = target::LoadTarget(target);
  EXPECT_TRUE(t.ok()) << t.status().message();
  driver::PlanOptions o;
  o.dtype_name = "int8";
  auto p = driver::RunStrategy(g, *t, strategy, o);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

Firmware Generate(const Model& m, const plan::Plan& p, const CodegenOptions& o = {}) {
  auto fw = GenerateFirmware(m.g, p, m.q, o);
  EXPECT_TRUE(fw.ok()) << fw.status().message();
  return fw.ok() ? std::move(fw).value() : Firmware{};
}

const std::string& File(const Firmware& fw, const std::string& path) {
  for (const auto& [p, content] : fw.files)
    if (p == path) return content;
  static const std::string kNone;
  ADD_FAILURE() << "no file " << path;
  return kNone;
}

// A fresh directory for one firmware project.
std::string FreshDir(const std::string& name) {
  std::string dir =
      ::testing::TempDir() + "/sramplan_codegen_" + std::to_string(getpid()) + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs a shell command; returns its exit status and fills stdout+stderr.
int Sh(const std::string& cmd, std::string* output) {
  output->clear();
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) output->append(buf, n);
  int st = pclose(f);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool HaveTool(const std::string& tool) {
  std::string out;
  return Sh("command -v " + tool, &out) == 0;
}

std::string Hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// The checksum a run printed ("checksum 0x........"), or "".
std::string PrintedChecksum(const std::string& out) {
  std::smatch m;
  if (std::regex_search(out, m, std::regex("checksum (0x[0-9a-f]{8})"))) return m[1];
  return "";
}

// The runtime compiled once for the host (the copy every firmware directory carries is identical).
std::string HostRuntimeObjects(const std::string& fw_dir) {
  static std::string objects;
  if (!objects.empty()) return objects;
  std::string dir = FreshDir("host_runtime");
  std::string out;
  for (const auto& e : std::filesystem::directory_iterator(fw_dir + "/runtime")) {
    if (e.path().extension() != ".c") continue;
    std::string obj = dir + "/" + e.path().stem().string() + ".o";
    int rc = Sh("cc -std=c99 -O2 -c -I'" + fw_dir + "/runtime' '" + e.path().string() + "' -o '" +
                    obj + "'",
                &out);
    EXPECT_EQ(rc, 0) << out;
    objects += " '" + obj + "'";
  }
  return objects;
}

// Writes the firmware, compiles model.c with the host compiler against the runtime and runs it;
// returns what it printed.
std::string RunOnHost(const Firmware& fw, const std::string& name) {
  std::string dir = FreshDir(name);
  Status st = WriteFirmware(fw, dir);
  EXPECT_TRUE(st.ok()) << st.message();
  std::string out;
  int rc = Sh("cc -std=c99 -O1 -Wall -Werror -I'" + dir + "/runtime' '" + dir + "/model.c'" +
                  HostRuntimeObjects(dir) + " -o '" + dir + "/host_model'",
              &out);
  EXPECT_EQ(rc, 0) << "host compile of " << name << ":\n" << out;
  if (rc != 0) return "";
  rc = Sh("'" + dir + "/host_model'", &out);
  EXPECT_EQ(rc, 0) << name << ": " << out;
  return out;
}

TEST(Codegen, DeterministicWithTheExactArena) {
  Model m = LoadFile("models/mcunet_blocks/S1.graph.json");
  for (const std::string s : {"linear", "tflm", "inplace"}) {
    plan::Plan p = Plan(m.g, "stm32f411re", s);
    Firmware a = Generate(m, p), b = Generate(m, Plan(m.g, "stm32f411re", s));
    ASSERT_EQ(a.files.size(), b.files.size());
    for (size_t i = 0; i < a.files.size(); ++i) {
      EXPECT_EQ(a.files[i].first, b.files[i].first);
      EXPECT_TRUE(a.files[i].second == b.files[i].second)
          << s << ": " << a.files[i].first << " differs";
    }
    EXPECT_EQ(a.arena_bytes, p.metrics.arena_bytes) << s;
    const std::string& c = File(a, "model.c");
    EXPECT_NE(
        c.find("#define SRAMPLAN_ARENA_BYTES " + std::to_string(p.metrics.arena_bytes) + "\n"),
        std::string::npos)
        << s;
    EXPECT_NE(c.find("static uint8_t sramplan_arena[SRAMPLAN_ARENA_BYTES"), std::string::npos);
    EXPECT_NE(c.find("static const int8_t sp_const_"), std::string::npos) << "weights in .rodata";
    EXPECT_NE(c.find("static const int8_t sp_input_s1_in["), std::string::npos)
        << "input in .rodata";
    EXPECT_NE(c.find("memcpy(sramplan_arena + "), std::string::npos)
        << "input copied into the arena";
    EXPECT_EQ(File(a, "expected_checksum.txt"), Hex(a.expected_checksum) + "\n");
    EXPECT_NE(File(a, "link.ld").find("RAM   (rwx) : ORIGIN = 0x20000000, LENGTH = 131072"),
              std::string::npos);
    EXPECT_NE(File(a, "link.ld").find("FLASH (rx)  : ORIGIN = 0x00000000, LENGTH = 524288"),
              std::string::npos);
    EXPECT_NE(File(a, "Makefile").find("-mcpu=$(CPU)"), std::string::npos);
    EXPECT_EQ(a.cpu, "cortex-m4");
    EXPECT_EQ(a.machine, "mps2-an386");
  }
  // Cortex-M7 boards run on QEMU's AN500.
  Firmware f7 = Generate(m, Plan(m.g, "stm32f767zi", "tflm"));
  EXPECT_EQ(f7.cpu, "cortex-m7");
  EXPECT_EQ(f7.machine, "mps2-an500");
}

// The call records the host executors run are what the firmware prints: the same op, the same
// kernel calls, so the emitted C must reproduce the arena executor's bytes.
TEST(Codegen, HostBuildOfModelCMatchesTheArenaExecutor) {
  struct Case {
    std::string name;
    Model m;
  };
  std::vector<Case> cases;
  cases.push_back({"chain", LoadText(sramplan::testing::kChainGraph, "chain")});
  cases.push_back({"bottleneck", LoadText(sramplan::testing::kBottleneckGraph, "bottleneck")});
  cases.push_back({"mixed", LoadText(kMixedGraph, "mixed")});
  cases.push_back({"S1", LoadFile("models/mcunet_blocks/S1.graph.json")});
  cases.push_back({"B9", LoadFile("models/mcunet_blocks/B9.graph.json")});
  int in_place = 0;
  for (const Case& c : cases)
    for (const std::string s : {"linear", "tflm", "inplace"}) {
      plan::Plan p = Plan(c.m.g, "stm32f411re", s);
      Firmware fw = Generate(c.m, p);
      if (File(fw, "model.c").find("in place through") != std::string::npos) ++in_place;
      std::string out = RunOnHost(fw, c.name + "_" + s);
      EXPECT_EQ(PrintedChecksum(out), Hex(fw.expected_checksum))
          << c.name << " " << s << ": " << out;
      EXPECT_NE(out.find("matches the host executor"), std::string::npos) << out;
    }
  EXPECT_GT(in_place, 0) << "no plan exercised the in-place depthwise path";
}

// vmcu plans: single ops whose output overlaps their input at segment level and fused inverted
// bottlenecks run the segment-aware kernels on the arena as the circular pool, with the host
// executor's parameters (repacked weights), so the bytes match.
TEST(Codegen, VmcuHostBuildMatchesTheArenaExecutor) {
  int seg_calls = 0, fused = 0, single = 0;
  // B1's plan fuses the 3x3 stride-2 stem as the expansion; S7's plan has single-op
  // segment-overlap steps (its 3x3 image is too small for the fused workspace to pay off).
  for (const std::string name : {"S1", "B1", "B3", "S7"}) {
    Model m = LoadFile("models/mcunet_blocks/" + name + ".graph.json");
    plan::Plan p = Plan(m.g, "stm32f411re", "vmcu");
    Firmware fw = Generate(m, p);
    const std::string& c = File(fw, "model.c");
    EXPECT_NE(c.find("#include \"sramplan_rt_seg.h\""), std::string::npos);
    for (size_t i = 0; (i = c.find("SP_CALL(", i)) != std::string::npos; ++i)
      if (c.compare(c.find(", ", i) + 2, 7, "sp_seg_") == 0) ++seg_calls;
    if (c.find("sp_seg_bottleneck_s8(") != std::string::npos) ++fused;
    if (c.find("sp_seg_conv_s8(") != std::string::npos ||
        c.find("sp_seg_depthwise_s8(") != std::string::npos)
      ++single;
    EXPECT_EQ(fw.arena_bytes, p.metrics.arena_bytes) << name;
    std::string out = RunOnHost(fw, name + "_vmcu");
    EXPECT_EQ(PrintedChecksum(out), Hex(fw.expected_checksum)) << name << ": " << out;
    EXPECT_NE(out.find("matches the host executor"), std::string::npos) << name << ": " << out;
    // The same model and quantisation under a plain plan give the same output bytes.
    Firmware plain = Generate(m, Plan(m.g, "stm32f411re", "tinyengine"));
    EXPECT_EQ(fw.expected_checksum, plain.expected_checksum) << name;
  }
  EXPECT_GT(seg_calls, 0) << "no plan called a segment-aware kernel";
  EXPECT_GT(fused, 0) << "no plan fused an inverted bottleneck";
  EXPECT_GT(single, 0) << "no plan had a single-op segment-overlap step";
}

// The call record of an op is what ExecuteCalls runs: every MCU op kind yields only runtime
// kernels (no host loops, no staging buffers), and the in-place depthwise record is one loop.
TEST(Codegen, CallRecordsOfMcuOps) {
  Model m = LoadText(kMixedGraph, "mixed");
  std::map<std::string, std::string> first_fn;
  for (const ir::Op& op : m.g.ops()) {
    auto c = exec::BuildCallsS8(m.g, op, m.q);
    ASSERT_TRUE(c.ok()) << op.name << ": " << c.status().message();
    EXPECT_FALSE(c->host_loop) << op.name;
    EXPECT_TRUE(c->temp_bytes.empty()) << op.name;
    if (ir::IsViewOp(op.type)) {
      EXPECT_TRUE(c->blocks.empty()) << op.name;
      continue;
    }
    ASSERT_FALSE(c->blocks.empty()) << op.name;
    first_fn[op.name] = exec::Signature(c->blocks[0].calls[0].fn).name;
  }
  EXPECT_EQ(first_fn["pad"], "sp_pad");
  EXPECT_EQ(first_fn["conv1"], "sp_conv_s8");
  EXPECT_EQ(first_fn["clip"], "sp_clamp_s8");
  EXPECT_EQ(first_fn["mp"], "sp_max_pool_s8");
  EXPECT_EQ(first_fn["ap"], "sp_avg_pool_s8");
  EXPECT_EQ(first_fn["add"], "sp_add_s8");
  EXPECT_EQ(first_fn["cat"], "sp_copy");
  EXPECT_EQ(first_fn["gap"].rfind("sp_global_avg_pool", 0), 0u) << first_fn["gap"];
  EXPECT_EQ(first_fn["fc"], "sp_fully_connected_s8");
  const ir::Op* dwp = nullptr;
  for (const ir::Op& op : m.g.ops())
    if (op.name == "dw") dwp = &op;
  ASSERT_NE(dwp, nullptr);
  const ir::Op& dw = *dwp;
  auto ip = exec::BuildDepthwiseInPlaceCallsS8(m.g, dw, m.q, 36);
  ASSERT_TRUE(ip.ok()) << ip.status().message();
  ASSERT_EQ(ip->blocks.size(), 1u);
  EXPECT_EQ(ip->blocks[0].count, 8);
  ASSERT_EQ(ip->blocks[0].calls.size(), 2u);
  EXPECT_EQ(exec::Signature(ip->blocks[0].calls[1].fn).name, std::string("sp_copy"));
  EXPECT_EQ(exec::BuildDepthwiseInPlaceCallsS8(m.g, dw, m.q, 35).status().code(),
            StatusCode::kMismatch);
}

TEST(Codegen, UnsupportedOpsAreNamed) {
  Model m = LoadText(kNchwGraph, "nchw");
  auto fw = GenerateFirmware(m.g, Plan(m.g, "stm32f411re", "tflm"), m.q, {});
  ASSERT_FALSE(fw.ok());
  EXPECT_EQ(fw.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(fw.status().message().find("conv_nchw"), std::string::npos) << fw.status().message();
  Model s1 = LoadFile("models/mcunet_blocks/S1.graph.json");
  CodegenOptions o;
  o.stack_bytes = 100;
  EXPECT_EQ(GenerateFirmware(s1.g, Plan(s1.g, "stm32f411re", "tflm"), s1.q, o).status().code(),
            StatusCode::kInvalidArgument);
}

bool HaveArmTools(std::string* missing) {
  for (const char* t : {"arm-none-eabi-gcc", "qemu-system-arm", "make"})
    if (!HaveTool(t)) {
      *missing = t;
      return false;
    }
  return true;
}

TEST(Codegen, CortexM4FirmwareRunsInQemu) {
  std::string missing;
  if (!HaveArmTools(&missing))
    GTEST_SKIP() << missing << " is not installed (scripts/install-deps.sh)";
  Model m = LoadFile("models/mcunet_blocks/S1.graph.json");
  Firmware fw = Generate(m, Plan(m.g, "stm32f411re", "inplace"));
  std::string dir = FreshDir("qemu_S1");
  ASSERT_TRUE(WriteFirmware(fw, dir).ok());
  std::string out;
  ASSERT_EQ(Sh("make -s -C '" + dir + "'", &out), 0) << out;
  EXPECT_NE(out.find("model.elf"), std::string::npos) << "arm-none-eabi-size output: " << out;
  ASSERT_EQ(Sh("timeout 60 make -s -C '" + dir + "' run", &out), 0) << out;
  EXPECT_EQ(PrintedChecksum(out), Hex(fw.expected_checksum)) << out;
  EXPECT_NE(out.find("matches the host executor"), std::string::npos) << out;
  EXPECT_NE(out.find("stack high-water"), std::string::npos) << out;
  // make check compares with expected_checksum.txt.
  EXPECT_EQ(Sh("timeout 60 make -s -C '" + dir + "' check", &out), 0) << out;
}

// B3 under vmcu (one fused bottleneck with its residual, output over the input) fits the
// STM32F411RE's 128 KiB, and the firmware prints the host executor's checksum on Cortex-M4.
TEST(Codegen, VmcuCortexM4FirmwareRunsInQemu) {
  std::string missing;
  if (!HaveArmTools(&missing))
    GTEST_SKIP() << missing << " is not installed (scripts/install-deps.sh)";
  Model m = LoadFile("models/mcunet_blocks/B3.graph.json");
  Firmware fw = Generate(m, Plan(m.g, "stm32f411re", "vmcu"));
  EXPECT_TRUE(fw.fits);
  ASSERT_NE(File(fw, "model.c").find("sp_seg_bottleneck_s8("), std::string::npos);
  std::string dir = FreshDir("qemu_B3_vmcu");
  ASSERT_TRUE(WriteFirmware(fw, dir).ok());
  std::string out;
  ASSERT_EQ(Sh("make -s -C '" + dir + "'", &out), 0) << out;
  ASSERT_EQ(Sh("timeout 120 make -s -C '" + dir + "' run", &out), 0) << out;
  EXPECT_EQ(PrintedChecksum(out), Hex(fw.expected_checksum)) << out;
  EXPECT_NE(out.find("matches the host executor"), std::string::npos) << out;
  EXPECT_EQ(Sh("timeout 120 make -s -C '" + dir + "' check", &out), 0) << out;
}

// The whole MCUNet-320KB-ImageNet under vmcu runs on a Cortex-M4 with a 128 KiB RAM region (the
// STM32F405RG: the F411RE's 128 KiB of SRAM, but the 1 MiB of flash its 738 KiB of weights need)
// and prints the host executor's checksum; TinyEngine's plan fails to link in the same RAM.
TEST(Codegen, WholeMcunetVmcuFirmwareRunsIn128KiB) {
  std::string missing;
  Model m = LoadFile("models/mcunet_blocks/mcunet-320kb-imagenet.graph.json");
  Firmware fw = Generate(m, Plan(m.g, "stm32f405rg", "vmcu"));
  EXPECT_TRUE(fw.fits);
  EXPECT_EQ(fw.ram_capacity, 131072);
  EXPECT_LE(fw.arena_bytes, 102700) << "above the vMCU paper's 102.7 KB";
  ASSERT_NE(File(fw, "model.c").find("sp_seg_bottleneck_s8("), std::string::npos);
  Firmware te = Generate(m, Plan(m.g, "stm32f405rg", "tinyengine"));
  EXPECT_FALSE(te.fits);
  if (!HaveArmTools(&missing))
    GTEST_SKIP() << missing << " is not installed (scripts/install-deps.sh)";
  std::string dir = FreshDir("qemu_mcunet_vmcu");
  ASSERT_TRUE(WriteFirmware(fw, dir).ok());
  std::string out;
  ASSERT_EQ(Sh("make -s -C '" + dir + "'", &out), 0) << out;
  // arm-none-eabi-size: text data bss dec hex filename.
  std::smatch mm;
  ASSERT_TRUE(std::regex_search(out, mm, std::regex("\\s*([0-9]+)\\s+([0-9]+)\\s+([0-9]+)\\s+[0-9]+\\s+[0-9a-f]+\\s+model\\.elf")))
      << out;
  const int64_t data = std::stoll(mm[2]), bss = std::stoll(mm[3]);
  EXPECT_LE(data + bss, 131072) << out;
  EXPECT_GE(bss, fw.arena_bytes) << out;
  ASSERT_EQ(Sh("timeout 300 make -s -C '" + dir + "' check", &out), 0) << out;
  EXPECT_NE(out.find("matches the host executor"), std::string::npos) << out;
  std::string tdir = FreshDir("overflow_mcunet_tinyengine");
  ASSERT_TRUE(WriteFirmware(te, tdir).ok());
  EXPECT_NE(Sh("make -s -C '" + tdir + "'", &out), 0) << out;
  EXPECT_NE(out.find("region `RAM' overflowed"), std::string::npos) << out;
}

// A vmcu plan with a circular pool: wrapped tensors (the input among them) are written in two
// pieces and addressed modulo the arena by the segment kernels; the host build and the Cortex-M4
// firmware print the host executor's checksum.
TEST(Codegen, CircularPoolFirmwareMatchesTheArenaExecutor) {
  const std::string text = sramplan::testing::ConvChainGraph(8);
  Model m = LoadText(text.c_str(), "conv_chain");
  plan::Plan p = Plan(m.g, "stm32f411re", "vmcu");
  ASSERT_EQ(p.pools.size(), 1u);
  Firmware fw = Generate(m, p);
  EXPECT_EQ(fw.arena_bytes, p.pools[0].bytes);
  const std::string& c = File(fw, "model.c");
  bool input_wraps = false;
  for (const auto& b : p.buffers) input_wraps = input_wraps || (b.tensor == "x" && plan::Wraps(p, b));
  if (input_wraps) {
    EXPECT_NE(c.find("wrapped to the pool's start"), std::string::npos);
  }
  std::string out = RunOnHost(fw, "conv_chain_vmcu");
  EXPECT_EQ(PrintedChecksum(out), Hex(fw.expected_checksum)) << out;
  EXPECT_NE(out.find("matches the host executor"), std::string::npos) << out;
  std::string missing;
  if (!HaveArmTools(&missing))
    GTEST_SKIP() << missing << " is not installed (scripts/install-deps.sh)";
  std::string dir = FreshDir("qemu_conv_chain_vmcu");
  ASSERT_TRUE(WriteFirmware(fw, dir).ok());
  ASSERT_EQ(Sh("make -s -C '" + dir + "'", &out), 0) << out;
  ASSERT_EQ(Sh("timeout 120 make -s -C '" + dir + "' check", &out), 0) << out;
  EXPECT_NE(out.find("matches the host executor"), std::string::npos) << out;
}

TEST(Codegen, CortexM7FirmwareRunsInQemu) {
  std::string missing;
  if (!HaveArmTools(&missing))
    GTEST_SKIP() << missing << " is not installed (scripts/install-deps.sh)";
  Model m = LoadText(sramplan::testing::kBottleneckGraph, "bottleneck");
  Firmware fw = Generate(m, Plan(m.g, "stm32f767zi", "inplace"));
  ASSERT_EQ(fw.machine, "mps2-an500");
  ASSERT_NE(File(fw, "model.c").find("in place through"), std::string::npos);
  std::string dir = FreshDir("qemu_m7_bottleneck");
  ASSERT_TRUE(WriteFirmware(fw, dir).ok());
  std::string out;
  ASSERT_EQ(Sh("make -s -C '" + dir + "'", &out), 0) << out;
  ASSERT_EQ(Sh("timeout 60 make -s -C '" + dir + "' run", &out), 0) << out;
  EXPECT_EQ(PrintedChecksum(out), Hex(fw.expected_checksum)) << out;
}

TEST(Codegen, PlanThatDoesNotFitFailsToLinkNamingTheOverflow) {
  std::string missing;
  Model m = LoadFile("models/mcunet_blocks/S1.graph.json");
  // S1's tflm arena is tens of KiB; 16 KiB of SRAM cannot hold it.
  plan::Plan p = Plan(m.g, "sram:16KiB", "tflm");
  EXPECT_FALSE(p.metrics.fits);
  Firmware fw = Generate(m, p);
  EXPECT_FALSE(fw.fits);
  EXPECT_EQ(fw.ram_capacity, 16384);
  EXPECT_NE(File(fw, "link.ld").find("LENGTH = 16384"), std::string::npos);
  if (!HaveArmTools(&missing))
    GTEST_SKIP() << missing << " is not installed (scripts/install-deps.sh)";
  std::string dir = FreshDir("overflow_S1");
  ASSERT_TRUE(WriteFirmware(fw, dir).ok());
  std::string out;
  EXPECT_NE(Sh("make -s -C '" + dir + "'", &out), 0) << out;
  const int64_t excess = fw.arena_bytes + fw.stack_bytes - fw.ram_capacity;
  std::smatch mm;
  ASSERT_TRUE(std::regex_search(out, mm, std::regex("region `RAM' overflowed by ([0-9]+) bytes")))
      << out;
  // The overflow is the arena and the stack past the capacity, plus the few statics around them.
  EXPECT_GE(std::stoll(mm[1]), excess);
  EXPECT_LT(std::stoll(mm[1]), excess + 256);
}

TEST(Codegen, Cli) {
  std::string model = SourcePath("models/mcunet_blocks/S1.graph.json");
  std::string dir = FreshDir("cli_S1");
  std::string out, err;
  int rc = sramplan::testing::RunCli("codegen '" + model +
                                         "' --target stm32f411re --strategy inplace --out '" + dir +
                                         "' --stack 2048",
                                     &out, &err);
  EXPECT_EQ(rc, 0) << out << err;
  EXPECT_NE(out.find("stack 2048 B"), std::string::npos) << out;
  for (const char* f : {"model.c", "startup.c", "link.ld", "Makefile", "README.md",
                        "expected_checksum.txt", "runtime/sramplan_rt_conv_s8.c"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + f)) << f;
  std::ifstream ld(dir + "/link.ld");
  std::stringstream ss;
  ss << ld.rdbuf();
  EXPECT_NE(ss.str().find("__stack_size = 2048;"), std::string::npos);
  // Does not fit: the C is still written, exit 2.
  std::string dir2 = FreshDir("cli_S1_small");
  rc = sramplan::testing::RunCli("codegen '" + model + "' --target sram:16KiB --out '" + dir2 + "'",
                                 &out, &err);
  EXPECT_EQ(rc, 2) << out << err;
  EXPECT_TRUE(std::filesystem::exists(dir2 + "/model.c"));
  // An op the firmware cannot run: exit 1, named.
  std::string nchw = sramplan::testing::WriteTempFile("nchw.graph.json", kNchwGraph);
  rc = sramplan::testing::RunCli(
      "codegen '" + nchw + "' --target stm32f411re --out '" + FreshDir("cli_nchw") + "'", &out,
      &err);
  EXPECT_EQ(rc, 1) << out << err;
  EXPECT_NE(err.find("conv_nchw"), std::string::npos) << err;
  // vmcu plans (segment-overlap steps, fused bottlenecks) run the segment-aware kernels.
  std::string dir3 = FreshDir("cli_S1_vmcu");
  rc = sramplan::testing::RunCli(
      "codegen '" + model + "' --target stm32f411re --strategy vmcu --out '" + dir3 + "'", &out,
      &err);
  EXPECT_EQ(rc, 0) << out << err;
  EXPECT_TRUE(std::filesystem::exists(dir3 + "/runtime/sramplan_rt_seg_s8.c"));
  EXPECT_TRUE(std::filesystem::exists(dir3 + "/runtime/sramplan_rt_seg.h"));
}

// Removes this process's firmware directories at the end.
class CleanUp : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(
        ::testing::TempDir() + "/sramplan_codegen_" + std::to_string(getpid()), ec);
  }
};
const auto* const kCleanUp = ::testing::AddGlobalTestEnvironment(new CleanUp);

// Firmware from ONNX exports (issue 13): the CLI canonicalises the graph (channels-last, folded
// activations), plans it with vmcu on the QEMU board's own memory map and the firmware prints the
// host executor's checksum. MobileNetV2 at 96x96 and SqueezeNet 1.0 at 96x96.
TEST(Codegen, OnnxCnnFirmwareRunsInQemu) {
  std::string missing;
  if (!HaveArmTools(&missing)) GTEST_SKIP() << missing << " is not installed (scripts/install-deps.sh)";
  for (const char* model : {"mobilenet_v2", "squeezenet1_0"}) {
    SCOPED_TRACE(model);
    const std::string dir = FreshDir(std::string("onnx_") + model);
    auto r = sramplan::testing::Cli("codegen " + SourcePath(std::string("models/onnx/") + model + ".onnx") +
                                    " --input-shape 1x3x96x96 --target mps2-an386 --strategy vmcu --out '" +
                                    dir + "'");
    ASSERT_EQ(r.rc, 0) << r.all();
    std::string out;
    ASSERT_EQ(Sh("timeout 300 make -s -C '" + dir + "' check", &out), 0) << out;
    EXPECT_NE(out.find("matches the host executor"), std::string::npos) << out;
  }
  // With --no-canonicalize the NCHW export is refused with the fix named.
  auto r = sramplan::testing::Cli("codegen " + SourcePath("models/onnx/mobilenet_v2.onnx") +
                                  " --no-canonicalize --target mps2-an386 --strategy tflm --out '" +
                                  FreshDir("onnx_nchw") + "'");
  EXPECT_EQ(r.rc, 1) << r.all();
  EXPECT_NE(r.err.find("drop --no-canonicalize"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sramplan::codegen
