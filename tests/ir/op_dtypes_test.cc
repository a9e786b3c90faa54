// The table of operand dtypes per op kind (issue 12): a Conv writing bool or int64, a Slice given a
// Conv's inputs and other mismatches are rejected by VerifyGraph, naming the op, the tensor, its
// dtype and what the op accepts; valid graphs (float, int8 with int32 biases) pass.
#include "ir/op_dtypes.h"

#include <gtest/gtest.h>

#include "import/import.h"

namespace sramplan::ir {
namespace {

struct Built {
  Graph g;
  TensorId x, w, b, y;
};

// x [1,3,8,8] -> Conv(w [4,3,3,3], b [4]) -> y [1,4,6,6] with the given dtypes.
Built ConvGraph(DataType x_dt, DataType w_dt, DataType b_dt, DataType y_dt, const std::string& type = "Conv") {
  Built r;
  auto add = [&](const std::string& n, std::vector<int64_t> s, TensorKind k, DataType dt) {
    Tensor t;
    t.name = n;
    t.shape = std::move(s);
    t.kind = k;
    t.dtype = dt;
    return r.g.AddTensor(std::move(t));
  };
  r.x = add("x", {1, 3, 8, 8}, TensorKind::kInput, x_dt);
  r.w = add("w", {4, 3, 3, 3}, TensorKind::kConstant, w_dt);
  r.b = add("b", {4}, TensorKind::kConstant, b_dt);
  r.y = add("y", {1, 4, 6, 6}, TensorKind::kOutput, y_dt);
  Op op;
  op.name = "c";
  op.type = type;
  op.inputs = {r.x, r.w, r.b};
  op.outputs = {r.y};
  op.attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
  r.g.AddOp(std::move(op));
  return r;
}

TEST(OpDtypes, ConvOutputBoolOrInt64IsRejectedNamingEverything) {
  for (DataType bad : {DataType::kBool, DataType::kInt64, DataType::kInt32}) {
    Built b = ConvGraph(DataType::kFloat32, DataType::kFloat32, DataType::kFloat32, bad);
    Status s = VerifyGraph(b.g);
    ASSERT_FALSE(s.ok()) << DataTypeName(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    const std::string& m = s.message();
    EXPECT_NE(m.find("op 'c' (Conv)"), std::string::npos) << m;
    EXPECT_NE(m.find("output 'y' (Y)"), std::string::npos) << m;
    EXPECT_NE(m.find(std::string("dtype ") + DataTypeName(bad)), std::string::npos) << m;
    EXPECT_NE(m.find("int8, uint8, int16, float16 or float32"), std::string::npos) << m;
  }
}

TEST(OpDtypes, ConvOperandsMustShareOneDtype) {
  Status s = VerifyGraph(ConvGraph(DataType::kFloat32, DataType::kFloat32, DataType::kFloat32, DataType::kInt8).g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("output 'y' (Y) has dtype int8 but input 'x' (X) has float32"), std::string::npos)
      << s.message();
  // A bias of another numeric type is refused; int32 (TFLite's quantised bias) is accepted.
  s = VerifyGraph(ConvGraph(DataType::kInt8, DataType::kInt8, DataType::kInt16, DataType::kInt8).g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("input 'b' (B) has dtype int16"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("B may also be int32"), std::string::npos) << s.message();
  EXPECT_TRUE(VerifyGraph(ConvGraph(DataType::kInt8, DataType::kInt8, DataType::kInt32, DataType::kInt8).g).ok());
  EXPECT_TRUE(VerifyGraph(ConvGraph(DataType::kFloat32, DataType::kFloat32, DataType::kFloat32, DataType::kFloat32).g).ok());
}

TEST(OpDtypes, SliceGivenAConvsInputsIsRejected) {
  // starts = the float32 weights.
  Built b = ConvGraph(DataType::kFloat32, DataType::kFloat32, DataType::kFloat32, DataType::kFloat32, "Slice");
  Status s = VerifyGraph(b.g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("op 'c' (Slice): input 'w' (starts) has dtype float32; Slice accepts int32 or int64"),
            std::string::npos)
      << s.message();
  // Integer starts that are computed at run time are refused too: sramplan reads them at import.
  Built a = ConvGraph(DataType::kFloat32, DataType::kInt64, DataType::kInt64, DataType::kFloat32, "Slice");
  a.g.tensor(a.w).kind = TensorKind::kInput;
  s = CheckOpDtypes(a.g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("input 'w' (starts) is not a constant (its kind is input)"), std::string::npos) << s.message();
}

TEST(OpDtypes, ArityIsChecked) {
  Built b = ConvGraph(DataType::kFloat32, DataType::kFloat32, DataType::kFloat32, DataType::kFloat32);
  Op& op = b.g.op(OpId(0));
  op.inputs.push_back(b.b);  // four inputs
  Status s = CheckOpDtypes(b.g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("has 4 inputs; Conv takes 2 to 3 (X, W, B)"), std::string::npos) << s.message();
}

TEST(OpDtypes, ApplyDtypeKeepsValidGraphsValid) {
  for (DataType dt : {DataType::kInt8, DataType::kFloat32, DataType::kInt16}) {
    Built b = ConvGraph(DataType::kFloat32, DataType::kFloat32, DataType::kFloat32, DataType::kFloat32);
    ApplyDtype(b.g, dt);
    EXPECT_TRUE(VerifyGraph(b.g).ok()) << DataTypeName(dt) << ": " << VerifyGraph(b.g).message();
  }
}

TEST(OpDtypes, EveryImportableOpTypeHasARule) {
  for (const std::string& t : import::SupportedOnnxOps()) EXPECT_NE(FindOpDtypeRule(t), nullptr) << t;
  EXPECT_EQ(FindOpDtypeRule("Opaque"), nullptr);  // opaque ops are not checked
}

TEST(OpDtypes, DtypeSetText) {
  EXPECT_EQ(DtypeSetText(kIndexDtypes), "int32 or int64");
  EXPECT_EQ(DtypeSetText(Dt(DataType::kBool)), "bool");
}

}  // namespace
}  // namespace sramplan::ir
