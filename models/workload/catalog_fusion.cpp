// XLA-style loop fusion of elementwise chains (catalog_model.hpp, fuse_elementwise_chains).
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "models/workload/catalog_model.hpp"

namespace gpumux {

std::size_t fuse_elementwise_chains(std::vector<LayerWork>& layers) {
  std::vector<LayerWork> out;
  out.reserve(layers.size());
  for (const LayerWork& layer : layers) {
    LayerWork* group = out.empty() ? nullptr : &out.back();
    const bool joins = group != nullptr && group->kind == LayerWork::Kind::elementwise &&
                       layer.kind == LayerWork::Kind::elementwise && layer.l2_input_bytes > 0 &&
                       layer.elements == group->elements;
    if (!joins) {
      const double producer_bytes = group != nullptr ? group->bytes : 0;
      out.push_back(layer);
      // Its input's producer is the whole fused kernel before it (its traffic).
      if (producer_bytes > 0 && layer.l2_input_bytes > 0) {
        out.back().l2_input_producer_bytes = std::max(layer.l2_input_bytes, producer_bytes);
      }
      out.back().host_ops = 1;  // one launch of the compiled executable per kernel
      continue;
    }
    group->name += "+" + layer.name;
    group->flops += layer.flops;
    group->bytes = std::max(0.0, group->bytes + layer.bytes - 2 * layer.l2_input_bytes);
    group->element_bytes = std::max(group->element_bytes, layer.element_bytes);
    group->epilogue_flops += layer.epilogue_flops;
  }
  const std::size_t fused = layers.size() - out.size();
  layers = std::move(out);
  return fused;
}

}  // namespace gpumux
