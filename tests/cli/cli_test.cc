// The CLI end to end: exit codes and messages for good and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <random>
#include <sstream>

#include "test_graphs.h"
#include "test_util.h"

namespace sramplan::testing {
namespace {

std::string Q(const std::string& s) { return "'" + s + "'"; }


void ExpectBadInput(const std::string& args, const std::string& needle) {
  CliRun r = Cli(args);
  EXPECT_EQ(r.rc, 1) << args << "\nstdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\nstderr: " << r.err;
}

std::string Graph(const std::string& name, const std::string& text) { return WriteTempFile(name, text); }

TEST(Cli, Targets) {
  CliRun r = Cli("targets");
  EXPECT_EQ(r.rc, 0);
  for (const char* t : {"stm32f411re", "stm32f767zi", "optimus-accel", "exynos-npu", "diannao"})
    EXPECT_NE(r.out.find(t), std::string::npos) << t;
  r = Cli("targets --print stm32f767zi");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("\"capacity\": 524288"), std::string::npos) << r.out;
}

TEST(Cli, PlanFitsAndWritesOutputs) {
  std::string g = Graph("chain.graph.json", kChainGraph);
  std::string json = WriteTempFile("chain.plan.json", "");
  std::string csv = WriteTempFile("csvdir.placeholder", "") + ".d";
  CliRun r = Cli("plan " + Q(g) + " --target stm32f411re --strategy tflm --json " + Q(json) + " --csv " + Q(csv));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("verdict: FITS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory map"), std::string::npos) << r.out;
  std::ifstream sum(csv + "/summary.csv"), per(csv + "/per_layer.csv");
  EXPECT_TRUE(sum.good());
  EXPECT_TRUE(per.good());
  std::stringstream ss;
  ss << per.rdbuf();
  EXPECT_NE(ss.str().find("tflm,1,relu,Relu"), std::string::npos) << ss.str();
  r = Cli("check-plan " + Q(json));
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
}

TEST(Cli, BrokenPlanFileIsCaught) {
  std::string g = Graph("chain2.graph.json", kChainGraph);
  std::string json = WriteTempFile("chain2.plan.json", "");
  ASSERT_EQ(Cli("plan " + Q(g) + " --target stm32f411re --strategy tflm -q --json " + Q(json)).rc, 0);
  std::ifstream in(json);
  std::stringstream ss;
  ss << in.rdbuf();
  // Move the buffer of "a" onto "b": both are live at step 1.
  nlohmann::json j = nlohmann::json::parse(ss.str());
  int64_t b_offset = -1;
  for (const auto& b : j["buffers"])
    if (b["tensor"] == "b") b_offset = b["offset"];
  ASSERT_GE(b_offset, 0);
  for (auto& b : j["buffers"])
    if (b["tensor"] == "a") b["offset"] = b_offset;
  std::string text = j.dump(1);
  std::string bad = WriteTempFile("chain2.bad.json", text);
  CliRun r = Cli("check-plan " + Q(bad));
  EXPECT_EQ(r.rc, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("overlap while both are live"), std::string::npos) << r.out;
}

TEST(Cli, DoesNotFitExplainsWhy) {
  std::string g = Graph("bneck.graph.json", kBottleneckGraph);
  CliRun r = Cli("plan " + Q(g) + " --target sram:4KiB --strategy tflm");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.out.find("required 8000 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("available 4096 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("excess 3904 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peak at step"), std::string::npos) << r.out;
}

