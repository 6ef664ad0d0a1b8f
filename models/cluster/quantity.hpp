#pragma once
// Kubernetes resource quantities (k8s.io/apimachinery resource.Quantity) as pod requests and
// node capacities write them: "30Gi", "500Mi", "1G", "1e3", "1500m", "0.5", "96".
//
// Grammar (source: Kubernetes API reference, "Quantity",
// https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/):
//   quantity ::= [+] number suffix;  number ::= digits | digits.digits | digits. | .digits
//   suffix   ::= "" | m | k | M | G | T | P | E          (decimal SI: 10^-3 .. 10^18)
//              | Ki | Mi | Gi | Ti | Pi | Ei             (binary SI: 2^10 .. 2^60)
//              | e N | E N                               (decimal exponent, N a signed integer)
// The arithmetic is exact (no floating point): "1.5Gi" is 1610612736 bytes, "0.1" CPU is 100m.
//
// What gpumux refuses although Kubernetes would take it (each is a typo in practice):
//   - negative quantities;
//   - memory in `m` (milli-bytes: "500m" of memory is half a byte, a well-known slip for Mi) and
//     any memory that is not a whole number of bytes (Kubernetes rounds such values up);
//   - CPU finer than 1m (Kubernetes refuses it too: "precision finer than 1m is not allowed",
//     https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/);
//   - a count (nvidia.com/gpu) that is not a whole number (extended resources must be integers,
//     same page, "Extended resources").
// Results beyond int64 are refused (checked::RangeError). Cost: O(length of text), no allocation
// beyond the error message.
#include <cstdint>
#include <string>

#include "models/config/yaml_reader.hpp"

namespace gpumux::cluster {

/// Bytes of a memory quantity ("30Gi" -> 32212254720, "1G" -> 1e9, "1e3" -> 1000, "512" -> 512),
/// or of a size as a scenario's tenants write it, read by the tenant parser
/// (units::parse_size_bytes: "80GB" -> 8e10, "2GiB" -> 2147483648, "4096B"), so that the cluster
/// and tenant sections share one grammar of sizes.
/// Throws std::invalid_argument (syntax, milli, fractional bytes) or checked::RangeError (beyond
/// int64), each with a one-line reason without location.
std::int64_t parse_memory_bytes(const std::string& text);

/// Millicores of a CPU quantity ("1500m" -> 1500, "1.5" -> 1500, "96" -> 96000, "2k" -> 2e6).
/// Throws as parse_memory_bytes (finer than 1m is refused).
std::int64_t parse_cpu_millicores(const std::string& text);

/// A whole count of an extended resource ("nvidia.com/gpu: 2", "1k" -> 1000). Throws as above
/// for fractions ("1500m", "0.5").
std::int64_t parse_resource_count(const std::string& text);

/// The same three read from a YAML field; failures become an InputError naming file, line,
/// column and key path (the reason above, and the text as written).
std::int64_t memory_bytes_of(yaml::Context& ctx, const yaml::Field& field);
std::int64_t cpu_millicores_of(yaml::Context& ctx, const yaml::Field& field);
std::int64_t resource_count_of(yaml::Context& ctx, const yaml::Field& field);

}  // namespace gpumux::cluster
