#include "sim/io/hdf5_file.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace gpumux::h5 {

void silence_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

namespace {

// H5Ewalk2 walks from the innermost frame outwards; the innermost one names the real cause
// (e.g. "unable to open file: ... errno = 2, error message = 'No such file or directory'").
herr_t take_first_description(unsigned n, const H5E_error2_t* error, void* out) {
  if (n == 0 && error->desc != nullptr) *static_cast<std::string*>(out) = error->desc;
  return 0;
}

std::runtime_error failure(std::string_view what) {
  const std::string cause = last_error();
  return std::runtime_error(cause.empty() ? std::string(what) : fmt::format("{}: {}", what, cause));
}

Handle make_property_list(hid_t cls, std::string_view what) {
  return Handle(H5Pcreate(cls), H5Pclose, what);
}

Handle scalar_space() { return Handle(H5Screate(H5S_SCALAR), H5Sclose, "creating dataspace"); }

// Attributes are replaced when they already exist, so a writer may set one twice.
void write_attribute(hid_t object, const std::string& object_path, const std::string& name,
                     hid_t type, const void* value) {
  const std::string what = fmt::format("writing attribute {}@{}", object_path, name);
  if (H5Aexists(object, name.c_str()) > 0) check(H5Adelete(object, name.c_str()), what);
  Handle space = scalar_space();
  Handle attribute(H5Acreate2(object, name.c_str(), type, space.id(), H5P_DEFAULT, H5P_DEFAULT),
                   H5Aclose, what);
  check(H5Awrite(attribute.id(), type, value), what);
}

void write_string_attribute(hid_t object, const std::string& object_path, const std::string& name,
                            std::string_view value) {
  const std::string text(value);  // NUL-terminated copy for the vlen pointer
  const char* pointer = text.c_str();
  Handle type = vlen_string_type();
  write_attribute(object, object_path, name, type.id(), &pointer);
}

std::string child_path(const std::string& parent, const std::string& name) {
  return parent == "/" ? "/" + name : parent + "/" + name;
}

}  // namespace

std::string last_error() {
  std::string description;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_first_description, &description);
  H5Eclear2(H5E_DEFAULT);
  return description;
}

void check(herr_t status, std::string_view what) {
  if (status < 0) throw failure(what);
}

Handle::Handle(hid_t id, Closer closer, std::string_view what) : id_(id), closer_(closer) {
  if (id_ < 0) throw failure(what);
}

Handle::Handle(Handle&& other) noexcept
    : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    closer_ = other.closer_;
  }
  return *this;
}

void Handle::reset() noexcept {
  if (id_ >= 0 && closer_ != nullptr) closer_(id_);
  id_ = H5I_INVALID_HID;
}

void Handle::close(std::string_view what) {
  if (id_ < 0) return;
  const herr_t status = closer_(std::exchange(id_, H5I_INVALID_HID));
  check(status, what);
}

Handle copy_type(hid_t type) { return Handle(H5Tcopy(type), H5Tclose, "copying datatype"); }

Handle vlen_string_type() {
  Handle type = copy_type(H5T_C_S1);
  check(H5Tset_size(type.id(), H5T_VARIABLE), "sizing string type");
  check(H5Tset_cset(type.id(), H5T_CSET_UTF8), "setting string encoding");
  return type;
}

Handle fixed_string_type(std::size_t length) {
  Handle type = copy_type(H5T_C_S1);
  check(H5Tset_size(type.id(), std::max<std::size_t>(length, 1)), "sizing string type");
  check(H5Tset_strpad(type.id(), H5T_STR_NULLPAD), "setting string padding");
  check(H5Tset_cset(type.id(), H5T_CSET_UTF8), "setting string encoding");
  return type;
}

Handle u8_enum_type(const std::vector<std::string>& names) {
  Handle type(H5Tenum_create(H5T_NATIVE_UINT8), H5Tclose, "creating enum type");
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto value = static_cast<std::uint8_t>(i);
    check(H5Tenum_insert(type.id(), names[i].c_str(), &value), "adding enum value " + names[i]);
  }
  return type;
}

std::size_t CompoundType::add(const std::string& name, hid_t type) {
  Handle copy = copy_type(type);
  const std::size_t size = H5Tget_size(copy.id());
  if (size == 0) throw failure("sizing column " + name);
  const std::size_t offset = size_;
  columns_.push_back(Column{name, std::move(copy), offset});
  size_ += size;
  built_ = Handle();
  return offset;
}

