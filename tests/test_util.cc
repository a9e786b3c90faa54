#include "test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "driver/strategy.h"
#include "exec/executor.h"
#include "exec/quantize.h"
#include "import/import.h"
#include "target/target.h"

namespace sramplan::testing {
namespace {

std::string TempDir() {
  static std::string dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/sramplan_test_XXXXXX";
    char* made = mkdtemp(tmpl.data());
    return made ? std::string(made) : std::string("/tmp");
  }();
  return dir;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string SourcePath(const std::string& relative) {
  return std::string(SRAMPLAN_SOURCE_DIR) + "/" + relative;
}

std::string WriteTempFile(const std::string& name, const std::string& content) {
  std::string path = TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << content;
  return path;
}

namespace {

// `err` null: stderr goes to `out` too.
int RunCommand(const std::string& command, std::string* out, std::string* err) {
  static int counter = 0;
  std::string base = TempDir() + "/cli" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  std::string cmd = command + " >" + base + ".out " + (err ? "2>" + base + ".err" : std::string("2>&1"));
  int rc = std::system(cmd.c_str());
  if (out) *out = Slurp(base + ".out");
  if (err) *err = Slurp(base + ".err");
  if (rc == -1) return -1;
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

}  // namespace

int RunCli(const std::string& args, std::string* out, std::string* err) {
  std::string ignored;
  return RunCommand(std::string(SRAMPLAN_CLI) + " " + args, out, err ? err : &ignored);
}

CliRun Sh(const std::string& command) {
  CliRun r;
  r.rc = RunCommand(command, &r.out, &r.err);
  return r;
}

int Sh(const std::string& command, std::string* output) {
  const int rc = RunCommand(command, output, nullptr);
  return rc >= 128 ? -1 : rc;
}

bool HaveArmTools(std::string* missing) {
  for (const char* t : {"arm-none-eabi-gcc", "qemu-system-arm", "make"})
    if (Sh(std::string("command -v ") + t).rc != 0) {
      *missing = t;
      return false;
    }
  return true;
}

std::string FreshDir(const std::string& name) {
  const std::string dir = TempDir() + "/fresh" + std::to_string(getpid()) + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

analysis::Schedule PlanOrder(const ir::Graph& g, const plan::Plan& p) {
  std::map<std::string, ir::OpId> ids;
  for (const ir::Op& op : g.ops()) ids[op.name] = op.id;
  analysis::Schedule s;
  for (const auto& st : p.steps)
    for (const auto& so : st.ops) s.push_back(ids.at(so.name));
  return s;
}

std::string RunPlanAgainstNaive(const ir::Graph& g, const plan::Plan& p, uint64_t seed) {
  auto q = exec::QuantizeModel(g, seed);
  if (!q.ok()) return "quantize: " + q.status().message();
  auto naive = exec::RunNaive(g, PlanOrder(g, p), q->data, &*q);
  if (!naive.ok()) return "naive: " + naive.status().message();
  auto arena = exec::RunArena(g, p, q->data, &*q);
  if (!arena.ok()) return "arena: " + arena.status().message();
  return exec::Compare(g, *naive, *arena, p);
}

CliRun Cli(const std::string& args) {
  CliRun r;
  r.rc = RunCli(args, &r.out, &r.err);
  return r;
}

ir::Graph LoadNativeGraph(const std::string& text) {
  auto g = import::ImportModelBytes(text, "test.graph.json", {});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? std::move(g).value() : ir::Graph();
}

plan::Plan PlanInt8(const ir::Graph& g, const std::string& strategy, const std::string& target) {
  auto t = target::LoadTarget(target);
  EXPECT_TRUE(t.ok()) << t.status().message();
  if (!t.ok()) return {};
  driver::PlanOptions o;
  o.dtype_name = "int8";
  auto p = driver::RunStrategy(g, *t, strategy, o);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? std::move(p).value() : plan::Plan();
}

}  // namespace sramplan::testing
