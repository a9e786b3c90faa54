#include "blocking/multicore.h"

namespace sramplan::blocking {

const char* PartitionName(Partition p) { return p == Partition::kK ? "K" : "XY"; }

StatusOr<Layer> PartitionLayer(const Layer& layer, int cores, Partition p, Dim* split) {
  SP_RETURN_IF_ERROR(ValidateLayer(layer));
  if (!layer.HasKernel())
    return InvalidArgument("layer '" + layer.name + "': multi-core partitioning models conv and FC layers (a broadcast "
                           "kernel or input); block this " + KindName(layer.kind) + " layer without --cores");
  if (cores < 1 || cores > 4096) return InvalidArgument("cores = " + std::to_string(cores) + " must be 1..4096");
  Layer sub = layer;
  sub.name = layer.name + "/" + std::to_string(cores) + PartitionName(p);
  Dim d = Dim::kK;
  if (p == Partition::kK) {
    if (layer.extent(Dim::kK) % cores != 0)
      return InvalidArgument("layer '" + layer.name + "': K = " + std::to_string(layer.extent(Dim::kK)) +
                             " is not a multiple of " + std::to_string(cores) +
                             " cores; use a core count dividing K, or XY partitioning");
  } else if (layer.extent(Dim::kY) % cores == 0) {
    d = Dim::kY;
  } else if (layer.extent(Dim::kX) % cores == 0) {
    d = Dim::kX;
  } else {
    return InvalidArgument("layer '" + layer.name + "': neither Y = " + std::to_string(layer.extent(Dim::kY)) +
                           " nor X = " + std::to_string(layer.extent(Dim::kX)) + " is a multiple of " +
                           std::to_string(cores) + " cores; use a core count dividing X or Y, or K partitioning");
  }
  sub.extent(d) /= cores;
  if (split) *split = d;
  return sub;
}

StatusOr<MulticoreResult> EvaluateMulticore(const Layer& layer, const Hierarchy& h, const BlockingString& s,
                                            const MulticoreOptions& mo) {
  SP_RETURN_IF_ERROR(ValidateHierarchy(h));
  MulticoreResult r;
  r.cores = mo.cores;
  r.partition = mo.partition;
  SP_ASSIGN_OR_RETURN(r.per_core, PartitionLayer(layer, mo.cores, mo.partition, &r.split));
  SP_RETURN_IF_ERROR(ValidateString(r.per_core, s));
  r.string = s;
  r.core = Evaluate(r.per_core, h, s);
  if (!r.core.fits)
    return OutOfMemory("layer '" + r.per_core.name + "': the string's buffers do not fit one core of '" + h.name + "'");
  r.shared = mo.partition == Partition::kK ? Operand::kInput : Operand::kKernel;
  for (const BufferUse& u : r.core.buffers)
    if (u.backing && u.operand == r.shared) r.broadcast_words = u.reads;
  const int back = h.Backing(r.shared);
  const double shared_read_pj = static_cast<double>(r.broadcast_words) * h.levels[back].read_pj;
  const double S = mo.cores;
  r.onchip_bytes = static_cast<int64_t>(mo.cores) * h.OnChipBytes();
  if (mo.cores > 1) {
    double pj16 = mo.broadcast_pj_per_16b;
    if (pj16 < 0) {
      SP_ASSIGN_OR_RETURN(pj16, Table3PjPer16b(r.onchip_bytes, mo.width_bits));
    }
    r.broadcast_pj_per_word = pj16 * h.word_bits / 16.0;
  }
  r.private_pj = S * r.core.memory_pj - (S - 1) * shared_read_pj;
  r.broadcast_pj = static_cast<double>(r.broadcast_words) * r.broadcast_pj_per_word;
  r.memory_pj = r.private_pj + r.broadcast_pj;
  r.mac_pj = static_cast<double>(layer.Macs()) * h.mac_pj;
  r.total_pj = r.memory_pj + r.mac_pj;
  return r;
}

StatusOr<MulticoreResult> MulticoreSearch(const Layer& layer, const Hierarchy& h, const MulticoreOptions& mo,
                                          const SearchOptions& opt, bool exact) {
  SP_ASSIGN_OR_RETURN(Layer sub, PartitionLayer(layer, mo.cores, mo.partition, nullptr));
  SP_ASSIGN_OR_RETURN(SearchResult res, HeuristicSearch(sub, h, opt));
  double secs = res.search_s;
  if (exact) {
    SP_ASSIGN_OR_RETURN(SearchResult ex, ExactSearch(sub, h, opt, &res.best));
    secs += ex.search_s;
    res = ex;
  }
  SP_ASSIGN_OR_RETURN(MulticoreResult r, EvaluateMulticore(layer, h, res.best, mo));
  r.search_s = secs;
  r.proved_optimal = exact && res.proved_optimal;
  return r;
}

}  // namespace sramplan::blocking
