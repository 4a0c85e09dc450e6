// einsum: parsed once, then lowered to ops that already have backwards and device
// kernels (sum, permute, reshape, matmul, mul by an identity mask for repeated
// labels), so gradients and every device come for free.
#include <algorithm>
#include "spiraltorch/autocast.h"
#include <map>
#include <set>
#include <string>
#include <vector>

#include "spiraltorch/ops.h"

namespace st {

namespace {

// Labels are ints: letters keep their char code, ellipsis dimensions get 0..k-1.
using Labels = std::vector<int>;

struct Term {
  Tensor value;
  Labels labels;
};

std::string describe(const Labels& labels) {
  std::string s;
  for (int l : labels) s += l < 128 && l >= 'A' ? static_cast<char>(l) : '.';
  return s;
}

// Parses one side ("ij", "...k") into labels; `ellipsis_dims` replaces "...".
Labels parse_term(const std::string& text, int64_t ellipsis_dims, const std::string& equation) {
  Labels out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (text.compare(i, 3, "...") != 0) throw ValueError("einsum: malformed ellipsis in '" + equation + "'");
      for (int64_t e = 0; e < ellipsis_dims; ++e) out.push_back(static_cast<int>(e));
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      out.push_back(c);
    } else if (c != ' ') {
      throw ValueError(std::string("einsum: invalid character '") + c + "' in '" + equation + "'");
    }
  }
  return out;
}

int64_t ellipsis_count(const std::string& text) {
  const auto at = text.find("...");
  if (at == std::string::npos) return 0;
  if (text.find("...", at + 3) != std::string::npos)
    throw ValueError("einsum: more than one ellipsis in '" + text + "'");
  return 1;
}

