// HDF5 result files streamed during the run (`gpumux run -o`, `gpumux compare -o`):
// StreamedResultFile and StreamedCompareFile write /requests and /kernels chunk by chunk on a
// writer thread into a temporary file, then the rest of the run, then rename it into place.
// The layout is result_h5.cpp's (the same bytes as a file written from memory).
#include <memory>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/output/result_h5_tables.hpp"
#include "models/output/result_io.hpp"
#include "sim/io/hdf5_file.hpp"
#include "sim/io/output_target.hpp"
#include "sim/io/table_stream.hpp"

namespace gpumux {

using namespace result_h5;

namespace {

using Json = nlohmann::ordered_json;

// A result file being streamed: the temporary file, the writer thread and the record tables of
// the run in progress (StreamedResultFile: one run at the root; StreamedCompareFile: one run
// per /strategies/<label> group, one after the other).
struct StreamedFile {
  explicit StreamedFile(const std::string& path)
      : output(path), file(create(output)), root(file.root()) {}
  static h5::File create(AtomicOutput& output) {
    try {
      return h5::File::create(output.temp());
    } catch (const std::exception& e) {
      throw output.failure(e);
    }
  }
  // Creates GROUP's empty /requests (and /kernels) to append the run's records to.
  void open_tables(h5::Group& group, bool with_kernels) {
    requests.emplace(group, "requests", request_table.type, writer);
    annotate(requests->dataset(), request_table.type, "requests");
    if (with_kernels) {
      kernels.emplace(group, "kernels", kernel_table.type, writer);
      annotate(kernels->dataset(), kernel_table.type, "kernels");
    }
  }
  // The run's last chunks written (the writer drained: HDF5 is this thread's again); no
  // /kernels when there were no kernel records, as write_result_h5.
  void finish_tables(h5::Group& group) {
    requests->finish();
    if (kernels) kernels->finish();
    writer.drain();
    if (kernels && kernels->rows() == 0) {
      kernels.reset();
      h5::check(H5Ldelete(group.id(), "kernels", H5P_DEFAULT), "removing the empty /kernels");
    }
  }
  void close_tables() {
    requests.reset();
    kernels.reset();
  }
  // Closes the file (every group and table closed first); output.commit() then renames it.
  void close_file() {
    root = h5::Group(h5::Handle(), "/");
    file.close();
  }

  AtomicOutput output;  // declared first: removes the temporary file last
  h5::File file;
  h5::Group root;
  const RequestTable request_table;
  const KernelTable kernel_table;
  h5::BackgroundWriter writer{kStreamQueueChunks};
  std::optional<h5::TableStream> requests, kernels;
};

// A streamed file's State (its tables, its writer thread), created at `path`. Creating the tables
// can fail after the file was created: State's members then removed it, and the failure is one
// OutputError naming the file.
template <class State>
std::unique_ptr<State> open_streamed_state(const std::string& path, bool kernels) {
  try {
    return std::make_unique<State>(path, kernels);
  } catch (const OutputError&) {
    throw;
  } catch (const std::exception& e) {
    throw OutputError(fmt::format("cannot write {}: {}", path, e.what()));
  }
}

// The end of a streamed file: BODY(state) writes what is left and closes every group and table,
// then the file is closed and renamed into place. A failure anywhere stops the writer, removes
// the temporary file and is thrown as one OutputError naming the file; STATE is released either
// way (finish() runs once).
template <class State, class Body>
void write_close_commit(std::unique_ptr<State>& state, Body&& body) {
  State& s = *state;
  try {
    body(s);
    s.close_file();
  } catch (const std::exception& e) {
    OutputError error = s.output.failure(e);
    s.writer.stop();
    state.reset();
    throw error;
  }
  s.output.commit();  // OutputError; the temporary file is removed
  state.reset();
}

}  // namespace

struct StreamedResultFile::State : StreamedFile {
  State(const std::string& path, bool with_kernels) : StreamedFile(path) {
    open_tables(root, with_kernels);
  }
};

StreamedResultFile::StreamedResultFile(const std::string& path, bool kernels)
    : state_(open_streamed_state<State>(path, kernels)), kernels_(kernels) {}

StreamedResultFile::~StreamedResultFile() {
  if (state_) state_->writer.stop();  // before the datasets its jobs write are closed
}

void StreamedResultFile::on_request_record(const RequestRecord& r) {
  state_->request_table.put(state_->requests->next_row(), r);
}

void StreamedResultFile::on_kernel_completed(const KernelRecord& k) {
  if (state_->kernels) state_->kernel_table.put(state_->kernels->next_row(), k);
}

std::uint64_t StreamedResultFile::requests_written() const { return state_->requests->rows(); }

void StreamedResultFile::finish(const RunResult& result) {
  if (!state_) throw std::logic_error("StreamedResultFile::finish called twice");
  write_close_commit(state_, [&](State& s) {
    s.finish_tables(s.root);
    write_root_attributes(s.root, result);
    write_run(s.root, result, true, true);
    s.close_tables();
  });
}

struct StreamedCompareFile::State : StreamedFile {
  State(const std::string& path, bool kernels)
      : StreamedFile(path), with_kernels(kernels), strategies(root.create_group("strategies")) {}
  // After a write error: no more writing; finish() throws ERROR.
  void fail(const std::exception& e) {
    if (error) return;
    error.emplace(output.failure(e));  // removes the temporary file
    writer.stop();
    close_tables();
    run.reset();
  }

