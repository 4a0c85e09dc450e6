// spiraltorch._core.data: the native data pipeline (src/data). spiraltorch.data and
// spiraltorch.dataset are thin Python views of these classes.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/unique_ptr.h>

#include "convert.h"
#include "spiraltorch/data/loader.h"

namespace stpy {

namespace d = st::data;

namespace {

// Holds the loader an epoch came from so its dataset outlives the iterator.
struct PyEpoch {
  std::unique_ptr<d::EpochIterator> it;
};

nb::tuple as_tuple(std::vector<Tensor>&& tensors) {
  nb::list out;
  for (Tensor& t : tensors) out.append(nb::cast(std::move(t)));
  return nb::tuple(out);
}

}  // namespace

void bind_data(nb::module_& root) {
  nb::module_ m =
      root.def_submodule("data", "The native data pipeline: datasets of tensors, shuffle, batching, prefetch.");

  nb::class_<d::TensorDataset>(m, "TensorDataset",
                               "Tensors whose rows along dim 0 form the samples; with offsets, sample i of field f is "
                               "the row segment offsets[f][i]:offsets[f][i+1].")
      .def("__init__",
           [](d::TensorDataset* self, std::vector<Tensor> fields,
              std::optional<std::vector<std::vector<int64_t>>> offsets) {
    if (offsets)
      new (self) d::TensorDataset(std::move(fields), std::move(*offsets));
    else
      new (self) d::TensorDataset(std::move(fields));
  },
           nb::arg("tensors"), nb::arg("offsets") = nb::none(),
           "A dataset of `tensors` (the fields); without offsets every field has one row per sample along dim 0 "
           "(equal first dims), with offsets[f] (n + 1 ascending row starts) sample i of field f spans several rows.")
      .def("__len__", &d::TensorDataset::size)
      .def_prop_ro("num_fields", &d::TensorDataset::num_fields, "The number of tensors (fields) per sample.")
      .def("field", &d::TensorDataset::field, nb::arg("index"), "The stored tensor of field `index`.")
      .def("rows", &d::TensorDataset::rows, nb::arg("field"), nb::arg("sample"), "Rows sample `sample` has in `field`.")
      .def("gather",
           [](const d::TensorDataset& ds, std::vector<int64_t> samples, const std::string& device) {
    std::vector<Tensor> out;
    {
      nb::gil_scoped_release release;
      d::Batch b = d::gather(ds, samples, st::Device::parse(device));
      b.wait();
      out = std::move(b.tensors);
    }
    return as_tuple(std::move(out));
  }, nb::arg("samples"), nb::arg("device") = "cpu",
           "The rows of `samples` of every field, concatenated along dim 0 (a tuple, one tensor per field).");

  m.def("permutation",
        [](int64_t n, std::optional<uint64_t> seed, st::Generator* generator) {
    if (seed) return d::permutation(n, *seed, 0);
    return d::permutation(n, generator ? *generator : st::default_generator());
  }, nb::arg("n"), nb::kw_only(), nb::arg("seed") = nb::none(), nb::arg("generator").none() = nb::none(),
        "A random permutation of range(n) (Philox Fisher-Yates): fixed by `seed`, else drawn from `generator` "
        "(the global one when None), which then moves on.");

  m.def("distributed_shard", &d::distributed_shard, nb::arg("n"), nb::arg("rank"), nb::arg("world_size"), nb::kw_only(),
        nb::arg("shuffle"), nb::arg("seed"), nb::arg("epoch"), nb::arg("drop_last"),
        "The sample indices rank `rank` of `world_size` reads in one epoch (see DistributedSampler).");

  nb::class_<PyEpoch>(m, "EpochIterator", "One pass over a loader; prefetching runs on a C++ thread.")
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); }, nb::sig("def __iter__(self) -> EpochIterator"))
      .def("__next__",
           [](PyEpoch& e) {
    std::optional<std::vector<Tensor>> b;
    {
      nb::gil_scoped_release release;  // the producer never needs the GIL; waiting here must not hold it
      b = e.it->next();
    }
    if (!b) throw nb::stop_iteration();
    return as_tuple(std::move(*b));
  }, nb::sig("def __next__(self) -> tuple[spiraltorch._core.Tensor, ...]"),
           "The next batch: one tensor per field, rows of the batch's samples concatenated along dim 0.")
      .def("__len__", [](const PyEpoch& e) { return e.it->size(); })
      .def_prop_ro("produced", [](const PyEpoch& e) { return e.it->produced(); },
                   "Batches assembled so far (by the prefetch thread when prefetching).")
      .def("close", [](PyEpoch& e) {
    nb::gil_scoped_release release;
    e.it->close();
  }, "Stops the prefetch thread; the iterator then ends.");

  nb::class_<d::DataLoader>(m, "DataLoader",
                            "Batches of a TensorDataset: shuffle, fixed or row-budget batches, prefetch.")
      .def("__init__",
           [](d::DataLoader* self, std::shared_ptr<d::TensorDataset> ds, int64_t batch_size,
              std::optional<int64_t> max_rows, bool shuffle, bool drop_last, int64_t prefetch,
              const std::string& device) {
    d::LoaderOptions o;
    o.batching.batch_size = batch_size;
    o.batching.max_rows = max_rows;
    o.batching.drop_last = drop_last;
    o.shuffle = shuffle;
    o.prefetch = prefetch;
    o.device = st::Device::parse(device);
    new (self) d::DataLoader(std::move(ds), o);
  },
           nb::arg("dataset"), nb::kw_only(), nb::arg("batch_size") = 1, nb::arg("max_rows") = nb::none(),
           nb::arg("shuffle") = false, nb::arg("drop_last") = false, nb::arg("prefetch") = 0, nb::arg("device") = "cpu",
           "batch_size samples per batch, or (max_rows) as many samples as fit a budget of rows; drop_last drops "
           "a short final batch; prefetch > 0 assembles that many batches ahead on a C++ thread, on `device`.")
      .def("__len__", &d::DataLoader::num_batches)
      .def("epoch",
           [](const d::DataLoader& l, st::Generator* generator, std::optional<std::vector<int64_t>> order) {
    if (order) return PyEpoch{l.epoch(std::move(*order))};
    return PyEpoch{l.epoch(generator)};
  }, nb::kw_only(), nb::arg("generator").none() = nb::none(), nb::arg("order") = nb::none(),
           "An EpochIterator: the natural order, a shuffled one drawn from `generator` (the global one when None), "
           "or the given `order` of sample indices.");
}

}  // namespace stpy
