// .tflite writer (tflite_writer.h). Field ids as in tflite_model.cc: a field's vtable slot is 4 + 2 * id.
#include "import/tflite_writer.h"

#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <map>

namespace sramplan::import::tflite {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr flatbuffers::voffset_t Vt(int id) { return static_cast<flatbuffers::voffset_t>(4 + 2 * id); }

// BuiltinOptions union tags of the option tables the writer fills (0: none written).
int OptionsType(int code) {
  switch (code) {
    case kConv2D: return 1;
    case kDepthwiseConv2D: return 2;
    case kAveragePool2D: case kMaxPool2D: return 5;
    case kFullyConnected: return 8;
    case kSoftmax: return 9;
    case kConcatenation: return 10;
    case kAdd: return 11;
    case kMul: return 21;
    case kMean: return 27;
    case kSub: return 28;
    case kStridedSlice: return 32;
    default: return 0;
  }
}

Offset<void> WriteOptions(FlatBufferBuilder& fb, int code, const Options& o) {
  const auto start = fb.StartTable();
  auto i32 = [&](int id, int v) { fb.AddElement<int32_t>(Vt(id), v); };
  auto i8 = [&](int id, int v) { fb.AddElement<int8_t>(Vt(id), static_cast<int8_t>(v)); };
  switch (code) {
    case kConv2D:
      i8(0, o.padding), i32(1, o.stride_w), i32(2, o.stride_h), i8(3, o.activation), i32(4, o.dilation_w),
          i32(5, o.dilation_h);
      break;
    case kDepthwiseConv2D:
      i8(0, o.padding), i32(1, o.stride_w), i32(2, o.stride_h), i32(3, o.depth_multiplier), i8(4, o.activation),
          i32(5, o.dilation_w), i32(6, o.dilation_h);
      break;
    case kAveragePool2D: case kMaxPool2D:
      i8(0, o.padding), i32(1, o.stride_w), i32(2, o.stride_h), i32(3, o.filter_w), i32(4, o.filter_h),
          i8(5, o.activation);
      break;
    case kFullyConnected: i8(0, o.activation), i8(2, o.keep_num_dims ? 1 : 0); break;
    case kSoftmax: fb.AddElement<float>(Vt(0), o.beta); break;
    case kConcatenation: i32(0, o.axis), i8(1, o.activation); break;
    case kAdd: case kMul: case kSub: i8(0, o.activation); break;
    case kMean: i8(0, o.keep_dims ? 1 : 0); break;
    case kStridedSlice:
      i32(0, o.begin_mask), i32(1, o.end_mask), i32(2, o.ellipsis_mask), i32(3, o.new_axis_mask),
          i32(4, o.shrink_axis_mask);
      break;
    default: break;
  }
  return Offset<void>(fb.EndTable(start));
}

Offset<void> WriteTensor(FlatBufferBuilder& fb, const Tensor& t) {
  auto shape = fb.CreateVector(t.shape);
  auto name = fb.CreateString(t.name);
  Offset<void> quant;
  const bool has_quant = !t.quant.scale.empty();
  if (has_quant) {
    auto scale = fb.CreateVector(t.quant.scale);
    auto zp = fb.CreateVector(t.quant.zero_point);
    const auto q = fb.StartTable();
    fb.AddOffset(Vt(2), scale);
    fb.AddOffset(Vt(3), zp);
    fb.AddElement<int32_t>(Vt(6), t.quant.quantized_dimension, 0);
    quant = Offset<void>(fb.EndTable(q));
  }
  const auto start = fb.StartTable();
  fb.AddOffset(Vt(0), shape);
  fb.AddElement<int8_t>(Vt(1), static_cast<int8_t>(t.type), 0);
  fb.AddElement<uint32_t>(Vt(2), t.buffer, 0);
  fb.AddOffset(Vt(3), name);
  if (has_quant) fb.AddOffset(Vt(4), quant);
  fb.AddElement<uint8_t>(Vt(5), t.is_variable ? 1 : 0, 0);
  return Offset<void>(fb.EndTable(start));
}

void PutU32(std::string* s, size_t at, uint32_t v) { std::memcpy(s->data() + at, &v, 4); }
void PutU16(std::string* s, size_t at, uint16_t v) { std::memcpy(s->data() + at, &v, 2); }
uint32_t GetU32(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}
uint16_t GetU16(const std::string& s, size_t at) {
  uint16_t v;
  std::memcpy(&v, s.data() + at, 2);
  return v;
}

}  // namespace