  bool with_kernels;
  h5::Group strategies;
  std::optional<h5::Group> run;     // the group of the run in progress
  std::vector<std::string> labels;  // of the runs begun
  std::set<std::string> used;       // group names taken
  std::uint64_t last_rows = 0;      // request rows of the last finished run
  std::optional<OutputError> error;
};

StreamedCompareFile::StreamedCompareFile(const std::string& path, bool kernels)
    : state_(open_streamed_state<State>(path, kernels)), kernels_(kernels) {}

StreamedCompareFile::~StreamedCompareFile() {
  if (state_) state_->writer.stop();  // before the datasets its jobs write are closed
}

void StreamedCompareFile::begin_run(const std::string& label) {
  State& s = *state_;
  if (s.run) throw std::logic_error("StreamedCompareFile::begin_run: the last run has not ended");
  s.labels.push_back(label.empty() ? fmt::format("run{}", s.labels.size() + 1) : label);
  if (s.error) return;
  try {
    s.run.emplace(s.strategies.create_group(encode_name(s.labels.back(), s.used)));
    s.open_tables(*s.run, s.with_kernels);
  } catch (const std::exception& e) {
    s.fail(e);
  }
}

void StreamedCompareFile::on_request_record(const RequestRecord& r) {
  if (state_->requests) state_->request_table.put(state_->requests->next_row(), r);
}

void StreamedCompareFile::on_kernel_completed(const KernelRecord& k) {
  if (state_->kernels) state_->kernel_table.put(state_->kernels->next_row(), k);
}

std::uint64_t StreamedCompareFile::requests_written() const {
  return state_->requests ? state_->requests->rows() : state_->last_rows;
}

void StreamedCompareFile::end_run(const RunResult& result) {
  State& s = *state_;
  if (s.error || !s.run) return;
  try {
    s.finish_tables(*s.run);
    s.last_rows = s.requests->rows();
    write_run_attributes(*s.run, result);
    s.run->set_attribute("strategy", s.labels.back());
    write_run(*s.run, result, true, true);
    s.close_tables();
    s.run.reset();
  } catch (const std::exception& e) {
    s.fail(e);
  }
}

void StreamedCompareFile::finish(const std::vector<RunResult>& results, bool stopped) {
  if (!state_) throw std::logic_error("StreamedCompareFile::finish called twice");
  State& s = *state_;
  if (s.run || results.size() != s.labels.size() || results.empty()) {
    throw std::logic_error(fmt::format("StreamedCompareFile::finish: {} results for {} runs{}",
                                       results.size(), s.labels.size(),
                                       s.run ? ", the last not ended" : ""));
  }
  if (s.error) {
    const OutputError error = *s.error;
    state_.reset();
    throw error;
  }
  write_close_commit(state_, [&](State& state) {
    write_root_attributes(state.root, results.front());
    // The file as a whole: interrupted when any strategy is, or when the rest never ran.
    const bool interrupted =
        stopped || std::any_of(results.begin(), results.end(),
                               [](const RunResult& r) { return r.status == "interrupted"; });
    if (interrupted) state.root.set_attribute("status", std::string("interrupted"));
    Json summaries = Json::array();
    Json labels = Json::array();
    for (std::size_t i = 0; i < results.size(); ++i) {
      summaries.push_back(summary_json(results[i]));
      labels.push_back(state.labels[i]);
    }
    state.root.set_attribute("strategies", labels.dump());
    state.root.write_string("summary", summaries.dump());
    state.strategies = h5::Group(h5::Handle(), "/strategies");
  });
}

}  // namespace gpumux