std::size_t CompoundType::add_fixed_string(const std::string& name, std::size_t length) {
  Handle type = fixed_string_type(length);
  return add(name, type.id());
}

hid_t CompoundType::id() const {
  if (!built_.valid()) {
    if (size_ == 0) throw std::runtime_error("compound type has no columns");
    Handle type(H5Tcreate(H5T_COMPOUND, size_), H5Tclose, "creating compound type");
    for (const Column& column : columns_) {
      check(H5Tinsert(type.id(), column.name.c_str(), column.offset, column.type.id()),
            "adding column " + column.name);
    }
    built_ = std::move(type);
  }
  return built_.id();
}

void put_string(std::byte* row, std::size_t offset, std::size_t length, std::string_view text) {
  const std::size_t n = std::min(length, text.size());
  std::memcpy(row + offset, text.data(), n);
  std::memset(row + offset + n, 0, length - n);
}

void Dataset::write_rows(const void* rows, hid_t type, std::size_t first, std::size_t count) {
  if (count == 0) return;
  const std::string what = fmt::format("writing rows {}..{} of {}", first, first + count, path_);
  Handle file_space(H5Dget_space(handle_.id()), H5Sclose, what);
  const hsize_t start[1] = {first};
  const hsize_t extent[1] = {count};
  check(H5Sselect_hyperslab(file_space.id(), H5S_SELECT_SET, start, nullptr, extent, nullptr),
        what);
  Handle memory_space(H5Screate_simple(1, extent, nullptr), H5Sclose, what);
  check(H5Dwrite(handle_.id(), type, memory_space.id(), file_space.id(), H5P_DEFAULT, rows), what);
}

void Dataset::set_attribute(const std::string& name, std::string_view value) {
  write_string_attribute(handle_.id(), path_, name, value);
}

Group Group::create_group(const std::string& name) {
  const std::string path = child_path(path_, name);
  Handle gcpl = make_property_list(H5P_GROUP_CREATE, "creating group properties");
  check(H5Pset_obj_track_times(gcpl.id(), false), "disabling time tracking");
  Handle group(H5Gcreate2(handle_.id(), name.c_str(), H5P_DEFAULT, gcpl.id(), H5P_DEFAULT),
               H5Gclose, "creating group " + path);
  return Group(std::move(group), path);
}

Group Group::open_group(const std::string& name) const {
  const std::string path = child_path(path_, name);
  return Group(
      Handle(H5Gopen2(handle_.id(), name.c_str(), H5P_DEFAULT), H5Gclose, "opening group " + path),
      path);
}

bool Group::exists(const std::string& name) const {
  const htri_t found = H5Lexists(handle_.id(), name.c_str(), H5P_DEFAULT);
  if (found < 0) H5Eclear2(H5E_DEFAULT);
  return found > 0;
}

void Group::set_attribute(const std::string& name, std::string_view value) {
  write_string_attribute(handle_.id(), path_, name, value);
}

void Group::set_attribute(const std::string& name, std::int64_t value) {
  write_attribute(handle_.id(), path_, name, H5T_NATIVE_INT64, &value);
}

void Group::set_attribute(const std::string& name, std::uint64_t value) {
  write_attribute(handle_.id(), path_, name, H5T_NATIVE_UINT64, &value);
}

void Group::set_attribute(const std::string& name, double value) {
  write_attribute(handle_.id(), path_, name, H5T_NATIVE_DOUBLE, &value);
}

void Group::write_string(const std::string& name, std::string_view value) {
  const std::string path = child_path(path_, name);
  const std::string what = "writing " + path;
  Handle type = vlen_string_type();
  Handle space = scalar_space();
  Handle dcpl = make_property_list(H5P_DATASET_CREATE, what);
  check(H5Pset_obj_track_times(dcpl.id(), false), what);
  Handle dataset(H5Dcreate2(handle_.id(), name.c_str(), type.id(), space.id(), H5P_DEFAULT,
                            dcpl.id(), H5P_DEFAULT),
                 H5Dclose, what);
  const std::string text(value);
  const char* pointer = text.c_str();
  check(H5Dwrite(dataset.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &pointer), what);
}

