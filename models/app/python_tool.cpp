#include "models/app/python_tool.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <system_error>

namespace gpumux {
namespace {

namespace fs = std::filesystem;

bool executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0;
}

std::string python_interpreter() {
  if (const char* env = std::getenv("GPUMUX_PYTHON"); env != nullptr && *env != '\0') return env;
#ifdef GPUMUX_PYTHON_DEFAULT
  if (executable(GPUMUX_PYTHON_DEFAULT)) return GPUMUX_PYTHON_DEFAULT;
#endif
  if (executable("/usr/bin/python3")) return "/usr/bin/python3";
  return "python3";
}

/// Folders to put in front of PYTHONPATH so `import gpumux` finds this binary's package.
std::vector<std::string> package_roots() {
  std::vector<std::string> roots;
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error) return roots;
  const fs::path dir = exe.parent_path();
  // pip install: SITE/gpumux/bin/gpumux
  if (dir.filename() == "bin" && fs::exists(dir.parent_path() / "__init__.py", error)) {
    roots.push_back(dir.parent_path().parent_path().string());
    return roots;
  }
#ifdef GPUMUX_SOURCE_DIR
  // a build tree: the sources' python/ and BUILD/python (the compiled _gpumux)
  const fs::path source = fs::path(GPUMUX_SOURCE_DIR) / "python";
  if (fs::exists(source / "gpumux" / "__init__.py", error)) roots.push_back(source.string());
#endif
  if (fs::is_directory(dir / "python" / "gpumux", error))
    roots.push_back((dir / "python").string());
  return roots;
}

// What `python3 -c` runs: imports the tool's module and checks matplotlib before handing over,
// so a missing piece (the compiled _gpumux, numpy/pandas/h5py/PyYAML, matplotlib) is one line
// naming what to build or install, exit 2, never a traceback and never exit 1 (SLO missed).
// An unexpected exception in the tool is an internal error: its traceback, then exit 3.
constexpr const char* kBootstrap = R"PY(import sys
command, module = sys.argv[1], sys.argv[2]
def fail(message):
    print("gpumux: error: " + command + ": " + message, file=sys.stderr)
    sys.exit(2)
try:
    import importlib
    tool = importlib.import_module(module)
except ImportError as e:
    text = (str(e).strip().splitlines() or [type(e).__name__])[0]
    if text.startswith("gpumux: "):
        text = text[len("gpumux: "):]
    fail(text)
try:
    import matplotlib  # noqa: F401
except ImportError:
    fail("needs matplotlib, which " + sys.executable + " does not have: install it (Debian: "
         "apt-get install python3-matplotlib, or scripts/install-deps.sh), or set GPUMUX_PYTHON "
         "to a python3 that has it")
try:
    status = tool.main(sys.argv[3:])
except KeyboardInterrupt:
    sys.exit(130)
except Exception:
    import traceback
    traceback.print_exc()
    print("gpumux: internal error: " + command + " (the traceback above)", file=sys.stderr)
    sys.exit(3)
sys.exit(status)
)PY";

}  // namespace

std::string tool_python() { return python_interpreter(); }

std::string tool_python_path() {
  std::string path;
  for (const std::string& root : package_roots()) {
    if (!path.empty()) path += ":";
    path += root;
  }
  if (const char* old = std::getenv("PYTHONPATH"); old != nullptr && *old != '\0') {
    if (!path.empty()) path += ":";
    path += old;
  }
  return path;
}

int exec_python_module(const std::string& command, const std::string& module,
                       const std::vector<std::string>& args) {
  if (const std::string path = tool_python_path(); !path.empty()) {
    ::setenv("PYTHONPATH", path.c_str(), 1);
  }
  const std::string python = python_interpreter();
  std::vector<std::string> argv_text{python, "-c", kBootstrap, command, module};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  ::execvp(python.c_str(), argv.data());
  std::cerr << "gpumux: error: " << command << ": needs python3 with matplotlib, and " << python
            << " cannot be started (" << std::strerror(errno)
            << "): install python3 (scripts/install-deps.sh) or set GPUMUX_PYTHON to one\n";
  return 2;
}

}  // namespace gpumux
