// Runs every file of the fuzz corpora (tests/fuzz/<format>/, seeds and regressions/) through the
// fuzz entry of its format (fuzz/fuzz_entries.h), so the release and asan test suites re-check every
// input a fuzzer ever crashed on, without clang or libFuzzer. Files under regressions-pending/ are
// reproducers of known bugs not fixed yet: this test does not read them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "fuzz_entries.h"
#include "test_util.h"

namespace sramplan::fuzz {
namespace {

namespace fs = std::filesystem;

struct CorpusFile {
  std::string format;
  int (*run)(const uint8_t*, size_t) = nullptr;
  std::string path;  // relative to the source tree
  std::string test_name;
};
void PrintTo(const CorpusFile& f, std::ostream* os) { *os << f.path; }

std::vector<CorpusFile> CorpusFiles() {
  std::vector<CorpusFile> files;
  std::set<std::string> names;
  for (const Entry& e : Entries()) {
    std::string dir = "tests/fuzz/" + std::string(e.format);
    fs::path root = testing::SourcePath(dir);
    if (!fs::is_directory(root)) continue;
    std::vector<std::string> rel;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
      if (it->is_directory() && it->path().filename() == "regressions-pending") {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file()) rel.push_back(fs::relative(it->path(), root).generic_string());
    }
    std::sort(rel.begin(), rel.end());
    for (const std::string& r : rel) {
      std::string name = std::string(e.format) + "_" + r;
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      while (!names.insert(name).second) name += "_";
      files.push_back({e.format, e.run, dir + "/" + r, name});
    }
  }
  return files;
}

class FuzzCorpus : public ::testing::TestWithParam<CorpusFile> {};

TEST_P(FuzzCorpus, RunsWithoutFindingABug) {
  const CorpusFile& f = GetParam();
  std::ifstream in(testing::SourcePath(f.path), std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << f.path;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A bug the entry detects (not a crash) becomes a test failure instead of an abort.
  SetBugHandler([](const std::string& message) { ADD_FAILURE() << message; });
  SCOPED_TRACE(f.path + " (" + f.format + ")");
  EXPECT_EQ(f.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
  SetBugHandler(nullptr);
}

INSTANTIATE_TEST_SUITE_P(Corpus, FuzzCorpus, ::testing::ValuesIn(CorpusFiles()),
                         [](const ::testing::TestParamInfo<CorpusFile>& info) { return info.param.test_name; });

TEST(FuzzCorpusLayout, EveryFormatHasSeeds) {
  std::vector<CorpusFile> files = CorpusFiles();
  for (const Entry& e : Entries()) {
    int n = static_cast<int>(std::count_if(files.begin(), files.end(),
                                           [&](const CorpusFile& f) { return f.format == e.format; }));
    EXPECT_GE(n, 3) << "tests/fuzz/" << e.format << "/ needs seed files";
  }
}

}  // namespace
}  // namespace sramplan::fuzz