std::string WriteModel(const ModelToWrite& model) {
  FlatBufferBuilder fb;
  std::vector<Offset<void>> buffers;
  for (const std::string& d : model.buffers) {
    Offset<flatbuffers::Vector<uint8_t>> data;
    if (!d.empty()) {
      fb.ForceVectorAlignment(d.size(), 1, 16);
      data = fb.CreateVector(reinterpret_cast<const uint8_t*>(d.data()), d.size());
    }
    const auto start = fb.StartTable();
    if (!d.empty()) fb.AddOffset(Vt(0), data);
    buffers.push_back(Offset<void>(fb.EndTable(start)));
  }
  // Operator codes in order of first use.
  std::map<std::pair<int, std::string>, int> code_index;
  std::vector<std::pair<int, std::string>> codes;
  for (const Operator& op : model.subgraph.operators) {
    auto key = std::make_pair(op.builtin, op.custom_code);
    if (code_index.emplace(key, static_cast<int>(codes.size())).second) codes.push_back(key);
  }
  std::vector<Offset<void>> code_tables;
  for (const auto& [code, custom] : codes) {
    Offset<flatbuffers::String> cs;
    if (!custom.empty()) cs = fb.CreateString(custom);
    const auto start = fb.StartTable();
    fb.AddElement<int8_t>(Vt(0), static_cast<int8_t>(code < 127 ? code : 127), 0);
    if (!custom.empty()) fb.AddOffset(Vt(1), cs);
    fb.AddElement<int32_t>(Vt(2), 1, 0);
    fb.AddElement<int32_t>(Vt(3), code, 0);
    code_tables.push_back(Offset<void>(fb.EndTable(start)));
  }
  std::vector<Offset<void>> tensors, ops;
  for (const Tensor& t : model.subgraph.tensors) tensors.push_back(WriteTensor(fb, t));
  for (const Operator& op : model.subgraph.operators) {
    auto in = fb.CreateVector(op.inputs);
    auto out = fb.CreateVector(op.outputs);
    const int type = OptionsType(op.builtin);
    Offset<void> opts;
    if (type != 0) opts = WriteOptions(fb, op.builtin, op.options);
    const auto start = fb.StartTable();
    fb.AddElement<uint32_t>(Vt(0), static_cast<uint32_t>(code_index.at({op.builtin, op.custom_code})), 0);
    fb.AddOffset(Vt(1), in);
    fb.AddOffset(Vt(2), out);
    if (type != 0) {
      fb.AddElement<uint8_t>(Vt(3), static_cast<uint8_t>(type), 0);
      fb.AddOffset(Vt(4), opts);
    }
    ops.push_back(Offset<void>(fb.EndTable(start)));
  }
  auto tv = fb.CreateVector(tensors);
  auto iv = fb.CreateVector(model.subgraph.inputs);
  auto ov = fb.CreateVector(model.subgraph.outputs);
  auto opv = fb.CreateVector(ops);
  auto sname = fb.CreateString(model.subgraph.name);
  const auto sg_start = fb.StartTable();
  fb.AddOffset(Vt(0), tv);
  fb.AddOffset(Vt(1), iv);
  fb.AddOffset(Vt(2), ov);
  fb.AddOffset(Vt(3), opv);
  fb.AddOffset(Vt(4), sname);
  const Offset<void> sg(fb.EndTable(sg_start));
  std::vector<Offset<void>> metadata;
  for (const Metadata& md : model.metadata) {
    auto n = fb.CreateString(md.name);
    const auto start = fb.StartTable();
    fb.AddOffset(Vt(0), n);
    fb.AddElement<uint32_t>(Vt(1), md.buffer, 0);
    metadata.push_back(Offset<void>(fb.EndTable(start)));
  }
  auto codes_v = fb.CreateVector(code_tables);
  auto sgs = fb.CreateVector(std::vector<Offset<void>>{sg});
  auto desc = fb.CreateString(model.description);
  auto bufs = fb.CreateVector(buffers);
  auto mds = fb.CreateVector(metadata);
  const auto start = fb.StartTable();
  fb.AddElement<uint32_t>(Vt(0), 3, 0);
  fb.AddOffset(Vt(1), codes_v);
  fb.AddOffset(Vt(2), sgs);
  fb.AddOffset(Vt(3), desc);
  fb.AddOffset(Vt(4), bufs);
  if (!metadata.empty()) fb.AddOffset(Vt(6), mds);
  fb.Finish(Offset<void>(fb.EndTable(start)), "TFL3");
  return std::string(reinterpret_cast<const char*>(fb.GetBufferPointer()), fb.GetSize());
}