std::string Group::read_string(const std::string& name) const {
  const std::string path = child_path(path_, name);
  const std::string what = "reading " + path;
  Handle dataset(H5Dopen2(handle_.id(), name.c_str(), H5P_DEFAULT), H5Dclose, what);
  Handle file_type(H5Dget_type(dataset.id()), H5Tclose, what);
  if (H5Tget_class(file_type.id()) != H5T_STRING) {
    throw std::runtime_error(path + " is not a string dataset");
  }
  Handle space(H5Dget_space(dataset.id()), H5Sclose, what);
  if (H5Sget_simple_extent_npoints(space.id()) != 1) {
    throw std::runtime_error(path + " is not a scalar string");
  }
  if (H5Tis_variable_str(file_type.id()) > 0) {
    Handle memory_type = vlen_string_type();
    char* pointer = nullptr;
    check(H5Dread(dataset.id(), memory_type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &pointer), what);
    std::string text = pointer != nullptr ? std::string(pointer) : std::string();
    H5Dvlen_reclaim(memory_type.id(), space.id(), H5P_DEFAULT, &pointer);
    return text;
  }
  const std::size_t size = H5Tget_size(file_type.id());
  std::string text(size, '\0');
  check(H5Dread(dataset.id(), file_type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()), what);
  text.resize(std::strlen(text.c_str()));
  return text;
}

Dataset Group::create_table(const std::string& name, hid_t type, std::size_t rows,
                            const TableOptions& options) {
  const std::string path = child_path(path_, name);
  const std::string what = "creating " + path;
  const hsize_t dims[1] = {rows};
  const hsize_t max_dims[1] = {H5S_UNLIMITED};
  Handle space(H5Screate_simple(1, dims, max_dims), H5Sclose, what);
  Handle dcpl = make_property_list(H5P_DATASET_CREATE, what);
  // A table created empty is appended to (table_stream.hpp): it gets full-size chunks.
  const hsize_t most = std::max<std::size_t>(options.chunk_rows, 1);
  const hsize_t chunk[1] = {rows == 0 ? most : std::clamp<hsize_t>(rows, 1, most)};
  check(H5Pset_chunk(dcpl.id(), 1, chunk), what);
  if (options.shuffle) check(H5Pset_shuffle(dcpl.id()), what);
  if (options.deflate_level > 0) check(H5Pset_deflate(dcpl.id(), options.deflate_level), what);
  // Every row is written, so pre-filling chunks with the fill value would be wasted work.
  // (HDF5 refuses that for variable-length strings, which keep the default fill time.)
  const bool variable_string = H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0;
  if (!variable_string) check(H5Pset_fill_time(dcpl.id(), H5D_FILL_TIME_NEVER), what);
  check(H5Pset_obj_track_times(dcpl.id(), false), what);
  Handle dataset(
      H5Dcreate2(handle_.id(), name.c_str(), type, space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT),
      H5Dclose, what);
  return Dataset(std::move(dataset), path);
}

File File::create(const std::string& path) {
  silence_errors();
  Handle fapl = make_property_list(H5P_FILE_ACCESS, "creating file access properties");
  check(H5Pset_fclose_degree(fapl.id(), H5F_CLOSE_STRONG), "setting file close degree");
  // Lock where the file system supports it; do not fail on ones that do not (NFS, some FUSE).
  check(H5Pset_file_locking(fapl.id(), true, true), "setting file locking");
  return File(Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id()), H5Fclose,
                     "cannot create " + path),
              path);
}

File File::open_read_only(const std::string& path) {
  silence_errors();
  Handle fapl = make_property_list(H5P_FILE_ACCESS, "creating file access properties");
  check(H5Pset_fclose_degree(fapl.id(), H5F_CLOSE_STRONG), "setting file close degree");
  // Lock where the file system supports it; do not fail on ones that do not (NFS, some FUSE).
  check(H5Pset_file_locking(fapl.id(), true, true), "setting file locking");
  return File(
      Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.id()), H5Fclose, "cannot open " + path),
      path);
}

Group File::root() const {
  return Group(Handle(H5Gopen2(handle_.id(), "/", H5P_DEFAULT), H5Gclose, "opening / of " + path_),
               "/");
}

void File::close() { handle_.close("closing " + path_); }

}  // namespace gpumux::h5
