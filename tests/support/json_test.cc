// support/json: parsing that neither throws nor recurses without bound, and typed getters whose
// messages name the field path.
#include "support/json.h"

#include <gtest/gtest.h>

#include <string>

namespace sramplan {
namespace {

using nlohmann::json;

std::string Nested(int depth, const std::string& inner = "1") {
  return std::string(static_cast<size_t>(depth), '[') + inner + std::string(static_cast<size_t>(depth), ']');
}

bool Contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

TEST(ParseJson, DeepNestingIsAnErrorNotAStackOverflow) {
  // 100,000 deep (the fuzzer's SIGSEGV input): refused before parsing, naming the position.
  auto r = ParseJson(Nested(100000), "'deep.json'");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "'deep.json' nests lists and objects more than 512 levels deep"))
      << r.status().message();
  EXPECT_TRUE(Contains(r.status().message(), "line 1, column 513")) << r.status().message();
  // Objects count too.
  std::string objects;
  for (int i = 0; i < 600; ++i) objects += "{\"a\":";
  objects += "1" + std::string(600, '}');
  EXPECT_FALSE(ParseJson(objects, "x").ok());
}

TEST(ParseJson, DepthLimitIsExact) {
  EXPECT_TRUE(ParseJson(Nested(kMaxJsonDepth), "x").ok());
  EXPECT_FALSE(ParseJson(Nested(kMaxJsonDepth + 1), "x").ok());
  // Brackets inside strings (escaped quotes included) do not nest.
  std::string in_string = "[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]";
  auto r = ParseJson(in_string, "x");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].get<std::string>().size(), 2001u);
  // A value at the limit can be dumped and copied (both recurse) without trouble.
  auto deep = ParseJson(Nested(kMaxJsonDepth), "x");
  ASSERT_TRUE(deep.ok());
  json copy = *deep;
  EXPECT_EQ(copy.dump().size(), 2 * static_cast<size_t>(kMaxJsonDepth) + 1);
}

TEST(ParseJson, HugeNumbersAndSyntaxErrorsAreErrorsWithAPosition) {
  auto r = ParseJson("{\n  \"version\": 1e999\n}", "'big.json'");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), "'big.json' is not valid JSON at line 2, column 14")) << r.status().message();
  EXPECT_TRUE(Contains(r.status().message(), "1e999")) << r.status().message();
  EXPECT_FALSE(Contains(r.status().message(), "[json.exception")) << r.status().message();

  auto syntax = ParseJson("{\"a\": tru}", "'s.json'");
  ASSERT_FALSE(syntax.ok());
  EXPECT_TRUE(Contains(syntax.status().message(), "'s.json' is not valid JSON: parse error at line 1"))
      << syntax.status().message();
  EXPECT_FALSE(Contains(syntax.status().message(), "[json.exception")) << syntax.status().message();
  EXPECT_FALSE(ParseJson("", "x").ok());
  EXPECT_FALSE(ParseJson("\xff\xfe", "x").ok());
}

TEST(JsonRef, IntegersAreExactAndRanged) {
  json doc = json::parse(R"({"plans": [{}, {}, {"buffers": [{"first_step": 9007199254740992, "a": 1.0,
      "b": 1e20, "c": 18446744073709551615, "d": -1, "e": "7", "f": 2147483647, "g": true}]}]})");
  JsonRef root(doc);
  auto buffers = root.Array("plans");
  ASSERT_TRUE(buffers.ok());
  JsonRef b = (*buffers)[2].Child("buffers")[0];
  EXPECT_EQ(b.path(), "plans[2].buffers[0]");

  auto first = b.Int("first_step", 0, kInt32Max);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().message(),
            "plans[2].buffers[0].first_step: must be an integer in [0, 2^31), got 9007199254740992");
  // As int64 the same value is fine.
  EXPECT_EQ(*b.Int("first_step", 0, kInt64Max), int64_t{1} << 53);
  // Doubles are never converted, even when whole.
  EXPECT_EQ(b.Int("a", 0, 10).status().message(), "plans[2].buffers[0].a: must be an integer in [0, 10], got 1.0");
  EXPECT_TRUE(Contains(b.Int("b", kInt64Min, kInt64Max).status().message(), "got 1e+20"));
  // Unsigned values above INT64_MAX do not wrap.
  EXPECT_EQ(b.Int("c", kInt64Min, kInt64Max).status().message(),
            "plans[2].buffers[0].c: must be an integer in [-2^63, 2^63), got 18446744073709551615");
  EXPECT_FALSE(b.Int("d", 0, 5).ok());
  EXPECT_EQ(*b.Int("d", -1, 5), -1);
  EXPECT_TRUE(Contains(b.Int("e", 0, 9).status().message(), "got \"7\""));
  EXPECT_TRUE(Contains(b.Int("g", 0, 9).status().message(), "got true"));
  EXPECT_EQ(*b.Int("f", 0, kInt32Max), 2147483647);
  // Missing and defaulted members.
  EXPECT_EQ(b.Int("zz", 0, 9).status().message(),
            "plans[2].buffers[0].zz: missing (required: an integer in [0, 9])");
  EXPECT_EQ(*b.IntOr("zz", 4, 0, 9), 4);
  EXPECT_FALSE(b.IntOr("d", 4, 0, 9).ok());  // present but out of range is an error, not the default
}

