// JSONL trace writer and reader (schema in include/spiraltorch/io/trace.h and docs/traces.md).
#include "spiraltorch/io/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "io_internal.h"
#include "spiraltorch/error.h"

namespace st::io {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// JSON has no NaN/Inf: a non-finite value is written as null (the reader turns it into NaN).
detail::ordered_json number(double v) { return std::isfinite(v) ? detail::ordered_json(v) : detail::ordered_json(); }

detail::ordered_json object_of(const std::vector<std::pair<std::string, double>>& values) {
  detail::ordered_json o = detail::ordered_json::object();
  for (const auto& [k, v] : values) o[k] = number(v);
  return o;
}

}  // namespace

std::string trace_line(const TraceEvent& e, const std::string& source) {
  detail::ordered_json j;
  j["schema"] = kTraceSchema;
  j["version"] = kTraceVersion;
  j["event"] = e.event;
  j["source"] = source;
  j["timestamp"] = e.timestamp > 0 ? e.timestamp : now_seconds();
  if (e.step) j["step"] = *e.step;
  if (e.epoch) j["epoch"] = *e.epoch;
  if (!e.metrics.empty()) j["metrics"] = object_of(e.metrics);
  if (!e.config.empty()) j["config"] = object_of(e.config);
  if (!e.notes.empty()) j["notes"] = e.notes;
  // Invalid UTF-8 in a note or name is replaced rather than failing a training step.
  return j.dump(-1, ' ', false, detail::ordered_json::error_handler_t::replace);
}

TraceMode trace_mode(bool append, bool overwrite) {
  if (append && overwrite) throw ValueError("TraceWriter: append=True and overwrite=True contradict each other");
  return append ? TraceMode::Append : overwrite ? TraceMode::Overwrite : TraceMode::Create;
}

TraceWriter::TraceWriter(std::string path, std::string source, TraceMode mode)
    : path_(std::move(path)), source_(std::move(source)), mode_(mode) {
  if (path_.empty()) throw ValueError("TraceWriter: the trace path is empty");
  if (source_.empty()) throw ValueError("TraceWriter: the source name is empty");
  // The file is opened by the first write, so a trainer or session whose construction fails after
  // this leaves no file behind; the checks here catch a bad path at once.
  namespace fs = std::filesystem;
  const fs::path target(path_);
  std::error_code ec;
  if (target.filename().empty() || fs::is_directory(target, ec)) {
    throw ValueError("TraceWriter: '" + path_ + "' is not a file path");
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw SpiralError("TraceWriter: cannot open '" + path_ + "': no directory '" + dir.string() + "'");
  if (::access(dir.c_str(), W_OK) != 0) {
    throw SpiralError("TraceWriter: cannot open '" + path_ + "': " + std::strerror(errno));
  }
  if (mode_ == TraceMode::Create && fs::exists(fs::symlink_status(target, ec))) throw_exists("TraceWriter");
}

void TraceWriter::throw_exists(const std::string& op) const {
  throw SpiralError(op + ": '" + path_ + "' already exists; pass append=True to add to it or overwrite=True to " +
                    "replace it (the default never erases an earlier trace)");
}

void TraceWriter::open_file() {
  const int how = mode_ == TraceMode::Create ? O_EXCL : mode_ == TraceMode::Overwrite ? O_TRUNC : 0;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | how, 0666);
  if (fd_ < 0 && errno == EEXIST) throw_exists("TraceWriter.write");
  if (fd_ < 0) throw SpiralError("TraceWriter.write: cannot open '" + path_ + "': " + std::strerror(errno));
}

TraceWriter::~TraceWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TraceWriter::write(const TraceEvent& event) {
  if (event.event.empty()) throw ValueError("TraceWriter.write: the event name is empty");
  const std::string line = trace_line(event, source_) + "\n";
  if (fd_ < 0) open_file();
  const char* p = line.data();
  size_t n = line.size();
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw SpiralError("TraceWriter.write: writing '" + path_ + "' failed: " + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
  ++written_;
}

std::vector<TraceEvent> read_trace(const std::string& path) {
  const std::string text = read_file(path, "read_trace");
  std::vector<TraceEvent> out;
  std::istringstream in(text);
  std::string line;
  int64_t lineno = 0;
  auto pairs = [](const detail::json& o) {
    std::vector<std::pair<std::string, double>> v;
    for (auto it = o.begin(); it != o.end(); ++it) {
      v.emplace_back(it.key(), it.value().is_number() ? it.value().get<double>() : NAN);
    }
    return v;
  };
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = "line " + std::to_string(lineno);
    const detail::json j = detail::parse_json(line.data(), line.data() + line.size(), "read_trace", path + ":" + where);
    if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string() || j["schema"] != kTraceSchema ||
        !j.contains("version") || !j["version"].is_number_integer() || !j.contains("event") ||
        !j["event"].is_string()) {
      detail::fail("read_trace", path, where + " is not a spiraltorch.trace event");
    }
    if (j["version"].get<int64_t>() > kTraceVersion) {
      detail::fail("read_trace", path,
                   where + " has version " + std::to_string(j["version"].get<int64_t>()) +
                       ", newer than this reader's " + std::to_string(kTraceVersion));
    }
    TraceEvent e;
    e.event = j["event"].get<std::string>();
    if (j.contains("timestamp") && j["timestamp"].is_number()) e.timestamp = j["timestamp"].get<double>();
    if (j.contains("step") && j["step"].is_number_integer()) e.step = j["step"].get<int64_t>();
    if (j.contains("epoch") && j["epoch"].is_number_integer()) e.epoch = j["epoch"].get<int64_t>();
    if (j.contains("metrics") && j["metrics"].is_object()) e.metrics = pairs(j["metrics"]);
    if (j.contains("config") && j["config"].is_object()) e.config = pairs(j["config"]);
    if (j.contains("notes") && j["notes"].is_array()) {
      for (const auto& n : j["notes"]) {
        if (n.is_string()) e.notes.push_back(n.get<std::string>());
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace st::io
