#include "support/strings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

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

TEST(Strings, ParseSizeSaysWhy) {
  EXPECT_EQ(*ParseSize("1.5KiB"), 1536);
  EXPECT_EQ(*ParseSize(".5KiB"), 512);
  EXPECT_EQ(*ParseSize("1.50k"), 1536);
  EXPECT_EQ(*ParseSize("2.25MiB"), 2359296);
  EXPECT_EQ(*ParseSize("1TiB"), int64_t{1} << 40);
  EXPECT_EQ(*ParseSize("1B"), 1);
  EXPECT_EQ(*ParseSize("0"), 0);
  EXPECT_EQ(*ParseSize("1024TiB"), int64_t{1} << 50);  // the limit itself
  EXPECT_EQ(ParseSize("1.3B").status().message(), "'1.3B' is not a whole number of bytes");
  EXPECT_EQ(ParseSize("1.0001KiB").status().message(), "'1.0001KiB' is not a whole number of bytes");
  EXPECT_EQ(ParseSize("99999999999TiB").status().message(),
            "'99999999999TiB' is too large: sramplan handles sizes up to 2^50 bytes (1 PiB)");
  EXPECT_NE(ParseSize("1025TiB").status().message().find("too large"), std::string::npos);
  EXPECT_NE(ParseSize("99999999999999999999999").status().message().find("too large"), std::string::npos);
  EXPECT_NE(ParseSize("-5").status().message().find("cannot be negative"), std::string::npos);
  EXPECT_NE(ParseSize("12XB").status().message().find("unknown unit 'XB'"), std::string::npos);
  EXPECT_NE(ParseSize("1.").status().message().find("is not a size"), std::string::npos);
  EXPECT_NE(ParseSize("").status().message().find("is not a size"), std::string::npos);
  EXPECT_NE(ParseSize("1.0000000000000000000001KiB").status().message().find("not a whole number"),
            std::string::npos);
}

TEST(Strings, ReadFileBoundedStopsAtTheLimit) {
  std::string text;
  // An endless device: at most limit + 1 bytes are read, then a message naming the limit.
  Status s = ReadFileBounded("/dev/zero", 1000, &text);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'/dev/zero' is larger than 1000 bytes"), std::string::npos) << s.message();
  EXPECT_TRUE(text.empty());
  // A head check refuses at once.
  s = ReadFileBounded("/dev/zero", kMaxFileBytes, &text, [](std::string_view head, int64_t*) {
    EXPECT_EQ(head.size(), 4096u);
    return InvalidArgument("no zeros");
  });
  EXPECT_EQ(s.message(), "no zeros");
  // ... or lowers the limit.
  s = ReadFileBounded("/dev/zero", kMaxFileBytes, &text, [](std::string_view, int64_t* max_bytes) {
    *max_bytes = 5000;
    return Status::Ok();
  });
  EXPECT_NE(s.message().find("larger than 5000 bytes"), std::string::npos) << s.message();

  // A regular file: exactly at the limit reads; one byte more fails before reading.
  char path[] = "/tmp/sramplan_read_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "0123456789", 10), 10);
  close(fd);
  ASSERT_TRUE(ReadFileBounded(path, 10, &text).ok());
  EXPECT_EQ(text, "0123456789");
  s = ReadFileBounded(path, 9, &text);
  EXPECT_NE(s.message().find("is 10 bytes; sramplan reads at most 9 bytes"), std::string::npos) << s.message();
  std::string error;
  EXPECT_TRUE(ReadFileToString(path, &text, &error));
  unlink(path);
  EXPECT_EQ(ReadFileBounded("/no/such/file", 10, &text).code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadFileBounded("/tmp", 10, &text).code(), StatusCode::kNotFound);
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
