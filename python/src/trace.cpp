// spiraltorch._core._trace: the JSONL trace writer (schema in docs/traces.md), used by
// spiraltorch.zspace_trace / trainer_trace for traces written from Python.
#include <nanobind/stl/pair.h>

#include "convert.h"
#include "spiraltorch/io/trace.h"

namespace stpy {
namespace {

// (name, number) pairs from a mapping or an iterable of pairs; None gives none.
std::vector<std::pair<std::string, double>> named_numbers(nb::handle h, const char* what) {
  std::vector<std::pair<std::string, double>> out;
  if (h.is_none()) return out;
  nb::object items = nb::hasattr(h, "items") ? h.attr("items")() : nb::borrow(h);
  for (nb::handle pair : nb::iter(items)) {
    nb::sequence seq = nb::borrow<nb::sequence>(pair);
    if (nb::len(seq) != 2) {
      throw st::ValueError(std::string("TraceWriter.write: ") + what + " must hold (name, number) pairs");
    }
    out.emplace_back(utf8_of(seq[0], "TraceWriter.write", what), nb::cast<double>(seq[1]));
  }
  return out;
}

}  // namespace

void bind_trace(nb::module_& root) {
  nb::module_ m = root.def_submodule("_trace", "JSONL traces written by trainers and sessions (docs/traces.md).");
  m.attr("SCHEMA") = st::io::kTraceSchema;
  m.attr("VERSION") = st::io::kTraceVersion;
  using W = st::io::TraceWriter;
  nb::class_<W>(m, "TraceWriter",
                "TraceWriter(path, source, *, append=False, overwrite=False): writes trace events to a JSONL file, one "
                "whole line per write (docs/traces.md). An existing file is refused unless append=True (add to it) or "
                "overwrite=True (replace it).")
      .def("__init__",
           [](W* self, nb::handle path, const std::string& source, bool append, bool overwrite) {
    new (self) W(fs_path(path), source, st::io::trace_mode(append, overwrite));
  }, nb::arg("path"), nb::arg("source"), nb::kw_only(), nb::arg("append") = false, nb::arg("overwrite") = false,
           nb::sig("def __init__(self, path: str | bytes | os.PathLike[str] | os.PathLike[bytes], source: str, *, "
                   "append: bool = False, overwrite: bool = False) -> None"))
      .def("write",
           [](W& w, const std::string& event, std::optional<int64_t> step, std::optional<int64_t> epoch,
              nb::handle metrics, nb::handle config, std::optional<std::vector<std::string>> notes,
              std::optional<double> timestamp) {
    st::io::TraceEvent e;
    e.event = event;
    e.step = step;
    e.epoch = epoch;
    e.metrics = named_numbers(metrics, "metrics");
    e.config = named_numbers(config, "config");
    if (notes) e.notes = *notes;
    if (timestamp) e.timestamp = *timestamp;
    w.write(e);
  },
           nb::arg("event"), nb::kw_only(), nb::arg("step").none() = nb::none(), nb::arg("epoch").none() = nb::none(),
           nb::arg("metrics").none() = nb::none(), nb::arg("config").none() = nb::none(),
           nb::arg("notes").none() = nb::none(), nb::arg("timestamp").none() = nb::none(),
           nb::sig("def write(self, event: str, *, step: int | None = None, epoch: int | None = None, "
                   "metrics: collections.abc.Mapping[str, float] | collections.abc.Iterable[tuple[str, float]] | None "
                   "= None, "
                   "config: collections.abc.Mapping[str, float] | collections.abc.Iterable[tuple[str, float]] | None = "
                   "None, "
                   "notes: collections.abc.Sequence[str] | None = None, timestamp: float | None = None) -> None"),
           "Writes one event; metrics and config are mappings (or iterables of (name, number) pairs); a timestamp of "
           "None stamps the current time.")
      .def_prop_ro("path", &W::path, "The trace file's path.")
      .def_prop_ro("source", &W::source, "The writer's source name, recorded in every event.")
      .def_prop_ro("events_written", &W::events_written, "Events written so far by this writer.");
}

}  // namespace stpy
