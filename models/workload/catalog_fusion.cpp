// XLA-style loop fusion of elementwise chains, row reductions as their own kernels, a softmax
// optionally one kernel (catalog_model.hpp, fuse_elementwise_chains).
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "models/workload/catalog_model.hpp"

namespace gpumux {

std::size_t fuse_elementwise_chains(std::vector<LayerWork>& layers, bool softmax_one_kernel) {
  std::vector<LayerWork> out;
  out.reserve(layers.size());
  for (const LayerWork& layer : layers) {
    const LayerWork* group = out.empty() ? nullptr : &out.back();
    // A softmax kernel of its own (TensorRT's SoftMax layer): joins no chain, is not lowered
    // into reductions, and nothing joins it.
    const bool own_softmax =
        softmax_one_kernel && layer.softmax && layer.kind == LayerWork::Kind::elementwise;
    const bool joins = !own_softmax && group != nullptr &&
                       group->kind == LayerWork::Kind::elementwise && !group->reduction_root &&
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
    } else {
      LayerWork& g = out.back();
      g.name += "+" + layer.name;
      g.flops += layer.flops;
      g.bytes = std::max(0.0, g.bytes + layer.bytes - 2 * layer.l2_input_bytes);
      g.input_bytes += std::max(0.0, layer.input_bytes - layer.l2_input_bytes);
      g.element_bytes = std::max(g.element_bytes, layer.element_bytes);
      g.epilogue_flops += layer.epilogue_flops;
    }
    if (own_softmax) {
      out.back().reduction_root = true;
      out.back().row_reductions = 0;
      continue;
    }
    if (layer.kind != LayerWork::Kind::elementwise || layer.row_reductions <= 0) continue;
    // The layer's row reductions: each its own kernel before the chain's, re-reading the
    // chain's inputs; the chain's kernel keeps the elementwise pass (and later consumers).
    LayerWork chain = std::move(out.back());
    out.pop_back();
    const double elements = static_cast<double>(chain.elements);
    for (int r = 1; r <= layer.row_reductions; ++r) {
      LayerWork reduce;
      reduce.kind = LayerWork::Kind::elementwise;
      reduce.name = layer.name + ".reduce" + std::to_string(r);
      reduce.elements = chain.elements;
      reduce.flops = std::min(elements, chain.flops);
      chain.flops -= reduce.flops;
      reduce.bytes = chain.input_bytes;
      reduce.input_bytes = chain.input_bytes;
      reduce.l2_input_bytes = std::min(chain.l2_input_bytes, chain.input_bytes);
      reduce.l2_input_producer_bytes = chain.l2_input_producer_bytes;
      reduce.element_bytes = chain.element_bytes;
      reduce.reduction_root = true;
      reduce.host_ops = 1;
      out.push_back(std::move(reduce));
    }
    chain.row_reductions = 0;
    out.push_back(std::move(chain));
  }
  const std::size_t fused = layers.size() >= out.size() ? layers.size() - out.size() : 0;
  layers = std::move(out);
  return fused;
}

}  // namespace gpumux
