#include "blocking/codesign.h"

namespace sramplan::blocking {

namespace {

std::string SizeName(int64_t b) {
  if (b >= (1 << 20) && b % (1 << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

Hierarchy Make(const std::vector<int64_t>& sizes, int width_bits, int word_bits, double mac_pj) {
  Hierarchy h;
  h.word_bits = word_bits;
  h.mac_pj = mac_pj;
  h.name = "codesign";
  for (size_t i = 0; i < sizes.size(); ++i) {
    Level l;
    l.name = "L";
    l.name += std::to_string(i);
    l.name += '-';
    l.name += SizeName(sizes[i]);
    l.capacity_bytes = sizes[i];
    double pj16 = *Table3PjPer16b(sizes[i], width_bits);
    l.read_pj = l.write_pj = pj16 * word_bits / 16.0;
    h.levels.push_back(l);
    h.name += '-';
    h.name += SizeName(sizes[i]);
  }
  Level dram;
  dram.name = "dram";
  dram.capacity_bytes = int64_t{1} << 40;
  dram.off_chip = true;
  dram.read_pj = dram.write_pj = kDramPjPer16b * word_bits / 16.0;
  h.levels.push_back(dram);
  return h;
}

std::vector<int64_t> Pow2(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t s = lo; s <= hi; s *= 2) v.push_back(s);
  return v;
}

}  // namespace

std::vector<Hierarchy> CodesignCandidates(int64_t budget, int width_bits, int word_bits, double mac_pj) {
  std::vector<Hierarchy> out;
  for (int64_t s : Pow2(1024, budget)) out.push_back(Make({s}, width_bits, word_bits, mac_pj));
  for (int64_t r : Pow2(64, 4096))
    for (int64_t s : Pow2(8192, budget))
      if (r + s <= budget) out.push_back(Make({r, s}, width_bits, word_bits, mac_pj));
  for (int64_t r : {64, 256, 1024})
    for (int64_t m : {4096, 16384, 65536})
      for (int64_t s : Pow2(262144, budget))
        if (r + m + s <= budget) out.push_back(Make({r, m, s}, width_bits, word_bits, mac_pj));
  return out;
}

StatusOr<std::vector<DesignPoint>> CodesignSweep(const std::vector<Layer>& layers, int64_t budget, int width_bits,
                                                 int word_bits, double mac_pj, const SearchOptions& opt) {
  std::vector<DesignPoint> pts;
  for (Hierarchy& h : CodesignCandidates(budget, width_bits, word_bits, mac_pj)) {
    DesignPoint p;
    p.hierarchy = h;
    p.onchip_bytes = h.OnChipBytes();
    p.area_mm2 = SramAreaMm2(p.onchip_bytes);
    for (const Layer& l : layers) {
      SP_ASSIGN_OR_RETURN(SearchResult r, HeuristicSearch(l, h, opt));
      p.energy_pj.push_back(r.eval.total_pj);
      p.total_pj += r.eval.total_pj;
    }
    pts.push_back(std::move(p));
  }
  return pts;
}

}  // namespace sramplan::blocking