StatusOr<std::string> WithOfflinePlan(const std::string& bytes, const Model& m, const std::vector<int32_t>& offsets) {
  size_t total = 0;
  for (const Subgraph& s : m.subgraphs) total += s.tensors.size();
  if (offsets.size() != total)
    return InvalidArgument("the offline plan has " + std::to_string(offsets.size()) + " offsets but the model has " +
                           std::to_string(total) + " tensors");
  for (const Buffer& b : m.buffers)
    if (b.external)
      return Unsupported("the model keeps buffer data outside the flatbuffer (a model over 2 GB); not supported");
  // The old root table and its vtable. ParseModel verified the fields it reads, not every field the
  // root table may point to, so every read here is bounds-checked: a position outside the file makes
  // `outside` true and reads 0.
  bool outside = false;
  auto u32 = [&](size_t at) -> uint32_t {
    if (at > bytes.size() || bytes.size() - at < 4) {
      outside = true;
      return 0;
    }
    return GetU32(bytes, at);
  };
  auto u16 = [&](size_t at) -> uint16_t {
    if (at > bytes.size() || bytes.size() - at < 2) {
      outside = true;
      return 0;
    }
    return GetU16(bytes, at);
  };
  const auto corrupt = [] {
    return InvalidArgument("the model's root table points outside the file; it cannot be rewritten (is the file "
                           "truncated or corrupt?)");
  };
  const uint32_t root = u32(0);
  const size_t vtable = root - static_cast<int32_t>(u32(root));
  const uint16_t vt_size = u16(vtable);
  if (outside || vt_size < 4) return corrupt();
  const int old_fields = (vt_size - 4) / 2;
  auto field_pos = [&](int id) -> size_t {  // absolute position of field id in the old root, 0: absent
    if (id >= old_fields) return 0;
    const uint16_t o = u16(vtable + 4 + 2 * id);
    return o == 0 ? 0 : root + o;
  };
  for (int id = 8; id < old_fields; ++id)
    if (field_pos(id) != 0)
      return Unsupported("the model's root table has field " + std::to_string(id) +
                         ", which sramplan does not know; cannot rewrite it safely");
  auto target = [&](size_t pos) -> size_t {  // absolute target of an offset field
    const size_t t = pos + u32(pos);
    if (t > bytes.size()) outside = true;
    return t;
  };
  // Old buffer and metadata tables (absolute positions in the old file).
  std::vector<size_t> old_buffers, old_metadata;
  if (size_t p = field_pos(4)) {
    const size_t v = target(p);
    for (uint32_t i = 0; !outside && i < u32(v); ++i) old_buffers.push_back(target(v + 4 + 4 * i));
  }
  if (size_t p = field_pos(6)) {
    const size_t v = target(p);
    for (uint32_t i = 0; !outside && i < u32(v); ++i) {
      if (i >= m.metadata.size()) return corrupt();
      if (m.metadata[i].name != kOfflineMemoryAllocation) old_metadata.push_back(target(v + 4 + 4 * i));
    }
  }
  for (int id = 0; id < 8; ++id)  // the other fields are copied as offsets to their old targets
    if (const size_t old = field_pos(id); old != 0 && id != 4 && id != 6) {
      if (id == 0) u32(old);
      else target(old);
    }
  if (outside) return corrupt();
  const std::string md_name = kOfflineMemoryAllocation;
  // Layout of the front part (all positions relative to the new file's start).
  const size_t model_vt = 8, model_table = 28;  // vtable: 4 + 2 * 8 bytes = 20
  const size_t buffers_vec = model_table + 36;
  const size_t metadata_vec = buffers_vec + 4 + 4 * (old_buffers.size() + 1);
  const size_t md_vt = metadata_vec + 4 + 4 * (old_metadata.size() + 1);
  const size_t md_table = md_vt + 8;
  const size_t md_string = md_table + 12;
  const size_t buf_vt = (md_string + 4 + md_name.size() + 1 + 3) / 4 * 4;
  const size_t buf_table = buf_vt + 8;  // vtable of 6 bytes, padded to 8
  size_t data_vec = buf_table + 8;
  while ((data_vec + 4) % 16 != 0) data_vec += 4;
  const size_t words = 3 + offsets.size();
  const size_t front = (data_vec + 4 + 4 * words + 15) / 16 * 16;
  std::string out(front, '\0');
  out += bytes;
  auto rel = [&](size_t at, size_t to) { PutU32(&out, at, static_cast<uint32_t>(to - at)); };
  PutU32(&out, 0, static_cast<uint32_t>(model_table));
  std::memcpy(out.data() + 4, "TFL3", 4);
  // Model vtable and table: version, operator_codes, subgraphs, description, buffers,
  // metadata_buffer, metadata, signature_defs at table offsets 4, 8, ..., 32.
  PutU16(&out, model_vt, 20);
  PutU16(&out, model_vt + 2, 36);
  PutU32(&out, model_table, static_cast<uint32_t>(model_table - model_vt));
  for (int id = 0; id < 8; ++id) {
    const size_t at = model_table + 4 + 4 * id;
    const size_t old = field_pos(id);
    bool present = true;
    if (id == 4) rel(at, buffers_vec);
    else if (id == 6) rel(at, metadata_vec);
    else if (old == 0) present = false;
    else if (id == 0) PutU32(&out, at, u32(old));
    else rel(at, front + target(old));
    PutU16(&out, model_vt + 4 + 2 * id, present ? static_cast<uint16_t>(4 + 4 * id) : 0);
  }
  PutU32(&out, buffers_vec, static_cast<uint32_t>(old_buffers.size() + 1));
  for (size_t i = 0; i < old_buffers.size(); ++i) rel(buffers_vec + 4 + 4 * i, front + old_buffers[i]);
  rel(buffers_vec + 4 + 4 * old_buffers.size(), buf_table);
  PutU32(&out, metadata_vec, static_cast<uint32_t>(old_metadata.size() + 1));
  for (size_t i = 0; i < old_metadata.size(); ++i) rel(metadata_vec + 4 + 4 * i, front + old_metadata[i]);
  rel(metadata_vec + 4 + 4 * old_metadata.size(), md_table);
  // Metadata {name, buffer = the new buffer's index}.
  PutU16(&out, md_vt, 8);
  PutU16(&out, md_vt + 2, 12);
  PutU16(&out, md_vt + 4, 4);
  PutU16(&out, md_vt + 6, 8);
  PutU32(&out, md_table, static_cast<uint32_t>(md_table - md_vt));
  rel(md_table + 4, md_string);
  PutU32(&out, md_table + 8, static_cast<uint32_t>(old_buffers.size()));
  PutU32(&out, md_string, static_cast<uint32_t>(md_name.size()));
  std::memcpy(out.data() + md_string + 4, md_name.data(), md_name.size());
  // Buffer {data}.
  PutU16(&out, buf_vt, 6);
  PutU16(&out, buf_vt + 2, 8);
  PutU16(&out, buf_vt + 4, 4);
  PutU32(&out, buf_table, static_cast<uint32_t>(buf_table - buf_vt));
  rel(buf_table + 4, data_vec);
  PutU32(&out, data_vec, static_cast<uint32_t>(4 * words));
  const int32_t head[3] = {1, static_cast<int32_t>(m.subgraphs.size()), static_cast<int32_t>(offsets.size())};
  std::memcpy(out.data() + data_vec + 4, head, 12);
  // A model without tensors has no offsets: memcpy never sees the null data() of an empty vector.
  if (!offsets.empty()) std::memcpy(out.data() + data_vec + 16, offsets.data(), 4 * offsets.size());
  return out;
}

