// The C emitter's internals (codegen.cc): text helpers for C source (codegen_text.cc) and the
// Emitter, whose members are defined by what they write: names and indexes (codegen.cc), the steps
// of sramplan_run (codegen_steps.cc, printing exec::LowerStep's records) and the project files
// (codegen_files.cc).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/codegen.h"
#include "exec/kernels.h"
#include "exec/lower_step.h"

namespace sramplan::codegen {

// QEMU's mps2 boards (AN385/AN386/AN500): 4 MiB of code SSRAM at 0x00000000 and 4 MiB of data
// SSRAM at 0x20000000; link.ld's regions must stay inside them.
inline constexpr int64_t kQemuFlashOrigin = 0x00000000;
inline constexpr int64_t kQemuRamOrigin = 0x20000000;
inline constexpr int64_t kQemuRegionBytes = 4 << 20;

struct RuntimeFiles {
  std::vector<std::string> headers;  // relative to the runtime directory
  std::vector<std::string> sources;
};

StatusOr<RuntimeFiles> ListRuntime(const std::string& dir);
std::string Base(const std::string& path);
std::string Str(int64_t v);
std::string Hex32(uint32_t v);
// A C identifier from a model name.
std::string Identifier(const std::string& name);
// Safe inside a C block comment.
std::string Comment(const std::string& s);
// Safe inside a C string literal.
std::string CString(const std::string& s);
struct CType {
  const char* name;
  int size;
};

bool TensorCType(ir::DataType t, CType* out);
int CTypeSize(const std::string& ctype);
// Little-endian element `i` of `bytes` as a signed or unsigned integer of `ctype`.
int64_t Element(const std::vector<uint8_t>& bytes, size_t i, const std::string& ctype);
// "static const T name[N] = {...};" with the values of `bytes`.
std::string ArrayDefinition(const std::string& ctype, const std::string& name, const std::vector<uint8_t>& bytes, const std::string& comment);
struct Addr {
  std::string base;
  std::string ctype;  // element type of the base array
  bool is_const = false;
  int64_t offset = 0;  // bytes
  int64_t step = 0;    // bytes per loop iteration
};

std::string Terms(int64_t offset, int64_t step, bool loop);
// The C expression passing `a` as a parameter of type `param`.
std::string PointerExpr(const Addr& a, const std::string& param, bool loop);

class Emitter {
 public:
  Emitter(const ir::Graph& g, const plan::Plan& p, const exec::QuantizedModel& q,
          const CodegenOptions& o)
      : g_(g), p_(p), q_(q), o_(o) {}

  StatusOr<Firmware> Run();

 private:
  // Where a tensor's bytes are at a step: in the arena at `offset`, or a const array in flash.
  struct Loc {
    bool arena = false;
    bool wraps = false;  // runs past the end of the arena's circular pool (segment kernels only)
    int64_t offset = 0;
    std::string mem = "sramplan_arena";  // the C array holding it: the arena, or its memory pool's
    ir::TensorId tensor;  // flash: the tensor whose const array holds the bytes
  };

  Status Index();
  StatusOr<const plan::Buffer*> Buffer(const std::string& tensor, int step,
                                       const std::string& what);
  // allow_wrap: the caller addresses a buffer that wraps around the circular pool modulo the pool.
  StatusOr<Loc> Locate(ir::TensorId t, int step, const std::string& what, bool allow_wrap = false);
  // The calls exec::LowerStep gives a step, printed: a plain or in-place op, or a segment step.
  Status EmitOp(int s, const plan::StepOp& so, const exec::LoweredOp& lo, const plan::Buffer* scratch);
  Status EmitSegmentStep(const exec::StepCalls& sc);
  // A depthwise call's constant [K][1][R][S] filter re-emitted as [1][R][S][K] (codegen_dw_layout.cc):
  // true with the new descriptor and weight expressions, false to emit the call as it is.
  bool DepthwiseRepack(const exec::KernelCall& k, const std::vector<Loc>& in, std::string* desc,
                       std::string* weights);
  std::string SegLayerInit(const exec::SegLayerS8& l);
  std::string TensorArray(ir::TensorId t);
  std::string DescName(const sp_tensor_t& d);
  std::string IntsName(const std::vector<int32_t>& v);
  std::string RequantName(const sp_requant_t& rq);
  std::string AddParamsName(const sp_add_s8_params_t& p);
  std::string MulParamsName(const sp_mul_s8_params_t& p);
  std::string ConstName(const exec::ConstArray& c);
  std::string Decl(const std::string& key, const std::string& prefix, const std::string& body);
  std::string ModelC(const std::string& run_body, const std::string& checksum_body);
  std::string StartupC() const;
  std::string LinkerScript() const;
  // Memory pools (codegen_pools.cc): the plan's pool levels and the one whose region also holds
  // .data, .bss and the stack; the C array of a level; the pools' arrays and linker regions.
  Status IndexPools();
  bool IsPool(const std::string& level) const;
  std::string MemName(const std::string& level) const;
  std::string PoolArrays() const;
  std::string PoolRegions() const;
  std::string PoolSections() const;
  std::string Makefile() const;
  std::string Readme() const;

  const ir::Graph& g_;
  const plan::Plan& p_;
  const exec::QuantizedModel& q_;
  const CodegenOptions& o_;
  Firmware fw_;
  std::string runtime_dir_;
  RuntimeFiles runtime_;

  const plan::Level* arena_level_ = nullptr;  // with pools: the pool whose region is RAM
  std::vector<const plan::Level*> pools_;     // the plan's memory pools (empty: one arena)
  std::unordered_map<std::string, std::vector<const plan::Buffer*>> buffers_;
  std::unordered_map<std::string, const plan::Tensor*> ptensors_;
  std::unordered_map<std::string, const ir::Op*> ops_;

  std::string run_;                         // sramplan_run's body
  std::vector<std::string> tensor_arrays_;  // by tensor id: the const array's name, once used
  std::vector<std::string> decl_order_;     // descriptor / parameter / table definitions, in order
  std::map<std::string, std::string> decl_names_;  // definition key -> name
  std::set<std::string> used_names_;
  int decl_counter_ = 0;
};

}  // namespace sramplan::codegen
