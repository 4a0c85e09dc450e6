#pragma once
// SpiralK: the small plan language that rewrites rank-k launch plans (grammar in docs/spiralk.md).
// A program is parsed once into a tree and evaluated against named variables; evaluation yields
// hard assignments (which override plan fields), soft rules (weighted hints a tuner may follow,
// reported but never applied) and, for a `unison <kind> { ... }` block, the kind it was written for.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "spiraltorch/error.h"

namespace st::spiralk {

// A parse or evaluation error at a 1-based line and column. The message reads
// `spiralk: line 3, column 7: expected ';' after the value of 'tile', got '}'`.
class SpiralKError : public ValueError {
 public:
  SpiralKError(int line, int column, const std::string& detail);
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& detail() const { return detail_; }

 private:
  int line_, column_;
  std::string detail_;
};

using Value = std::variant<double, bool, std::string>;

struct SoftRule {
  std::string field;  // a dotted name (`radix`, `maxwell.bias`); soft hints may name any namespace
  Value value;
  double weight;  // in [0, 1]
};

struct Result {
  // Canonical field name -> value, in first-assignment order (a later assignment overwrites).
  std::vector<std::pair<std::string, Value>> hard;
  std::vector<SoftRule> soft;              // the rules whose condition held, in program order
  std::optional<std::string> unison_kind;  // set when the program holds a `unison` block
  const Value* find(std::string_view field) const;
};

using Variables = std::map<std::string, Value, std::less<>>;

struct Node;  // the syntax tree, private to spiralk.cpp

class Program {
 public:
  // Parses `source`; throws SpiralKError at the first syntax error.
  static Program parse(std::string_view source);
  // Runs the program with `variables` in scope; throws SpiralKError on an unknown variable, a type
  // mismatch or a bad builtin call, naming the position.
  Result eval(const Variables& variables = {}) const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::shared_ptr<const Node> root_;
};

// The canonical name of a hard field (`wg` -> `workgroup`), or nullopt when `name` is not one.
std::optional<std::string> canonical_field(std::string_view name);
// The hard fields a program may assign, canonical names, in documentation order.
const std::vector<std::string>& hard_fields();
// Text form of a value: integers without a fraction, `true`/`false`, strings quoted.
std::string value_str(const Value& v);

}  // namespace st::spiralk