Status CheckOfflinePlanFile(const std::string& original, const std::string& written, const std::vector<int32_t>& offsets) {
  SP_ASSIGN_OR_RETURN(Model a, ParseModel(original, "original"));
  auto b = ParseModel(written, "written");
  if (!b.ok()) return InternalError("the written model does not read back: " + b.status().message());
  auto differ = [](const std::string& what) { return InternalError("the written model differs from the original: " + what); };
  if (a.subgraphs.size() != b->subgraphs.size()) return differ("number of subgraphs");
  const Subgraph &x = a.subgraphs[0], &y = b->subgraphs[0];
  if (x.inputs != y.inputs || x.outputs != y.outputs || x.name != y.name) return differ("subgraph inputs/outputs");
  if (x.tensors.size() != y.tensors.size() || x.operators.size() != y.operators.size()) return differ("sizes");
  for (size_t i = 0; i < x.tensors.size(); ++i) {
    const Tensor &s = x.tensors[i], &t = y.tensors[i];
    // Bitwise (NaN scales compare equal to themselves); memcmp never sees the null data() of an empty vector.
    const bool same_scale = s.quant.scale.size() == t.quant.scale.size() &&
                            (s.quant.scale.empty() ||
                             std::memcmp(s.quant.scale.data(), t.quant.scale.data(), 4 * s.quant.scale.size()) == 0);
    if (s.shape != t.shape || s.type != t.type || s.buffer != t.buffer || s.name != t.name || !same_scale ||
        s.quant.zero_point != t.quant.zero_point || s.is_variable != t.is_variable)
      return differ("tensor " + std::to_string(i));
  }
  for (size_t i = 0; i < x.operators.size(); ++i) {
    const Operator &s = x.operators[i], &t = y.operators[i];
    if (s.builtin != t.builtin || s.inputs != t.inputs || s.outputs != t.outputs || s.custom_code != t.custom_code)
      return differ("operator " + std::to_string(i));
  }
  if (b->buffers.size() != a.buffers.size() + 1) return differ("buffer count");
  for (size_t i = 0; i < a.buffers.size(); ++i)
    if (BufferData(original, a, static_cast<uint32_t>(i)) != BufferData(written, *b, static_cast<uint32_t>(i)))
      return differ("buffer " + std::to_string(i));
  SP_ASSIGN_OR_RETURN(std::vector<int32_t> got, OfflineOffsets(written, *b));
  if (got != offsets) return differ("the offline offsets read back are not the ones written");
  return Status::Ok();
}

}  // namespace sramplan::import::tflite
