#pragma once
// Internal to the HDF5 result writers (models/output/result_h5.cpp, the tables and whole files;
// result_h5_stream.cpp, files streamed during the run): the record tables' row layouts and the
// writers of one run's groups, attributes and column annotations. Layout: result_h5.cpp.
#include <array>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "models/run/result.hpp"
#include "sim/io/hdf5_file.hpp"

namespace gpumux::result_h5 {

template <std::size_t N>
std::vector<std::string> names_of(const std::array<const char*, N>& names) {
  return std::vector<std::string>(names.begin(), names.end());
}

// The /requests row: column offsets of the packed compound type.
struct RequestTable {
  h5::CompoundType type;
  std::size_t tenant, request_id, arrival, start, finish, status;
  RequestTable() {
    const h5::Handle status_type = h5::u8_enum_type(names_of(kRequestStatusNames));
    tenant = type.add("tenant", H5T_NATIVE_UINT32);
    request_id = type.add("request_id", H5T_NATIVE_UINT64);
    arrival = type.add("arrival_ns", H5T_NATIVE_INT64);
    start = type.add("start_ns", H5T_NATIVE_INT64);
    finish = type.add("finish_ns", H5T_NATIVE_INT64);
    status = type.add("status", status_type.id());
  }
  void put(std::byte* row, const RequestRecord& r) const {
    h5::put(row, tenant, r.tenant);
    h5::put(row, request_id, r.request_id);
    h5::put(row, arrival, r.arrival_ns);
    h5::put(row, start, r.start_ns);
    h5::put(row, finish, r.finish_ns);
    h5::put(row, status, static_cast<std::uint8_t>(r.status));
  }
};

// The /kernels row.
struct KernelTable {
  h5::CompoundType type;
  std::size_t tenant, request_id, index, device, start, finish;
  KernelTable() {
    tenant = type.add("tenant", H5T_NATIVE_UINT32);
    request_id = type.add("request_id", H5T_NATIVE_UINT64);
    index = type.add("kernel_index", H5T_NATIVE_UINT32);
    device = type.add("device", H5T_NATIVE_INT32);
    start = type.add("start_ns", H5T_NATIVE_INT64);
    finish = type.add("finish_ns", H5T_NATIVE_INT64);
  }
  void put(std::byte* row, const KernelRecord& k) const {
    h5::put(row, tenant, k.tenant);
    h5::put(row, request_id, k.request_id);
    h5::put(row, index, k.kernel_index);
    h5::put(row, device, k.device);
    h5::put(row, start, k.start_ns);
    h5::put(row, finish, k.finish_ns);
  }
};

/// `units` and `description` of every column of TABLE (column_meta, metric_table.hpp).
void annotate(h5::Dataset& dataset, const h5::CompoundType& type, const std::string& table);
/// NAME as an HDF5 link name (no '/'; "." renamed), unique among USED (added to it).
std::string encode_name(const std::string& name, std::set<std::string>& used);
/// One run's tables (and its summary string when WITH_SUMMARY) into GROUP. RECORDS_STREAMED:
/// /requests and /kernels were written during the run (StreamedResultFile, StreamedCompareFile).
void write_run(h5::Group& group, const RunResult& result, bool with_summary,
               bool records_streamed = false);
/// What a reader needs to interpret one run without its summary string.
void write_run_attributes(h5::Group& group, const RunResult& result);
/// The root's attributes: version, schema, scenario text, calibration, then the run's.
void write_root_attributes(h5::Group& root, const RunResult& result);

}  // namespace gpumux::result_h5