TEST(JsonRef, OtherTypesAndPaths) {
  json doc = json::parse(R"({"levels": [{"capacity": "x", "holds": ["a", 3], "bw": 1e300, "ok": 2.5,
      "odd key": 1, "n": null, "flag": 1}]})");
  JsonRef l = JsonRef(doc).Child("levels")[0];
  EXPECT_EQ(l.Int("capacity", 1, int64_t{1} << 50).status().message(),
            "levels[0].capacity: must be an integer in [1, 2^50], got \"x\"");
  EXPECT_EQ(l.StringList("holds").status().message(), "levels[0].holds[1]: must be a string, got 3");
  EXPECT_TRUE(Contains(l.Number("bw", 0, 1e12).status().message(), "levels[0].bw: must be a number in [0, 1e+12]"));
  EXPECT_DOUBLE_EQ(*l.Number("ok", 0, 10), 2.5);
  EXPECT_EQ(*l.NumberOr("n", 7.0, 0, 10), 7.0);  // null takes the default
  EXPECT_FALSE(l.Has("n"));
  EXPECT_TRUE(Contains(l.Bool("flag").status().message(), "levels[0].flag: must be true or false, got 1"));
  auto items = l.Items();
  bool saw_odd = false;
  for (const auto& [key, ref] : items)
    if (key == "odd key") {
      saw_odd = true;
      EXPECT_EQ(ref.path(), "levels[0][\"odd key\"]");
    }
  EXPECT_TRUE(saw_odd);
  EXPECT_TRUE(Contains(JsonRef(doc).Object("levels").status().message(), "levels: must be a JSON object, got a list [{"));
  EXPECT_TRUE(Contains(JsonRef(doc).Array("nope").status().message(), "nope: missing (required: a list)"));
}

TEST(JsonSnippet, CutsHugeValuesAndNeverThrows) {
  json big = json::array();
  for (int i = 0; i < 100000; ++i) big.push_back(i);
  std::string s = JsonSnippet(big);
  EXPECT_LE(s.size(), 83u);
  EXPECT_EQ(s.substr(s.size() - 3), "...");
  json bad_utf8 = std::string("\xff\xfe");
  EXPECT_NO_THROW(JsonSnippet(bad_utf8));
  EXPECT_NO_THROW(DumpJson(json{{"k", std::string("\xc3")}}));
  // A value nested to the limit is cut, not dumped whole.
  auto deep = ParseJson(Nested(kMaxJsonDepth), "x");
  ASSERT_TRUE(deep.ok());
  EXPECT_LE(JsonSnippet(*deep).size(), 83u);
}

TEST(JsonRange, Text) {
  EXPECT_EQ(IntRangeText(0, kInt32Max), "[0, 2^31)");
  EXPECT_EQ(IntRangeText(1, 4096), "[1, 4096]");
  EXPECT_EQ(IntRangeText(kInt64Min, kInt64Max), "[-2^63, 2^63)");
  EXPECT_EQ(IntRangeText(-(int64_t{1} << 50), int64_t{1} << 50), "[-2^50, 2^50]");
  EXPECT_EQ(IntRangeText(-5, 5), "[-5, 5]");
}

TEST(CheckJsonObjectHead, RefusesNonJsonAtOnce) {
  EXPECT_TRUE(CheckJsonObjectHead("  \n{", "f").ok());
  EXPECT_TRUE(CheckJsonObjectHead("\xEF\xBB\xBF{", "f").ok());
  EXPECT_TRUE(CheckJsonObjectHead("", "f").ok());  // empty: the parser reports it
  Status s = CheckJsonObjectHead(std::string_view("\0\0\0", 3), "plan 'z'");
  EXPECT_EQ(s.message(), "plan 'z' is not a JSON object: it starts with 0x00 at byte 0, not '{'");
  EXPECT_FALSE(CheckJsonObjectHead("[1]", "f").ok());
}

TEST(LegacyGetters, ExactAndNoThrow) {
  json j = json::parse(R"({"a": 18446744073709551615, "b": 1.5, "c": [1, 18446744073709551615], "d": -3})");
  EXPECT_FALSE(GetInt(j, "a", "w").ok());
  EXPECT_FALSE(GetInt(j, "b", "w").ok());
  EXPECT_EQ(*GetInt(j, "d", "w"), -3);
  auto list = GetIntList(j, "c", "w");
  ASSERT_FALSE(list.ok());
  EXPECT_TRUE(Contains(list.status().message(), "'c'[1]")) << list.status().message();
}

}  // namespace
}  // namespace sramplan