TEST(Cli, StrategyAllSideBySide) {
  std::string g = Graph("bneck2.graph.json", kBottleneckGraph);
  CliRun r = Cli("plan " + Q(g) + " --target stm32f411re --strategy all");
  EXPECT_EQ(r.rc, 0) << r.err;
  for (const char* s : {"naive", "linear", "tflm", "inplace"}) EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST(Cli, Inspect) {
  std::string g = Graph("bneck3.graph.json", kBottleneckGraph);
  CliRun r = Cli("inspect " + Q(g));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("Conv(depthwise)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("51200"), std::string::npos) << r.out;  // pw MACs: 100 px * 32 * 16
}

TEST(Cli, BadInputs) {
  ExpectBadInput("plan /nonexistent/model.onnx --target stm32f411re", "cannot open");
  ExpectBadInput("plan " + Q(WriteTempFile("empty.onnx", "")) + " --target stm32f411re", "is empty");
  std::mt19937 rng(3);
  std::string junk(4096, '\0');
  for (auto& c : junk) c = static_cast<char>(rng());
  ExpectBadInput("plan " + Q(WriteTempFile("junk.onnx", junk)) + " --target stm32f411re", "not a valid ONNX");
  std::ifstream in(SourcePath("models/onnx/resnet18.onnx"), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!ss.str().empty())
    ExpectBadInput("plan " + Q(WriteTempFile("trunc.onnx", ss.str().substr(0, ss.str().size() / 2))) +
                       " --target stm32f411re",
                   "not a valid ONNX");
  ExpectBadInput("plan " + Q(WriteTempFile("bad.json", "{\"format\": \"sramplan-graph\", ")) + " --target stm32f411re",
                 "not valid JSON");
  std::string unknown = kChainGraph;
  unknown.replace(unknown.find("\"Relu\""), 6, "\"FooBar\"");
  ExpectBadInput("plan " + Q(Graph("unknown.graph.json", unknown)) + " --target stm32f411re", "'FooBar'");
  ExpectBadInput("plan " + Q(Graph("unknown2.graph.json", unknown)) + " --target stm32f411re", "op 'relu'");
  CliRun opaque = Cli("plan " + Q(Graph("unknown3.graph.json", unknown)) + " --target stm32f411re --allow-unknown-ops");
  EXPECT_EQ(opaque.rc, 1);  // an opaque op's output shape must be declared: the message says so
  EXPECT_NE(opaque.err.find("give the shape"), std::string::npos) << opaque.err;

  std::string cycle = R"({"format": "sramplan-graph", "name": "cyc", "tensors": [
      {"name": "a", "shape": [4]}, {"name": "b", "shape": [4], "kind": "output"}],
    "ops": [{"name": "r1", "type": "Relu", "inputs": ["b"], "outputs": ["a"]},
            {"name": "r2", "type": "Relu", "inputs": ["a"], "outputs": ["b"]}]})";
  ExpectBadInput("plan " + Q(Graph("cycle.graph.json", cycle)) + " --target stm32f411re", "cycle");
  for (const char* dims : {"[1, 0, 8, 4]", "[1, -8, 8, 4]", "[4611686018427387904, 4, 4, 4]"}) {
    std::string bad = kChainGraph;
    bad.replace(bad.find("[1, 8, 8, 4]"), 12, dims);
    ExpectBadInput("plan " + Q(Graph("dims.graph.json", bad)) + " --target stm32f411re", "tensor 'x'");
  }
  std::string zero_target = WriteTempFile("zero.json", R"({"name": "z", "levels": [{"name": "s", "capacity": 0}]})");
  ExpectBadInput("plan " + Q(Graph("chain3.graph.json", kChainGraph)) + " --target " + Q(zero_target),
                 "capacity must be positive");
  ExpectBadInput("plan " + Q(Graph("chain4.graph.json", kChainGraph)) + " --target stm32f411re --strategy magic",
                 "unknown --strategy 'magic'");
  ExpectBadInput("plan " + Q(Graph("chain5.graph.json", kChainGraph)) + " --target nowhere", "unknown target");
  ExpectBadInput("plan", "model");
  ExpectBadInput("frobnicate", "frobnicate");
  ExpectBadInput("check-plan " + Q(WriteTempFile("notaplan.json", "{}")), "schema_version: missing");
}

TEST(Cli, UnknownOpAsOpaqueWithDeclaredShape) {
  std::string g = kChainGraph;
  g.replace(g.find("\"Relu\""), 6, "\"FooBar\"");
  g.replace(g.find("{\"name\": \"b\"}"), 13, "{\"name\": \"b\", \"shape\": [1, 8, 8, 8]}");
  CliRun r = Cli("plan " + Q(Graph("opaque.graph.json", g)) + " --target stm32f411re --allow-unknown-ops");
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST(Cli, PlaceCsvProblem) {
  // Three buffers: a and b overlap in time (ids 7 and 9), c reuses a's bytes. Lower bound 30.
  std::string csv = WriteTempFile("place.csv", "id,lower,upper,size\n7,0,2,10\n9,1,3,20\n4,2,4,10\n");
  std::string sol = WriteTempFile("place_solution.csv", "");
  CliRun r = Cli("place " + Q(csv) + " --capacity 30 --out " + Q(sol));
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("lower bound 30 B, arena 30 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FITS"), std::string::npos) << r.out;
  std::ifstream in(sol);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("id,lower,upper,size,offset"), std::string::npos) << ss.str();
  EXPECT_EQ(Cli("place " + Q(csv) + " --capacity 29").rc, 2);
  ExpectBadInput("place " + Q(WriteTempFile("bad_place.csv", "id,lower,upper,size\n1,5,3,10\n")) + " --capacity 100",
                 "bad_place.csv:2: upper (3) must be greater than lower (5)");
  ExpectBadInput("place " + Q(csv) + " --capacity lots", "--capacity: 'lots' is not a size");
}

}  // namespace
}  // namespace sramplan::testing