int64_t letter_count(const std::string& text) {
  return std::count_if(text.begin(), text.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
}

// Sums `term` over the labels not in `keep`.
Term sum_out(Term term, const std::set<int>& keep) {
  Dims dims;
  Labels rest;
  for (size_t i = 0; i < term.labels.size(); ++i) {
    if (keep.count(term.labels[i])) {
      rest.push_back(term.labels[i]);
    } else {
      dims.push_back(static_cast<int64_t>(i));
    }
  }
  if (dims.empty()) return term;
  return Term{sum(term.value, dims), rest};
}

// Collapses a label repeated within one operand to its diagonal.
Term take_diagonals(Term term) {
  for (;;) {
    bool found = false;
    for (size_t p = 0; p < term.labels.size() && !found; ++p) {
      for (size_t q = p + 1; q < term.labels.size() && !found; ++q) {
        if (term.labels[p] != term.labels[q]) continue;
        found = true;
        const int64_t n = term.value.shape()[p];
        if (term.value.shape()[q] != n) {
          throw ShapeError("einsum: label '" + describe({term.labels[p]}) + "' repeated with sizes " +
                           std::to_string(n) + " and " + std::to_string(term.value.shape()[q]));
        }
        // mask[p, q] = (p == q), broadcast over the other dimensions.
        Shape mask_shape(term.labels.size(), 1);
        mask_shape[p] = n;
        mask_shape[q] = n;
        const Tensor mask =
            reshape(to_device(eye(n, std::nullopt, term.value.dtype()), term.value.device()), mask_shape);
        term.value = sum(mul(term.value, mask), {static_cast<int64_t>(q)});
        term.labels.erase(term.labels.begin() + static_cast<std::ptrdiff_t>(q));
      }
    }
    if (!found) return term;
  }
}

int64_t product(const Shape& shape, const Labels& labels, const Labels& pick) {
  int64_t n = 1;
  for (int l : pick) n *= shape[std::find(labels.begin(), labels.end(), l) - labels.begin()];
  return n;
}

Dims positions(const Labels& labels, const Labels& pick) {
  Dims out;
  for (int l : pick) out.push_back(std::find(labels.begin(), labels.end(), l) - labels.begin());
  return out;
}

// a x b summed over their shared labels not in `keep`, as one batched matmul.
Term contract(const Term& a, const Term& b, const std::set<int>& keep) {
  Labels batch, contracted, a_only, b_only;
  for (int l : a.labels) {
    const bool in_b = std::count(b.labels.begin(), b.labels.end(), l) > 0;
    if (in_b) {
      (keep.count(l) ? batch : contracted).push_back(l);
    } else {
      a_only.push_back(l);
    }
  }
  for (int l : b.labels) {
    if (!std::count(a.labels.begin(), a.labels.end(), l)) b_only.push_back(l);
  }
  auto concat = [](std::initializer_list<const Labels*> parts) {
    Labels out;
    for (const Labels* p : parts) out.insert(out.end(), p->begin(), p->end());
    return out;
  };
  const Shape& as = a.value.shape();
  const Shape& bs = b.value.shape();
  const int64_t nb = product(as, a.labels, batch), nc = product(as, a.labels, contracted);
  const int64_t na = product(as, a.labels, a_only), nbo = product(bs, b.labels, b_only);
  const Tensor a3 =
      reshape(permute(a.value, positions(a.labels, concat({&batch, &a_only, &contracted}))), {nb, na, nc});
  const Tensor b3 =
      reshape(permute(b.value, positions(b.labels, concat({&batch, &contracted, &b_only}))), {nb, nc, nbo});
  const Labels out_labels = concat({&batch, &a_only, &b_only});
  Shape out_shape;
  for (int l : batch) out_shape.push_back(as[positions(a.labels, {l})[0]]);
  for (int l : a_only) out_shape.push_back(as[positions(a.labels, {l})[0]]);
  for (int l : b_only) out_shape.push_back(bs[positions(b.labels, {l})[0]]);
  return Term{reshape(matmul(a3, b3), out_shape), out_labels};
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands_in) {
  if (operands_in.empty()) throw ValueError("einsum: needs at least one operand");
  std::vector<Tensor> operands;  // autocast's lower-precision list
  for (const Tensor& t : operands_in) operands.push_back(autocast::to_lower(t));
  const auto arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> inputs;
  for (size_t start = 0;;) {
    const auto comma = lhs.find(',', start);
    inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (inputs.size() != operands.size()) {
    throw ValueError("einsum: '" + equation + "' names " + std::to_string(inputs.size()) + " operands, got " +
                     std::to_string(operands.size()));
  }
  // The ellipsis covers the broadcast of every operand's unnamed leading dimensions.
  int64_t ellipsis_dims = 0;
  std::vector<int64_t> own_ellipsis(operands.size(), 0);
  for (size_t i = 0; i < operands.size(); ++i) {
    const int64_t named = letter_count(inputs[i]);
    const int64_t rank = operands[i].dim();
    if (ellipsis_count(inputs[i])) {
      if (rank < named) {
        throw ShapeError("einsum: operand " + std::to_string(i) + " has " + std::to_string(rank) + " dimensions but '" +
                         inputs[i] + "' names " + std::to_string(named));
      }
      own_ellipsis[i] = rank - named;
      ellipsis_dims = std::max(ellipsis_dims, own_ellipsis[i]);
    } else if (rank != named) {
      throw ShapeError("einsum: operand " + std::to_string(i) + " has " + std::to_string(rank) + " dimensions but '" +
                       inputs[i] + "' names " + std::to_string(named));
    }
  }
  std::vector<Term> terms;
  std::map<int, int64_t> sizes;
  std::map<int, int> uses;  // occurrences in the equation, for the implicit output
  for (size_t i = 0; i < operands.size(); ++i) {
    Term t{operands[i], {}};
    // An operand with fewer ellipsis dimensions has the trailing ones (broadcasting
    // aligns right); the leading ones are labels it lacks.
    Labels labels = parse_term(inputs[i], own_ellipsis[i], equation);
    for (int& l : labels) {
      if (l < ellipsis_dims) l += static_cast<int>(ellipsis_dims - own_ellipsis[i]);
    }
    for (int l : labels) ++uses[l];
    t.labels = labels;
    t = take_diagonals(t);
    for (size_t d = 0; d < t.labels.size(); ++d) {
      const int64_t n = t.value.shape()[d];
      auto [it, fresh] = sizes.emplace(t.labels[d], n);
      if (!fresh && it->second != n) {
        if (it->second == 1) {
          it->second = n;
        } else if (n != 1) {
          throw ShapeError("einsum: label '" + describe({t.labels[d]}) + "' has size " + std::to_string(it->second) +
                           " in one operand and " + std::to_string(n) + " in operand " + std::to_string(i));
        }
      }
    }
    terms.push_back(std::move(t));
  }
  // Output labels: as written, or (implicit form) the ellipsis then letters used once, sorted.
  Labels output;
  if (arrow != std::string::npos) {
    const std::string rhs = equation.substr(arrow + 2);
    output = parse_term(rhs, ellipsis_count(rhs) ? ellipsis_dims : 0, equation);
    std::set<int> seen;
    for (int l : output) {
      if (!seen.insert(l).second)
        throw ValueError("einsum: output label '" + describe({l}) + "' repeated in '" + equation + "'");
      if (!sizes.count(l))
        throw ValueError("einsum: output label '" + describe({l}) + "' appears in no input of '" + equation + "'");
    }
  } else {
    for (int64_t e = 0; e < ellipsis_dims; ++e) output.push_back(static_cast<int>(e));
    for (const auto& [l, c] : uses) {
      if (l >= 128 || l < 'A') continue;
      if (c == 1) output.push_back(l);
    }
  }
  // Size-1 dimensions broadcast against the label's size elsewhere.
  for (Term& t : terms) {
    Shape target = t.value.shape();
    bool grow = false;
    for (size_t d = 0; d < t.labels.size(); ++d) {
      if (target[d] != sizes[t.labels[d]]) {
        target[d] = sizes[t.labels[d]];
        grow = true;
      }
    }
    if (grow) t.value = expand(t.value, target);
  }
  const std::set<int> out_set(output.begin(), output.end());
  auto needed_after = [&](size_t i) {
    std::set<int> keep = out_set;
    for (size_t j = i; j < terms.size(); ++j) keep.insert(terms[j].labels.begin(), terms[j].labels.end());
    return keep;
  };
  Term acc = sum_out(terms[0], needed_after(1));
  for (size_t i = 1; i < terms.size(); ++i) {
    std::set<int> keep = needed_after(i + 1);
    std::set<int> keep_b = keep;
    keep_b.insert(acc.labels.begin(), acc.labels.end());
    const Term b = sum_out(terms[i], keep_b);
    std::set<int> keep_a = keep;
    keep_a.insert(b.labels.begin(), b.labels.end());
    acc = contract(sum_out(acc, keep_a), b, keep);
  }
  acc = sum_out(acc, out_set);
  if (acc.labels.empty() && output.empty()) return acc.value;
  return permute(acc.value, positions(acc.labels, output));
}

}  // namespace st
