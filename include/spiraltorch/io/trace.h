#pragma once
// JSONL traces: one JSON object per line, written by trainers and sessions as they run, read by
// spiraltorch.zspace_trace / trainer_trace / zspace_atlas (schema: docs/traces.md).
//
// Every line carries
//   "schema": "spiraltorch.trace", "version": 1,
//   "event":  "run_start" | "step" | "epoch" | "eval" (free-form for other writers),
//   "source": who wrote it ("AmegagradSession", "ModuleTrainer", ...),
//   "timestamp": seconds since the Unix epoch (float),
// and, when set: "step" (int), "epoch" (int), "metrics" {name: number or null for a non-finite
// value}, "config" {name: number}, "notes" [string].
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace st::io {

inline constexpr const char* kTraceSchema = "spiraltorch.trace";
inline constexpr int64_t kTraceVersion = 1;

struct TraceEvent {
  std::string event;
  double timestamp = 0;  // 0: the writer stamps the current time
  std::optional<int64_t> step, epoch;
  std::vector<std::pair<std::string, double>> metrics;  // emission order kept
  std::vector<std::pair<std::string, double>> config;
  std::vector<std::string> notes;
};

// The event as one line of JSON (no trailing newline).
std::string trace_line(const TraceEvent& event, const std::string& source);

// What a trace writer does with a file already at its path. Create, the default, refuses it (a
// re-run with the same path must not erase the earlier trace unasked); Append adds to it;
// Overwrite replaces it.
enum class TraceMode : uint8_t { Create, Append, Overwrite };
// The mode for the flags append / overwrite (ValueError when both are set).
TraceMode trace_mode(bool append, bool overwrite);

// Appends events to a JSONL file. The constructor checks the path (its directory exists and is
// writable, and under Create no file is there yet); the first write creates the file (with O_EXCL
// under Create). Each event is one write(2) of a whole line on an O_APPEND descriptor, so a reader
// never sees half a line of a completed write and a crash loses at most the line being written.
// Not copyable; share one writer between a trainer and its caller through a shared_ptr.
class TraceWriter {
 public:
  TraceWriter(std::string path, std::string source, TraceMode mode = TraceMode::Create);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Writes one event (SpiralError naming the path when the write fails).
  void write(const TraceEvent& event);
  const std::string& path() const { return path_; }
  const std::string& source() const { return source_; }
  int64_t events_written() const { return written_; }

 private:
  std::string path_, source_;
  void open_file();
  [[noreturn]] void throw_exists(const std::string& op) const;
  int fd_ = -1;
  TraceMode mode_ = TraceMode::Create;
  int64_t written_ = 0;
};

// Reads a trace back (CheckpointError naming the path and line for a line that is not a JSON
// object of this schema, or a version newer than kTraceVersion). Blank lines are skipped.
std::vector<TraceEvent> read_trace(const std::string& path);

}  // namespace st::io
