#include "support/strings.h"

#include <gtest/gtest.h>

#include "support/int_math.h"
#include "support/status.h"

namespace sramplan {
namespace {

TEST(Strings, ParseByteSize) {
  int64_t v = 0;
  EXPECT_TRUE(ParseByteSize("128KiB", &v));
  EXPECT_EQ(v, 131072);
  EXPECT_TRUE(ParseByteSize("128KB", &v));
  EXPECT_EQ(v, 131072);
  EXPECT_TRUE(ParseByteSize("1MiB", &v));
  EXPECT_EQ(v, 1 << 20);
  EXPECT_TRUE(ParseByteSize("4096", &v));
  EXPECT_EQ(v, 4096);
  EXPECT_FALSE(ParseByteSize("", &v));
  EXPECT_FALSE(ParseByteSize("KiB", &v));
  EXPECT_FALSE(ParseByteSize("12 parsecs", &v));
  EXPECT_FALSE(ParseByteSize("-5", &v));
  EXPECT_FALSE(ParseByteSize("99999999999999999999999", &v));
  EXPECT_FALSE(ParseByteSize("9999999999G", &v));
}

TEST(Strings, HumanBytesAndJoin) {
  EXPECT_EQ(HumanBytes(100), "100 B");
  EXPECT_EQ(HumanBytes(131072), "128.0 KiB");
  EXPECT_EQ(JoinInts({1, 3, 224}), "1,3,224");
}

TEST(IntMath, Checked) {
  EXPECT_FALSE(CheckedMul(int64_t{1} << 62, 4).has_value());
  EXPECT_EQ(*CheckedMul(3, 4), 12);
  EXPECT_FALSE(CheckedAdd(INT64_MAX, 1).has_value());
  EXPECT_EQ(AlignUp(17, 16), 32);
  EXPECT_EQ(AlignUp(32, 16), 32);
  EXPECT_EQ(AlignUp(5, 1), 5);
  EXPECT_EQ(CeilDiv(7, 2), 4);
  EXPECT_EQ(FloorDiv(-7, 2), -4);
}

TEST(Status, OrCarriesValueOrError) {
  StatusOr<int> ok = 5;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5);
  StatusOr<int> bad = InvalidArgument("nope");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "nope");
  EXPECT_EQ(bad.status().WithContext("ctx").message(), "ctx: nope");
  StatusOr<int> wrong = Status::Ok();  // an OK status without a value is an internal error
  EXPECT_FALSE(wrong.ok());
}

}  // namespace
}  // namespace sramplan
